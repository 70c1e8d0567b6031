package io.pglock.spring.dashboard;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;
import java.util.function.Function;
import org.springframework.security.web.csrf.CsrfToken;

/**
 * The hidden form field of Spring Security's anti-forgery token, for
 * {@link io.pglock.dashboard.DashboardServlet#DashboardServlet(io.pglock.dashboard.Dashboard, Function)}:
 * with it the dashboard's forms carry Spring's {@code _csrf} beside the dashboard's own token, so
 * their POSTs pass Spring Security's {@code CsrfFilter} as well as the dashboard's own check. The
 * starter gives it to the servlet it registers when Spring Security is on the class path; an
 * application that registers a {@code DashboardServlet} itself passes it the same way.
 *
 * <p>It reads the token the {@code CsrfFilter} put in the request's attributes, before the page is
 * written: reading a deferred token loads it, and saves a new one (in the session, or the cookie
 * of a cookie repository) while the response can still carry its headers. A request the filter did
 * not see, or for which CSRF protection is off, gets no field.
 */
public final class SpringSecurityCsrfFields implements Function<HttpServletRequest, Map<String, String>> {

  /** Creates the function; it holds nothing. */
  public SpringSecurityCsrfFields() {}

  /**
   * {@return Spring Security's token as a form field (its parameter name, usually {@code _csrf},
   * to its value), or no field when the request has no token}
   *
   * @param request the request whose page is being written
   */
  @Override
  public Map<String, String> apply(HttpServletRequest request) {
    if (request.getAttribute(CsrfToken.class.getName()) instanceof CsrfToken token) {
      String value = token.getToken();
      if (value != null && token.getParameterName() != null) {
        return Map.of(token.getParameterName(), value);
      }
    }
    return Map.of();
  }
}
