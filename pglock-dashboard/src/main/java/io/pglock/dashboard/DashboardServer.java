package io.pglock.dashboard;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/** A dashboard on a JDK {@code HttpServer} of its own, from {@link Dashboard#serve}. Close it to stop. */
public final class DashboardServer implements AutoCloseable {
  private static final String NODELAY = "sun.net.httpserver.nodelay";
  private final HttpServer server;
  private final ExecutorService executor;

  private DashboardServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  static DashboardServer start(Dashboard dashboard, InetSocketAddress address) throws IOException {
    // The JDK's server leaves Nagle's algorithm on unless told: each response then waits for the
    // browser's delayed ACK, about 40 ms a request. The property is read once, when the JDK's
    // server classes load, so it only helps if no HttpServer was made before this one.
    if (System.getProperty(NODELAY) == null) {
      System.setProperty(NODELAY, "true");
    }
    HttpServer server = HttpServer.create(address, 64);
    AtomicInteger n = new AtomicInteger();
    // A few threads: each request holds one database connection for its queries.
    ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "pglock-dashboard-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/", dashboard.httpHandler());
    server.start();
    return new DashboardServer(server, executor);
  }

  /** {@return the address it listens on (with the port chosen when 0 was asked)} */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** {@return the dashboard's URL} */
  public URI uri() {
    InetSocketAddress a = address();
    String host = a.getAddress().isAnyLocalAddress() ? "localhost" : a.getAddress().getHostAddress();
    if (host.contains(":")) {
      host = "[" + host + "]";
    }
    return URI.create("http://" + host + ":" + a.getPort() + "/");
  }

  /** Stops serving: requests under way get a second to finish. */
  @Override
  public void close() {
    server.stop(1);
    executor.shutdownNow();
  }
}
