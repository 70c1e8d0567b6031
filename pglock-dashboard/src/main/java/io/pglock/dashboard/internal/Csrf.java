package io.pglock.dashboard.internal;

import io.pglock.dashboard.internal.http.Exchange;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Protection against cross-site requests: a signed double-submit cookie. The browser gets a random
 * value in an HttpOnly, SameSite=Strict cookie; every form carries the value's HMAC under the
 * dashboard's secret. A POST is accepted only with both, matching: another site can neither read
 * the cookie nor compute the HMAC, and a cookie planted from a sibling domain has no valid token.
 * Browsers' {@code Sec-Fetch-Site} header, where sent, must also say the request came from the
 * dashboard's own origin.
 */
public final class Csrf {
  /** The cookie's name. */
  public static final String COOKIE = "pglock_csrf";
  /** The form field's name. */
  public static final String FIELD = "_pglock_csrf";
  private static final SecureRandom RANDOM = new SecureRandom();
  private final byte[] secret;

  /** A protection with a secret (every dashboard instance behind one URL must share it). */
  public Csrf(byte[] secret) {
    this.secret = secret.clone();
  }

  /** {@return 32 random bytes} */
  public static byte[] randomSecret() {
    byte[] b = new byte[32];
    RANDOM.nextBytes(b);
    return b;
  }

  /** {@return the browser's cookie value, if it sent one that looks like ours} */
  public static Optional<String> cookie(Exchange ex) {
    for (String header : ex.header("Cookie").stream().toList()) {
      for (String part : header.split(";")) {
        String p = part.strip();
        if (p.startsWith(COOKIE + "=")) {
          String v = p.substring(COOKIE.length() + 1);
          if (v.matches("[A-Za-z0-9_-]{43}")) {
            return Optional.of(v);
          }
        }
      }
    }
    return Optional.empty();
  }

  /** {@return a new cookie value} */
  public static String newCookieValue() {
    byte[] b = new byte[32];
    RANDOM.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  /** {@return the Set-Cookie header for a value} */
  public static String setCookie(String value, String path, boolean secure) {
    return COOKIE + "=" + value + "; Path=" + (path.isEmpty() ? "/" : path) + "; HttpOnly; SameSite=Strict"
        + (secure ? "; Secure" : "");
  }

  /** {@return the form token for a cookie value} */
  public String token(String cookieValue) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      return Base64.getUrlEncoder().withoutPadding()
          .encodeToString(mac.doFinal(cookieValue.getBytes(StandardCharsets.US_ASCII)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
    }
  }

  /** {@return why a POST is refused, or empty if it carries a valid token from the dashboard's origin} */
  public Optional<String> check(Exchange ex, Optional<String> formToken) {
    Optional<String> site = ex.header("Sec-Fetch-Site");
    if (site.isPresent() && !site.get().equals("same-origin") && !site.get().equals("none")) {
      return Optional.of("the request came from another site (Sec-Fetch-Site: " + site.get() + ")");
    }
    Optional<String> cookie = cookie(ex);
    if (cookie.isEmpty()) {
      return Optional.of("the anti-forgery cookie is missing: reload the page and try again");
    }
    if (formToken.isEmpty()) {
      return Optional.of("the anti-forgery token is missing from the form: reload the page and try again");
    }
    boolean ok = MessageDigest.isEqual(token(cookie.get()).getBytes(StandardCharsets.US_ASCII),
        formToken.get().getBytes(StandardCharsets.US_ASCII));
    return ok ? Optional.empty()
        : Optional.of("the anti-forgery token does not match: reload the page and try again (behind a load"
            + " balancer, give every dashboard the same secret: DashboardBuilder.csrfSecret)");
  }
}
