package io.pglock.cli;

import io.pglock.LockHandle;
import io.pglock.LockKey;
import io.pglock.LockNotHeldException;
import io.pglock.LockTimeoutException;
import io.pglock.MissingPrivilegeException;
import io.pglock.PgLocks;
import io.pglock.PgLocksBuilder;
import io.pglock.SchemaMissingException;
import io.pglock.SessionLock;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code pglock run --name N [options] -- COMMAND [ARGS...]}: runs a command only while holding a
 * lock, the way {@code flock(1)} does with a lock file, but across hosts. It waits for the lock
 * (forever unless {@code --wait} or {@code --nonblock} says otherwise), runs the command with
 * inherited standard streams, and releases the lock once the command has ended.
 *
 * <p>Exit codes: the command's status when it ran with the lock held throughout (128 + N when
 * signal N ended it); the conflict code (1, or {@code --conflict-exit-code}) when the lock was not
 * obtained; 2 bad options; 3 database unreachable; 4 lock lost while the command ran; 126/127
 * command not startable/not found; 128 + N when signal N stopped pglock before the command
 * started. See {@code docs/cli.md} for the reasoning.
 */
@Command(name = "run",
    mixinStandardHelpOptions = true,
    header = "Runs a command only while holding a lock (flock(1) across hosts).",
    description = {
        "%nWaits for the lock (forever, like flock, unless --wait or --nonblock), runs the command, and "
            + "releases the lock when the command ends. SIGTERM, SIGINT and SIGHUP to pglock are passed to the "
            + "command, and the lock stays held until it ends. If the lock is lost while the command runs "
            + "(its database session ends), the command gets SIGTERM, then SIGKILL after --grace, and pglock "
            + "exits with 4. The command sees PGLOCK_LOCK_NAME, PGLOCK_LOCK_NAMESPACE and PGLOCK_LOCK_KEY in "
            + "its environment, and with --fencing-token-env VAR the lock's fencing token in VAR.%n"},
    footerHeading = "%nExamples:%n",
    footer = {
        "  export PGLOCK_URL=jdbc:postgresql://db.example:5432/app PGLOCK_USER=ops",
        "  pglock run --name nightly-report --nonblock -- ./report.sh --date today",
        "  pglock run --name migrate --wait 2m --conflict-exit-code 75 -- ./migrate.sh",
        "  pglock run --name invoice-42 --fencing-token-env TOKEN -- ./write-invoice.sh   # it checks $TOKEN",
        "  pglock run --name nightly-report --history -- ./report.sh   # then: pglock history --failed"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "N:the command's exit status, when it ran with the lock held throughout (128+N: ended by signal N)",
        "1:the lock was not obtained (another holder; --nonblock or --wait); see --conflict-exit-code",
        "2:bad options",
        "3:the database could not be reached",
        "4:the lock was lost while the command ran (it got SIGTERM, then SIGKILL after --grace)",
        "5:--fencing-token-env, and pglock's schema lacks what fencing tokens need; the command did not run",
        "6:the role lacks a privilege (CONNECT on the database; with --fencing-token-env or --history, USAGE on the schema and its tables and functions): the message names the GRANT to run; the command did not run",
        "126:the command could not be started",
        "127:the command was not found",
        "128+N:pglock got signal N before the command started; it was not started"})
public final class RunCommand implements Callable<Integer> {
  static final Duration MAX_GRACE = Duration.ofHours(1);
  /** Waiting "forever" under --history, whose SessionLock.run needs a timeout: its longest, a year. */
  static final Duration FOREVER = Duration.ofDays(365);
  static final String LOCK_NAME_ENV = "PGLOCK_LOCK_NAME";
  static final String LOCK_NAMESPACE_ENV = "PGLOCK_LOCK_NAMESPACE";
  static final String LOCK_KEY_ENV = "PGLOCK_LOCK_KEY";
  private static final Pattern SHELL_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  @Spec
  private CommandSpec spec;

  @Mixin
  private DatabaseOptions database;

  @Mixin
  private NamespaceOption namespace;

  @Mixin
  private SchemaOption schema;

  @Option(names = "--name", required = true, paramLabel = "NAME",
      description = "The lock's name, in --namespace (the same lock as PgLocks.lock(NAME)).")
  private String name;

  @Option(names = {"-w", "--wait"}, paramLabel = "DURATION", converter = DurationConverter.class,
      description = "Wait at most this long for the lock: 500ms, 30s, 2m, or seconds (default: wait forever).")
  private Duration wait;

  @Option(names = {"-n", "--nonblock"}, description = "Try once and do not wait (the same as --wait 0).")
  private boolean nonblock;

  @Option(names = {"-s", "--shared"},
      description = "Take the lock shared: shared holders run together, an exclusive one runs alone.")
  private boolean shared;

  @Option(names = {"-E", "--conflict-exit-code"}, paramLabel = "CODE", defaultValue = "1",
      description = "Exit code when the lock is not obtained, 0 to 255 (default: ${DEFAULT-VALUE}, as flock). "
          + "Pick one the command never exits with to tell the two apart, e.g. 75.")
  private int conflictExitCode;

