package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code --connect-timeout} on every command that connects, against a server that accepts TCP
 * connections and never answers (a host too loaded to reply): the command gives up within the
 * option, and its message names the option, never a Java builder option.
 */
class ConnectTimeoutTest {
  private ServerSocket silent;
  private final List<Socket> accepted = new ArrayList<>();
  private Thread acceptor;

  @BeforeEach
  void startSilentServer() throws IOException {
    silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    acceptor = new Thread(() -> {
      try {
        while (true) {
          Socket s = silent.accept();
          synchronized (accepted) {
            accepted.add(s);
          }
        }
      } catch (IOException closed) {
        // the test is over
      }
    }, "silent-server");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  @AfterEach
  void stop() throws Exception {
    silent.close();
    synchronized (accepted) {
      for (Socket s : accepted) {
        s.close();
      }
    }
    acceptor.join(10_000);
  }

  @ParameterizedTest
  @ValueSource(strings = {"run", "locks", "history", "leader", "members", "tasks", "jobs"})
  void aServerThatNeverAnswers_failsWithinTheConnectTimeout_namingTheCliOption(String command) {
    String url = "jdbc:postgresql://127.0.0.1:" + silent.getLocalPort() + "/db";
    List<String> args = new ArrayList<>(List.of(command, "--url", url, "--connect-timeout", "1s"));
    switch (command) {
      case "run" -> args.addAll(List.of("--name", "x", "--", "true"));
      case "leader", "members" -> args.add("x");
      default -> { }
    }
    long start = System.nanoTime();
    CliRun run = CliRun.of(args.toArray(String[]::new));
    long tookMillis = (System.nanoTime() - start) / 1_000_000;
    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.UNREACHABLE);
    assertThat(run.err()).as(run.describe()).contains("--connect-timeout").doesNotContain("PgLocksBuilder");
    // 1 s to connect, 2 s for the probe that asks whether it is PostgreSQL at all, and room for a
    // loaded machine; the default of 10 s would take longer than this.
    assertThat(tookMillis).as(run.describe()).isLessThan(9_000);
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "500ms", "6m"})
  void aConnectTimeoutOutOfRange_isBadUsage_namingTheRange(String value) {
    CliRun run = CliRun.of("locks", "--url", "jdbc:postgresql://127.0.0.1:1/db", "--connect-timeout", value);
    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).contains("--connect-timeout must be between 1s and 5m");
  }
}
