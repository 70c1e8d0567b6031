package io.pglock.spring.boot;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * pglock's settings under {@code pglock.*}. Every value left unset takes the library's default, so
 * that this class never disagrees with the builders' documentation: a {@code null} here means
 * "the builder's default".
 */
@ConfigurationProperties(prefix = "pglock")
public class PgLockProperties {
  /** Creates the settings, every value at its default (Spring binds the properties). */
  public PgLockProperties() {}

  /** Whether pglock's beans are created at all. */
  private boolean enabled = true;
  /** The namespace lock names live in, usually the service's name. Default: spring.application.name, else "default". */
  private String namespace;
  /** This node's name, shown in pg_stat_activity, the locks view and the CLI. Default: host-pid. */
  private String nodeName;
  /** The lease: how long a node that stops answering keeps its locks (1 s to 1 h; default 30 s). */
  private Duration lease;
  /** How long to wait for a connection from the DataSource (100 ms to 5 min; default 10 s). */
  private Duration connectTimeout;
  /** Lock sessions: connections held open for session locks (default 1). */
  private Integer lockSessions;
  /** Wait sessions: connections a blocked acquire may wait on (default 2). */
  private Integer waitSessions;
  /** The most locks held at once by this node (default: a quarter of the server's lock table, at most 2,000). */
  private Integer maxHeldLocks;
  /** Fencing tokens on named locks (needs the schema). */
  private boolean fencing;
  /** Record every hold in the lock history (needs the schema). */
  private boolean history;
  private final Schema schema = new Schema();
  private final Scheduler scheduler = new Scheduler();
  private final Queue queue = new Queue();
  private final Metrics metrics = new Metrics();
  private final Dashboard dashboard = new Dashboard();

  /** {@return whether pglock's beans are created} */
  public boolean isEnabled() {
    return enabled;
  }

  /**
   * Sets whether pglock's beans are created.
   *
   * @param enabled whether pglock's beans are created
   */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /** {@return the namespace, or null for the default} */
  public String getNamespace() {
    return namespace;
  }

  /**
   * Sets the namespace lock names live in.
   *
   * @param namespace the namespace lock names live in
   */
  public void setNamespace(String namespace) {
    this.namespace = namespace;
  }

  /** {@return the node name, or null for the default} */
  public String getNodeName() {
    return nodeName;
  }

  /**
   * Sets this node's name.
   *
   * @param nodeName this node's name
   */
  public void setNodeName(String nodeName) {
    this.nodeName = nodeName;
  }

  /** {@return the lease, or null for the default} */
  public Duration getLease() {
    return lease;
  }

  /**
   * Sets the lease.
   *
   * @param lease the lease
   */
  public void setLease(Duration lease) {
    this.lease = lease;
  }

  /** {@return the connect timeout, or null for the default} */
  public Duration getConnectTimeout() {
    return connectTimeout;
  }

  /**
   * Sets the connect timeout.
   *
   * @param connectTimeout the connect timeout
   */
  public void setConnectTimeout(Duration connectTimeout) {
    this.connectTimeout = connectTimeout;
  }

  /** {@return the number of lock sessions, or null for the default} */
  public Integer getLockSessions() {
    return lockSessions;
  }

  /**
   * Sets the number of lock sessions.
   *
   * @param lockSessions the number of lock sessions
   */
  public void setLockSessions(Integer lockSessions) {
    this.lockSessions = lockSessions;
  }

  /** {@return the number of wait sessions, or null for the default} */
  public Integer getWaitSessions() {
    return waitSessions;
  }

  /**
   * Sets the number of wait sessions.
   *
   * @param waitSessions the number of wait sessions
   */
  public void setWaitSessions(Integer waitSessions) {
    this.waitSessions = waitSessions;
  }

  /** {@return the cap on held locks, or null for the default} */
  public Integer getMaxHeldLocks() {
    return maxHeldLocks;
  }