  @Option(names = "--grace", paramLabel = "DURATION", defaultValue = "10s", converter = DurationConverter.class,
      description = "After the lock is lost, how long the command has between SIGTERM and SIGKILL "
          + "(default: ${DEFAULT-VALUE}).")
  private Duration grace;

  @Option(names = "--lease", paramLabel = "DURATION", defaultValue = "30s", converter = DurationConverter.class,
      description = "How long the lock outlives a pglock that stopped answering (a frozen host, a cut "
          + "network), 1s to 1h, as PgLocksBuilder.lease (default: ${DEFAULT-VALUE}).")
  private Duration lease;

  @Option(names = "--fencing-token-env", paramLabel = "VAR",
      description = "Take the lock with a fencing token and give it to the command in the environment variable "
          + "VAR: a number larger than any earlier holder's, for the protected resource to check (see "
          + "docs/fencing.md). Needs pglock's schema (--schema, version 2); not with --shared.")
  private String fencingTokenEnv;

  @Option(names = "--history",
      description = "Record the run in pglock's lock history, as SessionLock.run with history does: released "
          + "when the command exits 0, failed (CommandFailedException, with its status) when it exits with "
          + "another status, lost when the lock is lost; pglock history --failed shows the failed ones. Needs "
          + "pglock's schema (--schema, version 4) and INSERT on its lock history for the role.")
  private boolean history;

