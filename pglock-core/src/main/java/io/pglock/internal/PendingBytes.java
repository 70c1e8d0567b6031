package io.pglock.internal;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.net.Socket;
import java.sql.Connection;
import javax.net.ssl.SSLSocket;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutor;
import org.postgresql.core.QueryExecutorBase;

/**
 * Tells, without reading and without blocking, whether the server has sent bytes on an idle
 * connection: the kernel's count of unread bytes ({@code FIONREAD}) on pgjdbc's socket.
 *
 * <p>Why: pgjdbc's public way to look ({@code getNotifications(1)}) waits a millisecond on the
 * socket and ends in a {@code SocketTimeoutException} each time, about 170 µs of CPU per look on a
 * small VM. Asking the kernel costs a system call. pgjdbc does not expose its socket, so it is
 * reached by reflection; where that fails (another pgjdbc version, a security manager) or where the
 * count says nothing (TLS: encrypted bytes are not messages), every look is a full one. A message
 * pgjdbc already pulled into its own buffer is invisible here, so the caller still does a full look
 * now and then.
 */
final class PendingBytes {
  private static final PendingBytes UNKNOWN = new PendingBytes(null);

  private final InputStream socketIn;

  private PendingBytes(InputStream socketIn) {
    this.socketIn = socketIn;
  }

  /** The check for this connection, or one that always answers "maybe" if the socket is out of reach. */
  static PendingBytes of(Connection c) {
    try {
      QueryExecutor qe = c.unwrap(BaseConnection.class).getQueryExecutor();
      if (!(qe instanceof QueryExecutorBase)) {
        return UNKNOWN;
      }
      Field f = QueryExecutorBase.class.getDeclaredField("pgStream");
      f.setAccessible(true);
      Socket s = ((PGStream) f.get(qe)).getSocket();
      return s instanceof SSLSocket ? UNKNOWN : new PendingBytes(s.getInputStream());
    } catch (ReflectiveOperationException | RuntimeException | IOException | java.sql.SQLException e) {
      return UNKNOWN;
    }
  }

  /** False only if the socket certainly holds no unread byte; true if it does or cannot tell. */
  boolean maybe() {
    if (socketIn == null) {
      return true;
    }
    try {
      return socketIn.available() > 0;
    } catch (IOException e) {
      return true; // the full look reports what is wrong
    }
  }
}
