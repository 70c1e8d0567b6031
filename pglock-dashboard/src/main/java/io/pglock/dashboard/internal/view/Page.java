package io.pglock.dashboard.internal.view;

import io.pglock.dashboard.DashboardAction;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

/**
 * What every page's frame needs: where the dashboard is mounted, the hidden fields of its forms,
 * which actions the caller may take, and a message about the last action.
 *
 * @param title the page's title
 * @param nav the navigation entry to mark as current
 * @param base the mount point, without a trailing slash
 * @param formFields hidden fields every form carries (the anti-forgery token, the server's own)
 * @param readOnly true if the dashboard takes no actions
 * @param allowed the actions the caller may take
 * @param flash a message about the action just taken, or ""
 * @param refreshMillis how often live parts of the page are refreshed (0: never)
 * @param caller the caller's name as recorded
 */
public record Page(String title, String nav, String base, Map<String, String> formFields, boolean readOnly,
    Set<DashboardAction> allowed, String flash, int refreshMillis, String caller) {

  /** {@return a URL of the dashboard} */
  public String url(String path) {
    return base + path;
  }

  /** {@return true if the caller may take an action now} */
  public boolean can(String actionId) {
    return !readOnly && DashboardAction.ofId(actionId).map(allowed::contains).orElse(false);
  }

  /** {@return true if the caller may take any action} */
  public boolean canAny() {
    return !readOnly && !allowed.isEmpty();
  }

  /** {@return a query-string value, encoded} */
  public static String enc(String s) {
    return URLEncoder.encode(s == null ? "" : s, StandardCharsets.UTF_8);
  }

  /** {@return a copy with another title and navigation entry} */
  public Page titled(String title, String nav) {
    return new Page(title, nav, base, formFields, readOnly, allowed, flash, refreshMillis, caller);
  }
}
