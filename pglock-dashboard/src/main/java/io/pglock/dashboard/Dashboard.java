package io.pglock.dashboard;

import com.sun.net.httpserver.HttpHandler;
import io.pglock.dashboard.internal.Router;
import io.pglock.dashboard.internal.Settings;
import io.pglock.dashboard.internal.http.Exchange;
import io.pglock.dashboard.internal.http.JdkExchange;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * pglock's web dashboard: overview, locks held and awaited, lock history, elections and ownership,
 * scheduled tasks, queues and jobs, and the actions an operator takes on tasks and jobs.
 *
 * <p>Mount it where your service serves HTTP: {@link #httpHandler()} for a JDK {@code HttpServer},
 * {@link DashboardServlet} for a servlet container (Spring Boot's starter does that), or
 * {@link #serve(InetSocketAddress)} for a server of its own. It is thread-safe and holds no
 * connection between requests; each request borrows one connection from the {@code DataSource}.
 *
 * <p>Bounds: once it has its connection (the data source's own connect and pool timeouts bound
 * that), a page answers within the query timeout ({@link DashboardBuilder#queryTimeout}, 5 s by
 * default) plus 1 s: its statements share that budget and the server cancels one that overruns.
 * An action answers within six query timeouts plus 10 s (one job or task call in flight, bounded
 * by {@code JobAdmin}'s and {@code TaskAdmin}'s 10-second network timeout); a bulk action stops at
 * that budget and says how many jobs it changed.
 *
 * <pre>{@code
 * Dashboard dashboard = Dashboard.builder(dataSource).authorizer(DashboardAuthorizer.role("ops")).build();
 * server.createContext("/pglock", dashboard.httpHandler());
 * }</pre>
 */
public final class Dashboard {
  private final Settings settings;
  private final Router router;

  Dashboard(Settings settings) {
    this.settings = settings;
    this.router = new Router(settings);
  }

  /**
   * {@return a builder for a dashboard over pglock's schema in a database}
   *
   * @param dataSource a data source to the database (a pool; the dashboard borrows one connection per request)
   */
  public static DashboardBuilder builder(DataSource dataSource) {
    return new DashboardBuilder(Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * {@return a handler for a JDK {@code HttpServer} context: the context's path is the dashboard's
   * mount point}
   */
  public HttpHandler httpHandler() {
    return exchange -> {
      try (exchange) {
        router.handle(new JdkExchange(exchange));
      }
    };
  }

  /**
   * Serves the dashboard on a server of its own at the root path, until it is closed.
   *
   * @param address where to listen; give {@code 127.0.0.1} to stay reachable from this machine only
   * @return the running server
   * @throws IOException if the address cannot be bound
   */
  public DashboardServer serve(InetSocketAddress address) throws IOException {
    return DashboardServer.start(this, address);
  }

  /** {@return true if the dashboard shows and takes no actions} */
  public boolean readOnly() {
    return settings.readOnly();
  }

  /** {@return the schema it reads} */
  public String schema() {
    return settings.schema();
  }

  void handle(Exchange exchange) throws IOException {
    router.handle(exchange);
  }

  @Override
  public String toString() {
    return "Dashboard[schema=" + settings.schema() + ", readOnly=" + settings.readOnly() + "]";
  }
}