  /**
   * Sets the cap on held locks.
   *
   * @param maxHeldLocks the cap on held locks
   */
  public void setMaxHeldLocks(Integer maxHeldLocks) {
    this.maxHeldLocks = maxHeldLocks;
  }

  /** {@return whether named locks carry fencing tokens} */
  public boolean isFencing() {
    return fencing;
  }

  /**
   * Sets whether named locks carry fencing tokens.
   *
   * @param fencing whether named locks carry fencing tokens
   */
  public void setFencing(boolean fencing) {
    this.fencing = fencing;
  }

  /** {@return whether holds are recorded in the lock history} */
  public boolean isHistory() {
    return history;
  }

  /**
   * Sets whether holds are recorded in the lock history.
   *
   * @param history whether holds are recorded in the lock history
   */
  public void setHistory(boolean history) {
    this.history = history;
  }

  /** {@return the schema settings} */
  public Schema getSchema() {
    return schema;
  }

  /** {@return the scheduler's settings} */
  public Scheduler getScheduler() {
    return scheduler;
  }

  /** {@return the queue's settings} */
  public Queue getQueue() {
    return queue;
  }

  /** {@return the metrics settings} */
  public Metrics getMetrics() {
    return metrics;
  }

  /** {@return the dashboard's settings} */
  public Dashboard getDashboard() {
    return dashboard;
  }

  /**
   * The web dashboard (module pglock-dashboard), served by the application's servlet container when
   * enabled: it shows locks, elections, tasks, queues and jobs, and retries, discards, cancels and
   * deletes jobs and triggers, pauses and resumes tasks.
   */
  public static class Dashboard {
    /** Creates the dashboard settings, at their defaults (Spring binds the properties). */
    public Dashboard() {}

    /** Whether the dashboard is served (in a servlet web application, with pglock-dashboard on the class path). */
    private boolean enabled;
    /** Where the dashboard is served: a path starting with / and without a trailing / or wildcard; mapped at path/*. */
    private String path = "/pglock";
    /** Show everything and take no action: no action buttons, and every POST refused (and recorded). */
    private boolean readOnly;
    /**
     * The role a caller needs to take actions, as the servlet's isUserInRole knows it (for Spring
     * Security, without ROLE_). Default: with Spring Security, any authenticated caller; without, anyone.
     */
    private String role;
    /**
     * Base64 of at least 32 random bytes that sign the anti-forgery tokens. Default: random per start;
     * give every instance behind one URL the same one.
     */
    private String csrfSecret;
    /** How often an open page refreshes its live parts (zero, or 1 s to 1 h; default 3 s). */
    private Duration refresh;
    /**
     * The time a page's queries may take together (1 s to 5 min; default 5 s); an action gets six
     * times as much.
     */
    private Duration queryTimeout;

    /** {@return whether the dashboard is served} */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether the dashboard is served.
     *
     * @param enabled whether the dashboard is served
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return where the dashboard is served} */
    public String getPath() {
      return path;
    }

    /**
     * Sets where the dashboard is served.
     *
     * @param path where the dashboard is served, such as {@code /pglock}
     */
    public void setPath(String path) {
      this.path = path;
    }

    /** {@return whether the dashboard is read-only} */
    public boolean isReadOnly() {
      return readOnly;
    }

    /**
     * Sets whether the dashboard is read-only.
     *
     * @param readOnly whether the dashboard is read-only
     */
    public void setReadOnly(boolean readOnly) {
      this.readOnly = readOnly;
    }

    /** {@return the role a caller needs to take actions, or null for the default} */
    public String getRole() {
      return role;
    }

    /**
     * Sets the role a caller needs to take actions.
     *
     * @param role the role a caller needs to take actions
     */
    public void setRole(String role) {
      this.role = role;
    }

    /** {@return the anti-forgery secret in base64, or null for a random one} */
    public String getCsrfSecret() {
      return csrfSecret;
    }

