package io.pglock.queue.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLockSchema;
import io.pglock.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The SQL enqueue wakes the workers on the channel the Java queue listens to, whatever the schema's name. */
class JobChannelSqlTest {

  @Test
  void jobChannel_isTheJavaQueuesChannel_forAnySchemaName() throws Exception {
    String schema = "sql_channel_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    PgLockSchema.migrate(TestDatabase.get().dataSource(), PgLockSchema.DEFAULT_SCHEMA);
    PgLockSchema.migrate(TestDatabase.get().dataSource(), schema);
    try (Connection c = TestDatabase.get().connect(); Statement st = c.createStatement()) {
      try {
        for (String s : List.of(PgLockSchema.DEFAULT_SCHEMA, schema)) {
          // a validated identifier (the migration took it): the schema's name is the only SQL text added
          try (ResultSet rs = st.executeQuery("SELECT " + s + ".job_channel()")) {
            rs.next();
            assertThat(rs.getString(1)).as(s).isEqualTo(DefaultJobQueue.channel(s)).startsWith("pglock_jobs_");
          }
        }
      } finally {
        st.execute("DROP SCHEMA " + schema + " CASCADE");
      }
    }
  }
}
