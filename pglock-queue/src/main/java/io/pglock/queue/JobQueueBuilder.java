package io.pglock.queue;

import io.pglock.PgLocks;
import java.time.Duration;
import java.util.Objects;

/** Builds a {@link JobQueue}; see {@link JobQueue#builder(PgLocks)}. */
public final class JobQueueBuilder {
  private final PgLocks locks;
  private JsonMapper jsonMapper;
  private Duration networkTimeout = Duration.ofSeconds(10);
  private JobTracing tracing;
  private boolean vacuumWhenAutovacuumOff = true;

  JobQueueBuilder(PgLocks locks) {
    this.locks = Objects.requireNonNull(locks, "locks");
  }

  /**
   * The JSON library for payloads (default: Jackson, {@link JsonMapper#jackson()}).
   *
   * @param jsonMapper the JSON mapper
   * @return this builder
   */
  public JobQueueBuilder jsonMapper(JsonMapper jsonMapper) {
    this.jsonMapper = Objects.requireNonNull(jsonMapper, "jsonMapper");
    return this;
  }

  /**
   * The longest a statement of the queue's own may wait for the server's answer (default 10 s):
   * enqueues and admin calls on the queue's connections, and the workers' round trips in lease
   * mode. In advisory mode the workers' sessions follow the lease of the {@code PgLocks} instead.
   *
   * @throws IllegalArgumentException if not between 1 second and 10 minutes
   * @param networkTimeout the timeout
   * @return this builder
   */
  public JobQueueBuilder networkTimeout(Duration networkTimeout) {
    if (networkTimeout == null || networkTimeout.compareTo(Duration.ofSeconds(1)) < 0
        || networkTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException("networkTimeout must be between 1 s and 10 min, got " + networkTimeout);
    }
    this.networkTimeout = networkTimeout;
    return this;
  }

  /**
   * Carries a trace context from each enqueue to the attempts of its jobs (default none): the queue's
   * enqueues and the workers it starts share it. The module {@code pglock-micrometer} has one for
   * OpenTelemetry, {@code OpenTelemetryJobTracing.create(openTelemetry)}. Needs the job table's
   * column {@code trace_context} (schema version 11).
   *
   * @param tracing the tracing
   * @return this builder
   * @throws IllegalStateException if tracing was already set
   */
  public JobQueueBuilder tracing(JobTracing tracing) {
    if (this.tracing != null) {
      throw new IllegalStateException("tracing was already set to " + this.tracing);
    }
    this.tracing = Objects.requireNonNull(tracing, "tracing");
    return this;
  }

  /**
   * Whether the workers vacuum the job table when autovacuum will not (default true): when the
   * server's {@code autovacuum} setting is off, or the table's {@code autovacuum_enabled} storage
   * parameter is false. A queue turns its rows over all day; with nothing vacuuming the table, the
   * space of the rows pruning deletes is never reused and the table grows without end. Then, at most
   * every 10 s per queue object, a thread of its own vacuums and analyses the table once its dead rows
   * exceed 10,000 and a tenth of its live rows ({@code VACUUM (SKIP_LOCKED, ANALYZE)}: one worker of
   * the fleet at a time). Needs the role to own the table (or the database); a role that does not says
   * so once in the log. With autovacuum on, the workers only read the setting now and then. Off: you
   * vacuum the table yourself (docs/queue.md, "Table maintenance").
   *
   * @param vacuumWhenAutovacuumOff whether the workers vacuum the table when autovacuum is off for it
   * @return this builder
   */
  public JobQueueBuilder vacuumWhenAutovacuumOff(boolean vacuumWhenAutovacuumOff) {
    this.vacuumWhenAutovacuumOff = vacuumWhenAutovacuumOff;
    return this;
  }

  /**
   * Builds the queue and checks that the job table is there.
   *
   * @throws io.pglock.SchemaMissingException if the schema is older than version 9, or older than
   *     version 11 with {@link #tracing(JobTracing)} set
   * @throws JobQueueException if the database cannot be reached
   * @return the running queue
   */
  public JobQueue build() {
    JsonMapper mapper = jsonMapper != null ? jsonMapper : JsonMapper.jackson();
    return io.pglock.queue.internal.DefaultJobQueue.start(locks, mapper, networkTimeout, tracing,
        vacuumWhenAutovacuumOff);
  }
}