  @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "The command and its arguments, after --.")
  private List<String> command;

  @Override
  public Integer call() throws InterruptedException {
    validate();
    LockKey key = namespace.key(name);
    PrintWriter err = spec.commandLine().getErr();
    String lockName = "\"" + name + "\" (namespace " + key.namespace() + ")";
    CommandSupervisor supervisor = new CommandSupervisor(Thread.currentThread(), err, grace, lockName);
    try (SignalRelay relay = SignalRelay.install(supervisor);
        PgLocks locks = PgLocks.builder(database.dataSource()).namespace(key.namespace()).nodeName(nodeName())
            .lease(lease).connectTimeout(database.connectTimeout()).waitSessions(1).schema(schema.schema()).build()) {
      SessionLock lock = lock(locks);
      if (history) {
        return runWithHistory(lock, key, supervisor, err, lockName);
      }
      Optional<LockHandle> handle;
      try {
        handle = acquire(lock);
      } catch (InterruptedException e) {
        if (supervisor.pendingSignal() == null) {
          throw e;
        }
        return supervisor.notStarted();
      }
      if (handle.isEmpty()) {
        err.println("pglock run: lock " + lockName + " is held by another holder; not obtained "
            + (timeout().isZero() ? "(tried once)" : "within " + DurationConverter.format(timeout()))
            + "; exit code " + conflictExitCode);
        err.flush();
        return conflictExitCode;
      }
      try (LockHandle h = handle.get()) {
        h.onLoss(supervisor::lost);
        return supervisor.run(processBuilder(key, h), h);
      }
    }
  }

  /**
   * {@code --history}: the same run through {@link SessionLock#run}, which records the hold in the
   * lock history: released when the command exits 0, failed (with {@link CommandFailedException},
   * naming the status) when it exits with another, lost when the lock was lost while it ran.
   */
  private int runWithHistory(SessionLock lock, LockKey key, CommandSupervisor supervisor, PrintWriter err,
      String lockName) throws InterruptedException {
    SessionLock recorded = withHistory(lock);
    Duration t = wait == null && !nonblock ? FOREVER : timeout();
    try {
      return recorded.run(t, h -> {
        h.onLoss(supervisor::lost);
        int status = supervisor.run(processBuilder(key, h), h);
        if (status != 0 && h.isHeld()) {
          throw new CommandFailedException(status, command.get(0));
        }
        return status;
      });
    } catch (CommandFailedException e) {
      return e.status();
    } catch (LockNotHeldException e) {
      return ExitCodes.LOCK_LOST; // the supervisor said so; the history records the hold as lost
    } catch (LockTimeoutException e) {
      err.println("pglock run: lock " + lockName + " is held by another holder; not obtained "
          + (t.isZero() ? "(tried once)" : "within " + DurationConverter.format(t)) + "; exit code " + conflictExitCode);
      err.flush();
      return conflictExitCode;
    } catch (InterruptedException e) {
      if (supervisor.pendingSignal() == null) {
        throw e;
      }
      return supervisor.notStarted();
    }
  }

  /** The lock with history on, if the schema has the history table and the role may use it. */
  private SessionLock withHistory(SessionLock lock) {
    try {
      return lock.withHistory();
    } catch (SchemaMissingException e) {
      SchemaAccess.missingUsage(database.dataSource(), schema.schema()).ifPresent(grant -> {
        throw new MissingPrivilegeException("--history needs USAGE on pglock's schema \"" + schema.schema()
            + "\", which this role lacks; as the schema's owner or a superuser run: " + grant
            + "; the command did not run", e);
      });
      throw new SchemaMissingException("--history needs pglock's schema \"" + schema.schema()
          + "\" at version 4 or later (lock history), which this database lacks; run "
          + "PgLockSchema.migrate(dataSource, \"" + schema.schema() + "\") once, or apply io/pglock/schema/V*.sql "
          + "with Flyway or Liquibase; the command did not run");
    }
  }

  /** The lock the options ask for; with a fencing token only if the schema has what tokens need. */
  private SessionLock lock(PgLocks locks) {
    SessionLock lock = shared ? locks.readWriteLock(name).readLock() : locks.lock(name);
    if (fencingTokenEnv == null) {
      return lock;
    }
    try {
      return lock.withFencing();
    } catch (SchemaMissingException e) {
      SchemaAccess.missingUsage(database.dataSource(), schema.schema()).ifPresent(grant -> {
        throw new MissingPrivilegeException("--fencing-token-env needs USAGE on pglock's schema \"" + schema.schema()
            + "\", which this role lacks; as the schema's owner or a superuser run: " + grant
            + "; the command did not run", e);
      });
      // The library's message speaks to Java code ("build the PgLocks again"); this one to the shell.
      throw new SchemaMissingException("--fencing-token-env needs pglock's schema \"" + schema.schema()
          + "\" at version 2 or later (fencing tokens), which this database lacks or this role may not use; run "
          + "PgLockSchema.migrate(dataSource, \"" + schema.schema() + "\") once, or apply io/pglock/schema/V*.sql "
          + "with Flyway or Liquibase; the command did not run");
    }
  }

  private Optional<LockHandle> acquire(SessionLock lock) throws InterruptedException {
    if (wait == null && !nonblock) {
      return Optional.of(lock.acquire());
    }
    Duration t = timeout();
    return t.isZero() ? lock.tryAcquire() : lock.tryAcquire(t);
  }

  private Duration timeout() {
    return nonblock ? Duration.ZERO : wait;
  }

  private ProcessBuilder processBuilder(LockKey key, LockHandle handle) {
    ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
    Map<String, String> env = pb.environment();
    env.put(LOCK_NAME_ENV, key.name());
    env.put(LOCK_NAMESPACE_ENV, key.namespace());
    env.put(LOCK_KEY_ENV, Long.toString(key.int64()));
    if (fencingTokenEnv != null) {
      env.put(fencingTokenEnv, Long.toString(handle.fencingToken()));
    }
    return pb;
  }

  private void validate() {
    if (nonblock && wait != null) {
      throw new ParameterException(spec.commandLine(), "--nonblock and --wait exclude each other; "
          + "--nonblock is --wait 0");
    }
    if (conflictExitCode < 0 || conflictExitCode > 255) {
      throw new ParameterException(spec.commandLine(),
          "--conflict-exit-code must be between 0 and 255: " + conflictExitCode);
    }
    if (fencingTokenEnv != null) {
      if (!SHELL_IDENTIFIER.matcher(fencingTokenEnv).matches()) {
        throw new ParameterException(spec.commandLine(), "--fencing-token-env must be a shell variable name "
            + "(letters, digits and '_', not starting with a digit): \"" + fencingTokenEnv + "\"");
      }
      if (List.of(LOCK_NAME_ENV, LOCK_NAMESPACE_ENV, LOCK_KEY_ENV).contains(fencingTokenEnv)) {
        throw new ParameterException(spec.commandLine(), "--fencing-token-env " + fencingTokenEnv
            + " would hide a variable pglock run sets itself; pick another name");
      }
      if (shared) {
        throw new ParameterException(spec.commandLine(), "--fencing-token-env and --shared exclude each other: "
            + "fencing tokens order exclusive holders; shared holders are not ordered among themselves");
      }
    }
    if (grace.compareTo(MAX_GRACE) > 0) {
      throw new ParameterException(spec.commandLine(), "--grace must be at most 1h: " + DurationConverter.format(grace));
    }
    if (lease.compareTo(PgLocksBuilder.MIN_LEASE) < 0 || lease.compareTo(PgLocksBuilder.MAX_LEASE) > 0) {
      throw new ParameterException(spec.commandLine(),
          "--lease must be between 1s and 1h: " + DurationConverter.format(lease));
    }
  }

  /**
   * {@code cli-<host>-<pid>}, at most 40 printable ASCII characters, the host cut short rather than
   * the pid: the pid is what tells two runs on one host apart in {@code pg_stat_activity}.
   */
  static String nodeName() {
    String pid = Long.toString(ProcessHandle.current().pid());
    String host = hostName().replaceAll("[^\\x21-\\x7e]|:", "?"); // ':' separates the parts of application_name
    int room = 40 - "cli-".length() - 1 - pid.length();
    return "cli-" + (host.length() > room ? host.substring(0, room) : host) + "-" + pid;
  }

  /** The kernel's host name where Linux shows it, which needs no DNS lookup; else the JDK's. */
  private static String hostName() {
    try {
      return Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
    } catch (IOException | RuntimeException e) {
      try {
        return InetAddress.getLocalHost().getHostName();
      } catch (IOException | RuntimeException e2) {
        return "unknown-host";
      }
    }
  }
}
