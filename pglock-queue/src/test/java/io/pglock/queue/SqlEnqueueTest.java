package io.pglock.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pglock.testing.Await;
import io.pglock.testing.NoLeakedLocks;
import io.pglock.testing.SqlClientProcess;
import io.pglock.testing.SqlClientProcess.Language;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code pglock.enqueue} (schema version 13, docs/sql-api.md): the job a Java enqueue writes, checked
 * as JobRequest checks it, in the caller's transaction (a trigger's job too), and run by Java workers
 * that it wakes, also when Python and Node clients call it.
 */
@ExtendWith(NoLeakedLocks.class)
class SqlEnqueueTest {
  /** Generous: the machine may be busy. A worker polling once an hour finds a job only if woken. */
  private static final Duration WAIT = Duration.ofSeconds(60);

  private final QueueFixture f = new QueueFixture();
  private final String table = "sql_enqueue_test_" + UUID.randomUUID().toString().substring(0, 8);

  @AfterEach
  void cleanUp() throws Exception {
    try (Connection c = TestDatabase.get().connect(); Statement st = c.createStatement()) {
      // names made here from a UUID: no input in the text
      st.execute("DROP TABLE IF EXISTS public." + table);
      st.execute("DROP FUNCTION IF EXISTS public." + table + "_job()");
    }
    f.close();
  }

