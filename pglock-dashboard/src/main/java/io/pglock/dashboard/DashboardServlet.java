package io.pglock.dashboard;

import io.pglock.dashboard.internal.http.Exchange;
import io.pglock.dashboard.internal.http.Params;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.Serial;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The dashboard as a Jakarta servlet: map it to a path with a wildcard ({@code /pglock/*}); the
 * servlet's path is the dashboard's mount point. The caller is the container's authenticated user
 * ({@code getRemoteUser}, {@code isUserInRole}), so Spring Security or the container's own
 * security guards the pages, and the authorizer sees who asks.
 */
public class DashboardServlet extends HttpServlet {
  @Serial
  private static final long serialVersionUID = 1L;
  private final transient Dashboard dashboard;
  private final transient Function<HttpServletRequest, Map<String, String>> formFields;

  /**
   * A servlet for a dashboard.
   *
   * @param dashboard the dashboard
   */
  public DashboardServlet(Dashboard dashboard) {
    this(dashboard, r -> Map.of());
  }

  /**
   * A servlet for a dashboard whose forms carry extra hidden fields: the token of a CSRF filter in
   * front of it (Spring Security's {@code _csrf}), so that its POSTs pass that filter too.
   *
   * @param dashboard the dashboard
   * @param formFields the hidden fields for a request
   */
  public DashboardServlet(Dashboard dashboard, Function<HttpServletRequest, Map<String, String>> formFields) {
    this.dashboard = Objects.requireNonNull(dashboard, "dashboard");
    this.formFields = Objects.requireNonNull(formFields, "formFields");
  }

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
    dashboard.handle(new ServletExchange(request, response, formFields));
  }

  private record ServletExchange(HttpServletRequest request, HttpServletResponse response,
      Function<HttpServletRequest, Map<String, String>> formFields) implements Exchange {
    @Override
    public String method() {
      return request.getMethod();
    }

    @Override
    public String path() {
      String info = request.getPathInfo();
      return info == null || info.isEmpty() ? "/" : info;
    }

    @Override
    public String basePath() {
      return request.getContextPath() + request.getServletPath();
    }

    @Override
    public Params query() {
      return Params.parse(request.getQueryString());
    }

    @Override
    public Params form() {
      return Params.of(request.getParameterMap());
    }

    @Override
    public Optional<String> header(String name) {
      return Optional.ofNullable(request.getHeader(name));
    }

    @Override
    public DashboardCaller caller() {
      return new DashboardCaller() {
        @Override
        public Optional<String> name() {
          return Optional.ofNullable(request.getRemoteUser());
        }

        @Override
        public boolean isInRole(String role) {
          return request.isUserInRole(role);
        }
      };
    }

    @Override
    public Map<String, String> extraFormFields() {
      return formFields.apply(request);
    }

    @Override
    public boolean secure() {
      return request.isSecure();
    }

    @Override
    public void respond(int status, Map<String, String> headers, byte[] body) throws IOException {
      response.setStatus(status);
      headers.forEach((name, value) -> {
        // added, not set: a filter in front (Spring Security saving its CSRF token in a new
        // session) may have set a cookie of its own on this response already
        if (name.equalsIgnoreCase("Set-Cookie")) {
          response.addHeader(name, value);
        } else {
          response.setHeader(name, value);
        }
      });
      if (body.length > 0 && !request.getMethod().equals("HEAD")) {
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
      }
    }
  }
}
