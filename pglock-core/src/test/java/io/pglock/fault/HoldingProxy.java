package io.pglock.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of PostgreSQL that holds one statement in flight, to widen a race
 * deterministically. On the first connection whose client bytes contain the marker (a statement's
 * text), it holds either that request before the server sees it ({@link Hold#REQUEST}) or the
 * server's reply to it before the client sees it ({@link Hold#REPLY}), until {@link #release()}.
 * Other connections (such as cancel requests, which pgjdbc sends to the same host and port) pass
 * freely; the proxy counts the cancel requests the server has finished with (closed). Unlike
 * {@link TcpProxy}, which freezes all traffic, it stops one statement and nothing else.
 */
public final class HoldingProxy implements AutoCloseable {
  /** What to hold once the marker is seen. */
  public enum Hold { REQUEST, REPLY }

  private static final int CANCEL_REQUEST_CODE = 80877102;

  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  private final byte[] marker;
  private final Hold hold;
  private final CountDownLatch markerSeen = new CountDownLatch(1);
  private final CountDownLatch released = new CountDownLatch(1);
  private final AtomicInteger cancelsDone = new AtomicInteger();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean holding; // set once the marker connection is chosen
  private volatile boolean closed;

  public HoldingProxy(String targetHost, int targetPort, String marker, Hold hold) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.marker = marker.getBytes(StandardCharsets.UTF_8);
    this.hold = hold;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    daemon("proxy-accept", this::acceptLoop);
  }

  /** The local port to connect to instead of the server's. */
  public int port() {
    return server.getLocalPort();
  }

  /** Whether a request with the marker has arrived (and is now held, or its reply will be). */
  public boolean markerSeen() {
    return markerSeen.getCount() == 0;
  }

  /** How many cancel requests went through and were closed by the server (so it acted on them). */
  public int cancelsDone() {
    return cancelsDone.get();
  }

  /** Lets the held bytes, and everything after them, through. */
  public void release() {
    released.countDown();
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(targetHost, targetPort);
        sockets.add(client);
        sockets.add(upstream);
        Connection conn = new Connection();
        daemon("proxy-up", () -> pump(client, upstream, conn, true));
        daemon("proxy-down", () -> pump(upstream, client, conn, false));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  /** Per proxied connection. */
  private static final class Connection {
    volatile boolean cancel;
    volatile boolean marked;
  }

  private void pump(Socket from, Socket to, Connection conn, boolean up) {
    byte[] buf = new byte[65536];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buf)) > 0) {
        if (up) {
          // pgjdbc may send an SSL request first, so look at every packet, not just the first
          if (n >= 8 && readInt(buf, 0) == 16 && readInt(buf, 4) == CANCEL_REQUEST_CODE) {
            conn.cancel = true;
          }
          if (!holding && contains(buf, n, marker)) {
            holding = true;
            conn.marked = true;
            markerSeen.countDown();
            if (hold == Hold.REQUEST) {
              awaitRelease();
            }
          }
        } else if (conn.marked && hold == Hold.REPLY) {
          awaitRelease();
        }
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side closed: close both below
    } finally {
      if (!up && conn.cancel) {
        cancelsDone.incrementAndGet(); // the server closed the cancel connection: it has acted on it
      }
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private void awaitRelease() throws IOException {
    try {
      if (!released.await(60, TimeUnit.SECONDS)) {
        throw new IOException("the test never released the proxy");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  private static int readInt(byte[] b, int at) {
    return ((b[at] & 0xFF) << 24) | ((b[at + 1] & 0xFF) << 16) | ((b[at + 2] & 0xFF) << 8) | (b[at + 3] & 0xFF);
  }

  private static boolean contains(byte[] buf, int n, byte[] what) {
    outer:
    for (int i = 0; i + what.length <= n; i++) {
      for (int j = 0; j < what.length; j++) {
        if (buf[i + j] != what[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  private static void daemon(String name, Runnable r) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  @Override
  public void close() {
    closed = true;
    release();
    try {
      server.close();
    } catch (IOException e) {
      // closing anyway
    }
    for (Socket s : sockets) {
      closeQuietly(s);
    }
  }
}
