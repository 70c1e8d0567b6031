package io.pglock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;

/**
 * Tells whether a server that pgjdbc could not talk to speaks PostgreSQL's protocol at all. pgjdbc
 * reports a MariaDB or Redis port as "SQLSTATE 08P01: An error occurred while setting up the SSL
 * connection", which sends the operator looking at certificates; this probe lets the command say
 * what it is instead.
 *
 * <p>A PostgreSQL server never speaks first, and answers the 8-byte SSLRequest packet that opens
 * every pgjdbc connection with exactly one byte: {@code S} or {@code N} (or an {@code E} error
 * message from very old servers). A server that greets first (MySQL and MariaDB do) or answers
 * with anything else is not PostgreSQL. The probe sends nothing else: no startup packet, no
 * password. Used only after a connection already failed, so a working setup never pays for it.
 */
final class ServerProbe {
  /** The SSLRequest code (1234 in the high 16 bits, 5679 in the low), after the length 8. */
  private static final byte[] SSL_REQUEST = {0, 0, 0, 8, 0x04, (byte) 0xd2, 0x16, 0x2f};
  /** How long to listen for a greeting before sending the request: MariaDB greets within a millisecond. */
  private static final Duration GREETING_WAIT = Duration.ofMillis(300);

  private ServerProbe() {}

  /**
   * Probes the first host of a {@code jdbc:postgresql:} URL.
   *
   * @param url the URL pgjdbc could not connect to
   * @param timeout the longest to wait for the TCP connection and for the answer
   * @return why the server is not PostgreSQL, or empty if it may be (or could not be probed)
   */
  static Optional<String> notPostgres(String url, Duration timeout) {
    if (url == null) {
      return Optional.empty();
    }
    Properties p = org.postgresql.Driver.parseURL(url, null);
    if (p == null) {
      return Optional.empty();
    }
    String host = p.getProperty("PGHOST", "localhost").split(",")[0];
    String port = p.getProperty("PGPORT", "5432").split(",")[0];
    try {
      return notPostgres(host, Integer.parseInt(port), timeout);
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * Probes a host and port.
   *
   * @return why the server is not PostgreSQL, or empty if it answered as PostgreSQL does, did not
   *     answer, or could not be reached (pgjdbc's own error says more then)
   */
  static Optional<String> notPostgres(String host, int port, Duration timeout) {
    String where = host + ":" + port;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      s.setSoTimeout((int) GREETING_WAIT.toMillis());
      byte[] buf = new byte[256];
      try {
        int n = in.read(buf);
        if (n > 0) {
          return Optional.of("the server at " + where + " is not PostgreSQL: it spoke first (" + shown(buf, n)
              + "), as MySQL and MariaDB do, and PostgreSQL never does; check the host and port in --url "
              + "(PostgreSQL listens on 5432 by default)");
        }
        if (n < 0) {
          return Optional.empty(); // closed at once: a proxy, or a full server; pgjdbc's error says more
        }
      } catch (SocketTimeoutException quiet) {
        // Silent, as PostgreSQL is: ask it.
      }
      out.write(SSL_REQUEST);
      out.flush();
      s.setSoTimeout((int) timeout.toMillis());
      int n;
      try {
        n = in.read(buf);
      } catch (SocketTimeoutException silent) {
        return Optional.of("the server at " + where + " is not PostgreSQL, or not answering: it did not reply to "
            + "PostgreSQL's opening request within " + DurationConverter.format(timeout) + " (Redis, for one, "
            + "waits silently); check the host and port in --url (PostgreSQL listens on 5432 by default)");
      }
      if (n <= 0) {
        return Optional.empty();
      }
      if (n == 1 && (buf[0] == 'S' || buf[0] == 'N')) {
        return Optional.empty();
      }
      if (buf[0] == 'E') {
        return Optional.empty(); // an error message: an old PostgreSQL, or one refusing us; pgjdbc says which
      }
      return Optional.of("the server at " + where + " is not PostgreSQL: it answered PostgreSQL's opening request "
          + "with " + shown(buf, n) + "; check the host and port in --url (PostgreSQL listens on 5432 by default)");
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** The first bytes, printable ones as they are and the rest as dots, quoted. */
  private static String shown(byte[] buf, int n) {
    StringBuilder sb = new StringBuilder("\"");
    String text = new String(buf, 0, Math.min(n, 40), StandardCharsets.ISO_8859_1);
    for (char c : text.toCharArray()) {
      sb.append(c >= 0x20 && c < 0x7f ? c : '.');
    }
    return sb.append(n > 40 ? "...\"" : "\"").toString();
  }
}