  @Test
  void enqueue_namedArguments_writeTheRowAJobRequestWould() throws Exception {
    try (Connection c = TestDatabase.get().connect()) {
      long id = one(c, "SELECT pglock.enqueue('send-mail', ?::jsonb, queue => ?, priority => 7, delay => '5 min',"
          + " max_attempts => 3, concurrency_key => 'customer-9')", "{\"to\": \"a@b.c\"}", f.queue);
      try (PreparedStatement ps = c.prepareStatement("SELECT kind, payload::text, queue, priority, max_attempts,"
          + " concurrency_key, unique_key, state, run_at - created_at BETWEEN interval '299 s' AND interval '301 s'"
          + " FROM pglock.job WHERE id = ?")) {
        ps.setLong(1, id);
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(List.of(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
              rs.getString(6), String.valueOf(rs.getString(7)), rs.getString(8), rs.getString(9)))
              .containsExactly("send-mail", "{\"to\": \"a@b.c\"}", f.queue, "7", "3", "customer-9", "null",
                  "available", "t");
        }
      }
      long defaults = one(c, "SELECT pglock.enqueue('plain')");
      try (PreparedStatement ps = c.prepareStatement("SELECT queue, payload::text, priority, max_attempts IS NULL,"
          + " run_at <= now() FROM pglock.job WHERE id = ?")) {
        ps.setLong(1, defaults);
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next()).isTrue();
          assertThat(List.of(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5)))
              .containsExactly(JobRequest.DEFAULT_QUEUE, "null", "0", "t", "t");
        }
        execute(c, "DELETE FROM pglock.job WHERE id = ?", defaults);
      }
    }
  }

  @Test
  void enqueue_uniqueKeyTaken_returnsTheUnfinishedJobsId_andInsertsNothing() throws Exception {
    String key = "sql-unique-" + UUID.randomUUID();
    try (Connection c = TestDatabase.get().connect()) {
      long first = one(c, "SELECT pglock.enqueue('u', queue => ?, unique_key => ?)", f.queue, key);
      long second = one(c, "SELECT pglock.enqueue('u', '{\"again\": true}', queue => ?, unique_key => ?)", f.queue, key);
      assertThat(second).isEqualTo(first);
      assertThat(f.count("unique_key IS NOT NULL")).isEqualTo(1);
      execute(c, "UPDATE pglock.job SET state = 'succeeded', finished_at = now() WHERE id = ?", first);
      assertThat(one(c, "SELECT pglock.enqueue('u', queue => ?, unique_key => ?)", f.queue, key))
          .as("a finished job frees its key").isNotEqualTo(first);
    }
  }

  @Test
  void enqueue_invalidArguments_are22023_namingTheArgument_whereJobRequestRefusesThemToo() throws Exception {
    String long201 = "k".repeat(JobRequest.MAX_NAME_LENGTH + 1);
    assertThatThrownBy(() -> JobRequest.of(long201, null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JobRequest.of("a\nb", null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JobRequest.of("k", null).maxAttempts(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JobRequest.of("k", null).priority(40_000)).isInstanceOf(IllegalArgumentException.class);
    Object[][] bad = {
        {"SELECT pglock.enqueue(?)", long201, "kind must be 1 to 200 characters"},
        {"SELECT pglock.enqueue(?)", "a\nb", "kind must not contain control characters"},
        {"SELECT pglock.enqueue(NULL)", null, "kind must be 1 to 200 characters, got null"},
        {"SELECT pglock.enqueue('k', queue => ?)", "", "queue must be 1 to 200"},
        {"SELECT pglock.enqueue('k', unique_key => ?)", long201, "unique_key must be 1 to 200"},
        {"SELECT pglock.enqueue('k', concurrency_key => ?)", "x\ty", "concurrency_key must not contain control"},
        {"SELECT pglock.enqueue('k', max_attempts => ?)", 0, "max_attempts must be at least 1"},
        {"SELECT pglock.enqueue('k', priority => ?)", 40_000, "priority must be between -32768 and 32767"},
        {"SELECT pglock.enqueue('k', run_at => now(), delay => ?::interval)", "1 s", "both given"},
        {"SELECT pglock.enqueue('k', delay => ?::interval)", "-1 s", "delay must be between zero and 36500 days"},
        {"SELECT pglock.enqueue('k', run_at => ?::timestamptz)", "infinity", "run_at must be a finite time"},
    };
    try (Connection c = TestDatabase.get().connect()) {
      for (Object[] b : bad) {
        assertThatThrownBy(() -> {
          try (PreparedStatement ps = c.prepareStatement((String) b[0])) {
            if (((String) b[0]).contains("?")) {
              ps.setObject(1, b[1]);
            }
            ps.execute();
          }
        }).as("%s with %s", b[0], b[1]).isInstanceOfSatisfying(SQLException.class,
            e -> assertThat(e.getSQLState()).isEqualTo("22023")).hasMessageContaining((String) b[2]);
      }
    }
  }

  @Test
  void enqueue_inATransactionRolledBack_leavesNoJob_andCommitted_isRunByAJavaWorkerItWakes() throws Exception {
    Map<Long, String> ran = new ConcurrentHashMap<>();
    startWorker(ran);
    try (Connection c = TestDatabase.get().connect()) {
      c.setAutoCommit(false);
      long rolledBack = one(c, "SELECT pglock.enqueue('sql-job', '\"gone\"', queue => ?)", f.queue);
      c.rollback();
      long committed = one(c, "SELECT pglock.enqueue('sql-job', '\"kept\"', queue => ?)", f.queue);
      assertThat(f.count("true")).as("not visible before the commit").isZero();
      c.commit();
      Await.until("the committed job to run", WAIT, () -> ran.containsKey(committed));
      assertThat(ran).containsExactly(Map.entry(committed, "kept"));
      assertThat(f.count("id = " + rolledBack)).isZero();
    }
  }

  @Test
  void trigger_enqueuesInItsTransaction_onlyWhatCommitsRuns() throws Exception {
    Map<Long, String> ran = new ConcurrentHashMap<>();
    startWorker(ran);
    try (Connection c = TestDatabase.get().connect()) {
      try (Statement st = c.createStatement()) {
        // the table's and function's names come from a UUID; the queue is bound at run time through the row
        st.execute("CREATE TABLE public." + table + " (id bigint PRIMARY KEY, queue text NOT NULL, note text)");
        st.execute("CREATE FUNCTION public." + table + "_job() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " PERFORM pglock.enqueue('sql-job', to_jsonb(NEW.note), queue => NEW.queue,"
            + "   unique_key => 'order-' || NEW.id || '-' || NEW.queue); RETURN NEW; END $$");
        st.execute("CREATE TRIGGER enqueue_job AFTER INSERT ON public." + table + " FOR EACH ROW EXECUTE FUNCTION public."
            + table + "_job()");
      }
      c.setAutoCommit(false);
      execute(c, "INSERT INTO public." + table + " VALUES (1, ?, 'rolled back')", f.queue);
      assertThat(f.count("true")).as("the trigger's job is in the inserting transaction").isZero();
      c.rollback();
      execute(c, "INSERT INTO public." + table + " VALUES (2, ?, 'committed')", f.queue);
      c.commit();
      Await.until("the trigger's committed job to run", WAIT, () -> ran.containsValue("committed"));
      assertThat(ran.values()).containsExactly("committed");
      assertThat(f.count("payload = '\"rolled back\"'")).isZero();
    }
  }

  @ParameterizedTest
  @EnumSource(Language.class)
  void jobEnqueuedByAnotherLanguagesClient_isRunByAJavaWorker(Language language) throws Exception {
    SqlClientProcess.assumeAvailable(language);
    Map<Long, String> ran = new ConcurrentHashMap<>();
    startWorker(ran);
    String app = "pglock-test-sql-enqueue-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> out = SqlClientProcess.run(language, WAIT, app, "pglock", "enqueue", f.queue, "sql-job",
        "\"from " + language + "\"");
    assertThat(out).hasSize(1).allMatch(l -> l.matches("job \\d+"));
    long id = Long.parseLong(out.get(0).substring("job ".length()));
    Await.until("the " + language + " client's job to run", WAIT, () -> ran.containsKey(id));
    assertThat(ran).containsExactly(Map.entry(id, "from " + language));
  }

  private void startWorker(Map<Long, String> ran) {
    JobQueue jobs = f.jobs("sql-enqueue-" + UUID.randomUUID().toString().substring(0, 8));
    f.closeLater(jobs.worker(f.queue).pollInterval(Duration.ofHours(1)).shutdownTimeout(Duration.ofSeconds(5))
        .handler("sql-job", String.class, (text, job) -> ran.put(job.id(), text)).start());
  }

  private static void execute(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      ps.execute();
    }
  }

  private static long one(Connection c, String sql, Object... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
