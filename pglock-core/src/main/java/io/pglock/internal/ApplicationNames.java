package io.pglock.internal;

import io.pglock.PgLocksConfig;
import java.nio.charset.StandardCharsets;

/**
 * The {@code application_name} of a session: {@code pglock:<node>:<role>:<namespace>}, so that an
 * operator can tell apart the sessions of two {@code PgLocks} in one JVM, and tools can find a
 * node's sessions by the prefix {@code pglock:<node>:}.
 *
 * <p>PostgreSQL keeps 63 bytes and shows any character outside printable ASCII as {@code ?}. The
 * node (at most 40 printable ASCII characters) and the role always survive; the namespace goes last
 * and, when it does not fit, is cut and ends with {@code ~} and four hex digits of its hash, so that
 * two long namespaces with a common start still show apart.
 */
final class ApplicationNames {
  static final int MAX_BYTES = 63;

  private ApplicationNames() {}

  static String of(PgLocksConfig config, String role) {
    return of(config.nodeName(), role, config.namespace());
  }

  static String of(String node, String role, String namespace) {
    String base = "pglock:" + node + ":" + role + ":";
    String ns = printable(namespace);
    int room = MAX_BYTES - base.getBytes(StandardCharsets.UTF_8).length;
    if (ns.length() <= room) {
      return base + ns;
    }
    String tag = String.format("~%04x", namespace.hashCode() & 0xFFFF);
    return room > tag.length() ? base + ns.substring(0, room - tag.length()) + tag : base.substring(0, MAX_BYTES);
  }

  private static String printable(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      b.append(c >= 0x20 && c < 0x7f ? c : '?');
    }
    return b.toString();
  }
}