    /**
     * Sets the anti-forgery secret.
     *
     * @param csrfSecret the anti-forgery secret, base64 of at least 32 bytes
     */
    public void setCsrfSecret(String csrfSecret) {
      this.csrfSecret = csrfSecret;
    }

    /** {@return the refresh interval, or null for the default} */
    public Duration getRefresh() {
      return refresh;
    }

    /**
     * Sets how often an open page refreshes its live parts.
     *
     * @param refresh how often an open page refreshes its live parts
     */
    public void setRefresh(Duration refresh) {
      this.refresh = refresh;
    }

    /** {@return the time a page's queries may take, or null for the default} */
    public Duration getQueryTimeout() {
      return queryTimeout;
    }

    /**
     * Sets the time a page's queries may take together.
     *
     * @param queryTimeout the time a page's queries may take together
     */
    public void setQueryTimeout(Duration queryTimeout) {
      this.queryTimeout = queryTimeout;
    }
  }

  /** Micrometer meters (module pglock-micrometer), bound when the application has a MeterRegistry. */
  public static class Metrics {
    /** Creates the metrics settings, at their defaults (Spring binds the properties). */
    public Metrics() {}

    /** Whether pglock's meters are bound. */
    private boolean enabled = true;
    /** Whether the gauges of jobs per queue and state and of queue lag are read from the database. */
    private boolean queueGauges = true;
    /** How often those gauges are read, in the background (a query over the job table each time). */
    private Duration queueGaugesRefresh = Duration.ofSeconds(10);

    /** {@return whether pglock's meters are bound} */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether pglock's meters are bound.
     *
     * @param enabled whether pglock's meters are bound
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return whether the queue gauges are read} */
    public boolean isQueueGauges() {
      return queueGauges;
    }

    /**
     * Sets whether the queue gauges are read.
     *
     * @param queueGauges whether the queue gauges are read
     */
    public void setQueueGauges(boolean queueGauges) {
      this.queueGauges = queueGauges;
    }

    /** {@return how often the queue gauges are read} */
    public Duration getQueueGaugesRefresh() {
      return queueGaugesRefresh;
    }

    /**
     * Sets how often the queue gauges are read.
     *
     * @param queueGaugesRefresh how often the queue gauges are read
     */
    public void setQueueGaugesRefresh(Duration queueGaugesRefresh) {
      this.queueGaugesRefresh = queueGaugesRefresh;
    }
  }

  /** The schema pglock's tables live in, and how it is migrated. */
  public static class Schema {
    /** Creates the schema settings, at their defaults (Spring binds the properties). */
    public Schema() {}

    /** The schema's name: a lower-case SQL identifier. */
    private String name = "pglock";
    /**
     * Apply pglock's migrations at start, under an advisory lock (every node may; each migration
     * runs once). Off: an administrator applies them (PgLockSchema.migrate, or the files under
     * io/pglock/schema/ with Flyway or Liquibase).
     */
    private boolean migrate = true;
    /**
     * When the application migrates with Flyway (it has a Flyway bean), apply pglock's migrations
     * through Flyway too: with its settings and a history table of their own in pglock's schema.
     */
    private boolean throughFlyway = true;

    /** {@return whether pglock's migrations go through the application's Flyway} */
    public boolean isThroughFlyway() {
      return throughFlyway;
    }

    /**
     * Sets whether pglock's migrations go through the application's Flyway.
     *
     * @param throughFlyway whether pglock's migrations go through the application's Flyway
     */
    public void setThroughFlyway(boolean throughFlyway) {
      this.throughFlyway = throughFlyway;
    }

    /** {@return the schema's name} */
    public String getName() {
      return name;
    }

    /**
     * Sets the schema's name.
     *
     * @param name the schema's name
     */
    public void setName(String name) {
      this.name = name;
    }

    /** {@return whether migrations are applied at start} */
    public boolean isMigrate() {
      return migrate;
    }

    /**
     * Sets whether migrations are applied at start.
     *
     * @param migrate whether migrations are applied at start
     */
    public void setMigrate(boolean migrate) {
      this.migrate = migrate;
    }
  }

  /** The singleton task scheduler (module pglock-scheduler). */
  public static class Scheduler {
    /** Creates the scheduler settings, at their defaults (Spring binds the properties). */
    public Scheduler() {}

    /** Whether the Scheduler bean is created when pglock-scheduler is on the class path. */
    private boolean enabled = true;
    /** How often the scheduler looks for due slots (default 1 s). */
    private Duration pollInterval;
    /** How often it sweeps for runs of dead nodes and old history (default 5 s). */
    private Duration sweepInterval;
    /** How long finished runs are kept (default 7 days). */
    private Duration historyRetention;
    /** How long closing waits for running tasks (default 30 s). */
    private Duration closeTimeout;

    /** {@return whether the scheduler is created} */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether the scheduler is created.
     *
     * @param enabled whether the scheduler is created
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return the poll interval, or null for the default} */
    public Duration getPollInterval() {
      return pollInterval;
    }

    /**
     * Sets the poll interval.
     *
     * @param pollInterval the poll interval
     */
    public void setPollInterval(Duration pollInterval) {
      this.pollInterval = pollInterval;
    }

    /** {@return the sweep interval, or null for the default} */
    public Duration getSweepInterval() {
      return sweepInterval;
    }

    /**
     * Sets the sweep interval.
     *
     * @param sweepInterval the sweep interval
     */
    public void setSweepInterval(Duration sweepInterval) {
      this.sweepInterval = sweepInterval;
    }

    /** {@return the history retention, or null for the default} */
    public Duration getHistoryRetention() {
      return historyRetention;
    }

    /**
     * Sets how long finished runs are kept.
     *
     * @param historyRetention how long finished runs are kept
     */
    public void setHistoryRetention(Duration historyRetention) {
      this.historyRetention = historyRetention;
    }

    /** {@return the close timeout, or null for the default} */
    public Duration getCloseTimeout() {
      return closeTimeout;
    }

    /**
     * Sets how long closing waits for running tasks.
     *
     * @param closeTimeout how long closing waits for running tasks
     */
    public void setCloseTimeout(Duration closeTimeout) {
      this.closeTimeout = closeTimeout;
    }
  }

  /** The job queue (module pglock-queue): the JobQueue bean and the workers of annotated handlers. */
  public static class Queue {
    /** Creates the queue settings, at their defaults (Spring binds the properties). */
    public Queue() {}

    /** Whether the JobQueue bean is created when pglock-queue is on the class path. */
    private boolean enabled = true;
    /** Settings of every queue's worker, unless the queue's own entry under {@code queues} says otherwise. */
    private final Worker worker = new Worker();
    /** Per-queue worker settings, by queue name; unset values fall back to {@code worker}. */
    private final Map<String, Worker> queues = new LinkedHashMap<>();

    /** {@return whether the JobQueue bean is created} */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether the JobQueue bean is created.
     *
     * @param enabled whether the JobQueue bean is created
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return the settings of every queue's worker} */
    public Worker getWorker() {
      return worker;
    }

    /** {@return the per-queue worker settings} */
    public Map<String, Worker> getQueues() {
      return queues;
    }
  }

  /** A worker's settings; null values take the builder's default (see JobWorkerBuilder). */
  public static class Worker {
    /** Creates worker settings, every value unset (Spring binds the properties). */
    public Worker() {}

    /** Whether a worker runs for the queues that have annotated handlers (off: this node only enqueues). */
    private Boolean enabled;
    /** Handler threads (default 10). */
    private Integer concurrency;
    /** Database sessions the worker claims on, sharing its handler threads (default 1; more for quick jobs at high rates). */
    private Integer sessions;
    /** advisory (default: a dead worker's jobs free at once) or lease (through a transaction pooler). */
    private String claimMode;
    /** The claim lease in lease mode (default 30 s). */
    private Duration lease;
    /** LISTEN for new jobs (default: on in advisory mode). */
    private Boolean listen;
    /** How often an idle worker looks for jobs anyway (default 1 s). */
    private Duration pollInterval;
    /** Attempts per job, unless the job or its kind says otherwise (default 25). */
    private Integer maxAttempts;
    /** How long a stopping worker waits for running handlers (default 30 s). */
    private Duration shutdownTimeout;
    /** How long succeeded jobs are kept (default 1 day). */
    private Duration retention;
    /** How long discarded jobs are kept (default 7 days). */
    private Duration discardedRetention;

    /** {@return whether the worker runs, or null for the default (true)} */
    public Boolean getEnabled() {
      return enabled;
    }

    /**
     * Sets whether the worker runs.
     *
     * @param enabled whether the worker runs
     */
    public void setEnabled(Boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return the concurrency, or null for the default} */
    public Integer getConcurrency() {
      return concurrency;
    }

    /**
     * Sets handler threads.
     *
     * @param concurrency handler threads
     */
    public void setConcurrency(Integer concurrency) {
      this.concurrency = concurrency;
    }

    /** {@return the sessions, or null for the default} */
    public Integer getSessions() {
      return sessions;
    }

    /**
     * Sets the database sessions the worker claims on.
     *
     * @param sessions the number of sessions
     */
    public void setSessions(Integer sessions) {
      this.sessions = sessions;
    }

    /** {@return the claim mode, or null for the default} */
    public String getClaimMode() {
      return claimMode;
    }

    /**
     * Sets advisory or lease.
     *
     * @param claimMode advisory or lease
     */
    public void setClaimMode(String claimMode) {
      this.claimMode = claimMode;
    }

    /** {@return the lease, or null for the default} */
    public Duration getLease() {
      return lease;
    }

    /**
     * Sets the claim lease in lease mode.
     *
     * @param lease the claim lease in lease mode
     */
    public void setLease(Duration lease) {
      this.lease = lease;
    }

    /** {@return whether the worker listens, or null for the default} */
    public Boolean getListen() {
      return listen;
    }

    /**
     * Sets LISTEN for new jobs.
     *
     * @param listen LISTEN for new jobs
     */
    public void setListen(Boolean listen) {
      this.listen = listen;
    }

    /** {@return the poll interval, or null for the default} */
    public Duration getPollInterval() {
      return pollInterval;
    }

    /**
     * Sets how often an idle worker looks for jobs.
     *
     * @param pollInterval how often an idle worker looks for jobs
     */
    public void setPollInterval(Duration pollInterval) {
      this.pollInterval = pollInterval;
    }

    /** {@return the attempts per job, or null for the default} */
    public Integer getMaxAttempts() {
      return maxAttempts;
    }

    /**
     * Sets attempts per job.
     *
     * @param maxAttempts attempts per job
     */
    public void setMaxAttempts(Integer maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    /** {@return the shutdown timeout, or null for the default} */
    public Duration getShutdownTimeout() {
      return shutdownTimeout;
    }

    /**
     * Sets how long a stopping worker waits for running handlers.
     *
     * @param shutdownTimeout how long a stopping worker waits for running handlers
     */
    public void setShutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
    }

    /** {@return the retention, or null for the default} */
    public Duration getRetention() {
      return retention;
    }

    /**
     * Sets how long succeeded jobs are kept.
     *
     * @param retention how long succeeded jobs are kept
     */
    public void setRetention(Duration retention) {
      this.retention = retention;
    }

    /** {@return the discarded retention, or null for the default} */
    public Duration getDiscardedRetention() {
      return discardedRetention;
    }

    /**
     * Sets how long discarded jobs are kept.
     *
     * @param discardedRetention how long discarded jobs are kept
     */
    public void setDiscardedRetention(Duration discardedRetention) {
      this.discardedRetention = discardedRetention;
    }
  }
}
