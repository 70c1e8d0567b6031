package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.process.ChildJvm;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Four JVMs take permits of one semaphore with two permits, over and over, all at once. Each one,
 * while it holds a permit, counts itself in a shared row ({@code inside}, whose high-water mark
 * {@code max_inside} is raised in the same statement): the row's row lock orders the updates, so
 * {@code max_inside} is the most holders that were ever inside at once. See
 * {@code LockHolderProcess} for the child.
 */
class MultiProcessSemaphoreTest extends PgLocksTestSupport {
  private static final int PROCESSES = 4;
  private static final int PERMITS = 2;
  private static final int ROUNDS = 25;

  private final List<ChildJvm> children = new ArrayList<>();
  private final String table = "sem_" + UUID.randomUUID().toString().substring(0, 8);

  @AfterEach
  void killChildrenAndDropTable() throws Exception {
    for (ChildJvm child : children) {
      child.close();
    }
    children.clear();
    try (Connection c = db().connect(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table);
    }
  }

  @Test
  void acquire_fourProcessesTwoPermits_neverMoreThanTwoHoldersAtOnce() throws Exception {
    Connection c = connect();
    try (Statement st = c.createStatement()) {
      st.execute("CREATE TABLE " + table + " (inside int NOT NULL, max_inside int NOT NULL, rounds int NOT NULL)");
      st.execute("INSERT INTO " + table + " VALUES (0, 0, 0)");
    }
    String namespace = "test-sem-" + table.substring(4);
    for (int i = 0; i < PROCESSES; i++) {
      children.add(ChildJvm.start("sem-" + i, "semaphore", "namespace=" + namespace,
          "node=sem-holder-" + i + "-" + table.substring(4), "name=pool", "permits=" + PERMITS,
          "rounds=" + ROUNDS, "table=" + table));
    }
    for (ChildJvm child : children) {
      child.awaitLine("READY", Duration.ofSeconds(60));
    }
    for (ChildJvm child : children) {
      child.send("GO"); // all start together, so that they contend
    }

    int notHeld = 0;
    for (ChildJvm child : children) {
      String done = child.awaitLine("DONE", Duration.ofSeconds(120));
      assertThat(child.awaitExit(Duration.ofSeconds(30))).as(child.output()).isZero();
      notHeld += Integer.parseInt(done.substring(done.indexOf("notHeld=") + 8));
    }

    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT inside, max_inside, rounds FROM " + table)) {
      assertThat(rs.next()).isTrue();
      int inside = rs.getInt(1);
      int maxInside = rs.getInt(2);
      int rounds = rs.getInt(3);
      System.out.println(String.format("semaphore across %d JVMs: %d rounds, at most %d holders at once",
          PROCESSES, rounds, maxInside));
      assertThat(rounds).as("rounds done under a permit").isEqualTo(PROCESSES * ROUNDS);
      assertThat(inside).as("holders inside at the end").isZero();
      assertThat(maxInside).as("the most holders inside at once").isLessThanOrEqualTo(PERMITS);
      // Four processes that start together and each come back a few milliseconds after leaving
      // fill both permits many times over; a semaphore that let only one in would fail here.
      assertThat(maxInside).as("the most holders inside at once").isEqualTo(PERMITS);
    }
    assertThat(notHeld).as("permits found not held while inside").isZero();
    // The children's backends end a moment after the children: wait for their permits to go.
    await("no permit held after every child exited", Duration.ofSeconds(10), () -> permitHolders(c, namespace) == 0);
  }

  private static int permitHolders(Connection c, String namespace) {
    int held = 0;
    for (int i = 0; i < PERMITS; i++) {
      held += holders(c, LockKey.named(namespace, "semaphore:pool#" + i));
    }
    return held;
  }
}
