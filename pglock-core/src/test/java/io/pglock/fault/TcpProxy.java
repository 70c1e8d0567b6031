package io.pglock.fault;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy between pglock and PostgreSQL that a test controls: it can freeze traffic (bytes stop
 * flowing both ways and new connections are accepted but never answered: a silent partition), thaw
 * it, and cut it (every connection closed, new ones refused: the server is gone, as in a restart).
 * Listens on 127.0.0.1 on a free port.
 */
public final class TcpProxy implements AutoCloseable {
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final Object gate = new Object();
  private volatile ServerSocket server;
  private volatile int port;
  private volatile boolean frozen;
  private volatile boolean closed;

  public TcpProxy(String targetHost, int targetPort) throws IOException {
    this.target = new InetSocketAddress(targetHost, targetPort);
    listen(0);
  }

  /** The port pglock should connect to. */
  public int port() {
    return port;
  }

  /** A JDBC URL through this proxy to the target's database. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
  }

  /** Stops every byte in both directions, and leaves new connections unanswered. */
  public void freeze() {
    frozen = true;
  }

  /** Lets traffic flow again. */
  public void thaw() {
    synchronized (gate) {
      frozen = false;
      gate.notifyAll();
    }
  }

  /** Closes every connection and refuses new ones until {@link #restore()}. */
  public void cut() throws IOException {
    ServerSocket s = server;
    server = null;
    if (s != null) {
      s.close();
    }
    for (Socket socket : sockets) {
      closeQuietly(socket);
    }
    sockets.clear();
  }

  /** Accepts connections again, on the same port. */
  public void restore() throws IOException {
    listen(port);
  }

  private void listen(int onPort) throws IOException {
    ServerSocket s = new ServerSocket();
    s.setReuseAddress(true);
    s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), onPort));
    port = s.getLocalPort();
    server = s;
    Thread acceptor = new Thread(() -> accept(s), "tcp-proxy-accept-" + port);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private void accept(ServerSocket s) {
    while (!closed && !s.isClosed()) {
      try {
        Socket client = s.accept();
        sockets.add(client);
        Thread t = new Thread(() -> connect(client), "tcp-proxy-conn-" + port);
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void connect(Socket client) {
    try {
      awaitThaw();
      Socket upstream = new Socket();
      upstream.connect(target, 5_000);
      sockets.add(upstream);
      pump(client, upstream);
      pump(upstream, client);
    } catch (IOException | InterruptedException e) {
      closeQuietly(client);
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[16 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int n;
        while ((n = in.read(buf)) >= 0) {
          awaitThaw(); // frozen: what was read is held back until thawed
          out.write(buf, 0, n);
          out.flush();
        }
      } catch (IOException | InterruptedException e) {
        // one side closed
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }, "tcp-proxy-pump-" + port);
    t.setDaemon(true);
    t.start();
  }

  private void awaitThaw() throws InterruptedException {
    synchronized (gate) {
      while (frozen && !closed) {
        gate.wait();
      }
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    thaw();
    cut();
  }
}
