package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A {@code jdbc:postgresql:} URL that points at a server speaking another protocol: the command
 * says it is not PostgreSQL, instead of pgjdbc's "08P01: An error occurred while setting up the SSL
 * connection". The servers here speak as MariaDB (greets first) and Redis (answers an unknown
 * request with an error line) do; {@code docs/cli.md} records the runs against the real ones.
 */
class NotPostgresTest {

  @Test
  void aServerThatGreetsFirst_likeMariaDb_isNotPostgres() throws Exception {
    try (FakeServer server = new FakeServer(false, "J\0\0\0\n5.5.5-10.11.6-MariaDB\0")) {
      CliRun run = CliRun.of("locks", "--url", server.url(), "--connect-timeout", "5s");
      assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.UNREACHABLE);
      assertThat(run.err()).as(run.describe())
          .startsWith("pglock locks: the server at 127.0.0.1:" + server.port() + " is not PostgreSQL: it spoke first")
          .contains("MariaDB");
    }
  }

  @Test
  void aServerThatAnswersWithSomethingElse_likeRedis_isNotPostgres() throws Exception {
    try (FakeServer server = new FakeServer(true, "-ERR unknown command\r\n")) {
      CliRun run = CliRun.of("jobs", "--url", server.url(), "--connect-timeout", "5s");
      assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.UNREACHABLE);
      assertThat(run.err()).as(run.describe())
          .startsWith("pglock jobs: the server at 127.0.0.1:" + server.port() + " is not PostgreSQL: it answered")
          .contains("-ERR unknown command");
    }
  }

  @Test
  void postgres_passesTheProbe() {
    java.util.Properties p = org.postgresql.Driver.parseURL(io.pglock.testing.TestDatabase.get().jdbcUrl(), null);
    String host = p.getProperty("PGHOST", "localhost").split(",")[0];
    int port = Integer.parseInt(p.getProperty("PGPORT", "5432").split(",")[0]);
    assertThat(ServerProbe.notPostgres(host, port, java.time.Duration.ofSeconds(10))).isEmpty();
  }

  /** One thread answering each connection: a greeting first, or a reply to the first bytes received. */
  private static final class FakeServer implements AutoCloseable {
    private final ServerSocket socket;
    private final Thread thread;

    FakeServer(boolean replyToRequest, String text) throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
      thread = new Thread(() -> {
        while (!socket.isClosed()) {
          try (Socket s = socket.accept()) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            if (replyToRequest) {
              in.read(new byte[64]);
            }
            out.write(bytes);
            out.flush();
            in.read(new byte[1024]); // until the client hangs up
          } catch (IOException e) {
            // the client hung up, or the test is over
          }
        }
      }, "fake-server");
      thread.setDaemon(true);
      thread.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    String url() {
      return "jdbc:postgresql://127.0.0.1:" + port() + "/db";
    }

    @Override
    public void close() throws Exception {
      socket.close();
      thread.join(10_000);
    }
  }
}
