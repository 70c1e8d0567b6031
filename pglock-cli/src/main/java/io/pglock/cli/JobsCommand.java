package io.pglock.cli;

import io.pglock.queue.Job;
import io.pglock.queue.JobAdmin;
import io.pglock.queue.JobError;
import io.pglock.queue.JobQueueException;
import io.pglock.queue.JobState;
import io.pglock.queue.QueueCounts;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code pglock jobs}: the job queues of a schema (jobs per state, how late the oldest due job is),
 * and {@code pglock jobs failed|show|retry|discard|cancel|delete}. Reads and changes
 * {@code <schema>.job} through {@link JobAdmin}. Exit codes: 0 done, 1 no jobs (or no such job, or
 * the action does not apply to the job's state), 2 bad options, 3 database unreachable, 5 schema
 * missing, 6 privilege missing.
 */
@Command(name = "jobs",
    mixinStandardHelpOptions = true,
    header = "Shows the job queues; lists failed jobs; retries, discards, cancels and deletes jobs.",
    description = {
        "%nOne row per queue of the durable job queue (pglock-queue): how many jobs are available, running, "
            + "retryable, succeeded, discarded and cancelled, and OLDEST DUE, how long the oldest due job "
            + "(available or retryable, its run-at passed) has waited since its run-at: a growing figure "
            + "means the workers fall behind. Reads <schema>.job (PgLockSchema.migrate, schema version 9 or "
            + "later).%n"},
    subcommands = {JobsCommand.Failed.class, JobsCommand.Show.class, JobsCommand.Retry.class,
        JobsCommand.Discard.class, JobsCommand.Cancel.class, JobsCommand.Delete.class},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock jobs",
        "  pglock jobs failed --queue emails --limit 50",
        "  pglock jobs show 4711",
        "  pglock jobs retry 4711",
        "  pglock jobs cancel 4712"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:done",
        "1:no jobs (printed: no jobs) or no failed ones, no such job, or the action does not apply to the job's state",
        "2:bad options",
        "3:the database could not be reached",
        "5:pglock's schema (or its job table) is missing: run PgLockSchema.migrate",
        "6:the role lacks a privilege (CONNECT on the database, USAGE on the schema, or one on a table, view or function): the message names the GRANT to run"})
public final class JobsCommand implements Callable<Integer> {
  /** How long a query may take, and connecting. */
  static final Duration QUERY_TIMEOUT = Duration.ofSeconds(10);
  /** How much of a last error (class and message) the one-line listing of {@code jobs failed} shows. */
  static final int ERROR_WIDTH = 100;

  @Spec
  private CommandSpec spec;

  @Mixin
  private DatabaseOptions database;

  @Mixin
  private SchemaOption schema;

  @Option(names = "--queue", paramLabel = "QUEUE", description = "Only this queue.")
  private String queue;

  @Override
  public Integer call() {
    checkQueue(spec, queue);
    List<QueueCounts> counts = admin(database, schema).counts().stream()
        .filter(c -> queue == null || c.queue().equals(queue)).toList();
    PrintWriter out = spec.commandLine().getOut();
    if (counts.isEmpty()) {
      out.println(queue == null ? "no jobs" : "no jobs in queue " + queue);
      out.flush();
      return ExitCodes.NO_JOB;
    }
    TextTable table = new TextTable(List.of("QUEUE", "AVAILABLE", "RUNNING", "RETRYABLE", "SUCCEEDED", "DISCARDED",
        "CANCELLED", "OLDEST DUE"), 60, 12, 12, 12, 12, 12, 12, 12);
    for (QueueCounts c : counts) {
      table.add(List.of(c.queue(), count(c, JobState.AVAILABLE), count(c, JobState.RUNNING),
          count(c, JobState.RETRYABLE), count(c, JobState.SUCCEEDED), count(c, JobState.DISCARDED),
          count(c, JobState.CANCELLED), c.oldestDueAge() == null ? "-" : Ages.format(c.oldestDueAge())));
    }
    table.lines().forEach(out::println);
    out.flush();
    return ExitCodes.OK;
  }

  private static String count(QueueCounts c, JobState state) {
    return Long.toString(c.count(state));
  }

  static JobAdmin admin(DatabaseOptions database, SchemaOption schema) {
    return JobAdmin.of(database.readingDataSource(QUERY_TIMEOUT), schema.schema());
  }

  static void checkQueue(CommandSpec spec, String queue) {
    if (queue != null && queue.isBlank()) {
      throw new ParameterException(spec.commandLine(), "--queue must not be blank");
    }
  }

  static String lower(Enum<?> e) {
    return TasksCommand.lower(e);
  }

  /** {@code 2/3}; {@code 0/-} for a job never claimed that set no limit (its first claim writes the worker's setting for the kind). */
  static String attempts(Job job) {
    return job.attempt() + "/" + (job.maxAttempts() == null ? "-" : job.maxAttempts().toString());
  }

  /** An instant to the second, as {@code 2026-11-22T09:14:03Z}, or "-". */
  static String second(Instant t) {
    return t == null ? "-" : t.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** {@code 2026-11-22T09:14:03.512Z (3m12s ago)}, {@code ... (in 40s)}, or "-". */
  static String when(Instant t, Instant now) {
    if (t == null) {
      return "-";
    }
    Duration d = Duration.between(now, t);
    return t + (d.isNegative() ? " (" + Ages.format(d.negated()) + " ago)" : " (in " + Ages.format(d) + ")");
  }

  /** {@code class: message}, or the class alone when there is no message. */
  static String error(JobError e) {
    String cls = e.errorClass() == null ? "(unknown error)" : e.errorClass();
    return e.message() == null || e.message().isEmpty() ? cls : cls + ": " + e.message();
  }

  /** A subcommand with the database and schema options of its own. */
  abstract static class OnJobs implements Callable<Integer> {
    @Spec
    CommandSpec spec;
    @Mixin
    private DatabaseOptions database;
    @Mixin
    private SchemaOption schema;

    JobAdmin admin() {
      return JobsCommand.admin(database, schema);
    }

    JobRetry retry() {
      return new JobRetry(database.readingDataSource(QUERY_TIMEOUT), schema.schema());
    }

    PrintWriter out() {
      return spec.commandLine().getOut();
    }

    /** Prints one line on standard error, "pglock jobs &lt;sub&gt;: ...", and returns {@link ExitCodes#NO_JOB}. */
    int fail(String message) {
      PrintWriter err = spec.commandLine().getErr();
      err.println(spec.qualifiedName() + ": " + message);
      err.flush();
      return ExitCodes.NO_JOB;
    }
  }

  /** {@code pglock jobs failed}. */
  @Command(name = "failed", mixinStandardHelpOptions = true,
      header = "Lists the discarded and the retryable jobs, newest first, with their last error.",
      description = {"%nOne line per job, newest (highest id) first: id, queue, kind, state, attempts (started/"
          + "allowed; - when the worker's setting for the kind applies), when its last attempt failed, the node "
          + "that ran it, and its last error (class and message, cut to " + ERROR_WIDTH + " characters: "
          + "pglock jobs show ID prints it whole).%n"})
  static final class Failed extends OnJobs {
    @Option(names = "--queue", paramLabel = "QUEUE", description = "Only this queue.")
    private String queue;

    @Option(names = "--limit", defaultValue = "20", paramLabel = "N",
        description = "How many (1 to 10000, default ${DEFAULT-VALUE}).")
    private int limit;

    @Override
    public Integer call() {
      checkQueue(spec, queue);
      if (limit < 1 || limit > 10_000) {
        throw new ParameterException(spec.commandLine(), "--limit must be from 1 to 10000: " + limit);
      }
      JobAdmin admin = admin();
      List<Job> jobs = new ArrayList<>(admin.list(JobState.DISCARDED, queue, limit));
      jobs.addAll(admin.list(JobState.RETRYABLE, queue, limit));
      jobs.sort(Comparator.comparingLong(Job::id).reversed());
      if (jobs.size() > limit) {
        jobs = jobs.subList(0, limit);
      }
      PrintWriter out = out();
      if (jobs.isEmpty()) {
        out.println(queue == null ? "no failed jobs" : "no failed jobs in queue " + queue);
        out.flush();
        return ExitCodes.NO_JOB;
      }
      TextTable table = new TextTable(List.of("ID", "QUEUE", "KIND", "STATE", "ATTEMPT", "FAILED", "NODE", "ERROR"),
          20, 40, 40, 10, 12, 20, 40, ERROR_WIDTH);
      for (Job j : jobs) {
        JobError last = j.lastError();
        Instant failed = last != null && last.at() != null ? last.at() : j.finishedAt();
        String node = last != null && last.node() != null ? last.node() : j.node();
        table.add(List.of(Long.toString(j.id()), j.queue(), j.kind(), lower(j.state()), attempts(j), second(failed),
            node == null ? "-" : node, last == null ? "-" : error(last)));
      }
      table.lines().forEach(out::println);
      out.flush();
      return ExitCodes.OK;
    }
  }

  /** {@code pglock jobs show ID}. */
  @Command(name = "show", mixinStandardHelpOptions = true,
      header = "Shows a job: its fields, its payload, and every failed attempt's error.",
      description = {"%nThe job's fields and payload, then each failed attempt's error, oldest first (attempt, "
          + "when, node, class and message), and the stack of the last one.%n"})
  static final class Show extends OnJobs {
    @Parameters(index = "0", paramLabel = "ID", description = "The job's id.")
    private long id;

    @Override
    public Integer call() {
      Optional<Job> found = admin().job(id);
      if (found.isEmpty()) {
        return fail("no job " + id);
      }
      Job j = found.get();
      Instant now = Instant.now();
      List<String[]> fields = new ArrayList<>();
      fields.add(new String[] {"job", Long.toString(j.id())});
      fields.add(new String[] {"queue", j.queue()});
      fields.add(new String[] {"kind", j.kind()});
      fields.add(new String[] {"state", lower(j.state()) + (j.cancelRequested() ? " (cancel requested)" : "")});
      fields.add(new String[] {"attempt", j.attempt() + " of "
          + (j.maxAttempts() == null ? "the worker's setting for the kind" : j.maxAttempts().toString())});
      fields.add(new String[] {"priority", Integer.toString(j.priority())});
      fields.add(new String[] {"run at", when(j.runAt(), now)});
      fields.add(new String[] {"created", when(j.createdAt(), now)});
      fields.add(new String[] {"started", when(j.startedAt(), now)});
      fields.add(new String[] {"finished", when(j.finishedAt(), now)});
      fields.add(new String[] {"node", j.node() == null ? "-" : j.node()});
      fields.add(new String[] {"unique key", j.uniqueKey() == null ? "-" : j.uniqueKey()});
      fields.add(new String[] {"concurrency key", j.concurrencyKey() == null ? "-" : j.concurrencyKey()});
      fields.add(new String[] {"payload", j.payloadJson() == null ? "-" : j.payloadJson()});
      int width = fields.stream().mapToInt(f -> f[0].length()).max().orElse(0) + 2;
      PrintWriter out = out();
      for (String[] f : fields) {
        out.println(f[0] + " ".repeat(width - f[0].length()) + f[1]);
      }
      List<JobError> errors = j.errors();
      out.println();
      if (errors.isEmpty()) {
        out.println("errors: none");
      } else {
        out.println("errors (" + errors.size() + ", oldest first):");
        for (int i = 0; i < errors.size(); i++) {
          JobError e = errors.get(i);
          out.println("attempt " + e.attempt() + "  " + (e.at() == null ? "-" : e.at().toString()) + "  node "
              + (e.node() == null ? "-" : e.node()));
          indented(out, "  ", error(e));
          if (i == errors.size() - 1) {
            if (e.stack() == null || e.stack().isBlank()) {
              out.println("    (no stack recorded)");
            } else {
              indented(out, "    ", e.stack().replace("\t", "    ").stripTrailing());
            }
          }
        }
      }
      out.flush();
      return ExitCodes.OK;
    }

    private static void indented(PrintWriter out, String indent, String text) {
      text.lines().forEach(l -> out.println(indent + l));
    }
  }

  /**
   * A change on one job: runs it, then on false reads the job to say why: missing, or its state
   * and what applies to that state instead.
   */
  abstract static class OnJob extends OnJobs {
    @Parameters(index = "0", paramLabel = "ID", description = "The job's id.")
    long id;

    /** The states the action applies to, as the admin's statement checks them. */
    abstract Set<JobState> appliesTo();

    /** Runs the action; false if the job is missing or in a state it does not apply to. */
    abstract boolean act(JobAdmin admin, JobRetry retry);

    /** The confirmation, given the job as it is after the action (empty if it is gone). */
    abstract String done(Optional<Job> after);

    @Override
    public Integer call() {
      JobAdmin admin = admin();
      boolean changed;
      try {
        changed = act(admin, retry());
      } catch (JobQueueException e) {
        if (!"23505".equals(PglockCommand.sqlState(e))) {
          throw e;
        }
        // retry: an unfinished job holds the same unique key
        return fail(e.getMessage());
      }
      if (changed) {
        PrintWriter out = out();
        // retry says what its statement returned; a read now could see a worker's claim (see JobRetry)
        out.println(done(spec.name().equals("delete") || spec.name().equals("retry") ? Optional.empty()
            : admin.job(id)));
        out.flush();
        return ExitCodes.OK;
      }
      Optional<Job> job = admin.job(id);
      if (job.isEmpty()) {
        return fail("no job " + id);
      }
      return fail(notApplicable(job.get()));
    }

    private String notApplicable(Job job) {
      JobState state = job.state();
      StringBuilder sb = new StringBuilder("job ").append(id).append(" is ").append(lower(state));
      if (state == JobState.RETRYABLE || state == JobState.AVAILABLE) {
        sb.append(job.runAt() != null && job.runAt().isAfter(Instant.now()) ? " (it runs at " + job.runAt() + ")"
            : " (it runs when a worker of queue " + job.queue() + " takes it)");
      } else if (state == JobState.RUNNING) {
        sb.append(job.node() == null ? "" : " (on node " + job.node() + ")");
      }
      sb.append(": ").append(spec.name()).append(" applies only to ")
          .append(states(appliesTo())).append(" jobs; ");
      List<String> instead = instead(state);
      sb.append("for ").append(state == JobState.AVAILABLE ? "an " : "a ").append(lower(state)).append(" job use ")
          .append(instead.stream().map(a -> "pglock jobs " + a + " " + id).collect(Collectors.joining(" or ")));
      return sb.toString();
    }

    /** The actions that apply to a state, as the admin's statements check them. */
    static List<String> instead(JobState state) {
      return switch (state) {
        case AVAILABLE, RETRYABLE -> List.of("cancel", "discard");
        case RUNNING -> List.of("cancel");
        case SUCCEEDED -> List.of("delete");
        case DISCARDED, CANCELLED -> List.of("retry", "delete");
      };
    }

    private static String states(Set<JobState> states) {
      List<String> names = states.stream().map(JobsCommand::lower).toList();
      if (names.size() == 1) {
        return names.get(0);
      }
      return String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1);
    }
  }

  /** {@code pglock jobs retry ID}. */
  @Command(name = "retry", mixinStandardHelpOptions = true,
      header = "Makes a discarded or cancelled job available again now, with one more attempt at least.")
  static final class Retry extends OnJob {
    private Optional<JobRetry.Retried> retried = Optional.empty();

    @Override
    Set<JobState> appliesTo() {
      return EnumSet.of(JobState.DISCARDED, JobState.CANCELLED);
    }

    @Override
    boolean act(JobAdmin admin, JobRetry retry) {
      retried = retry.retry(id);
      return retried.isPresent();
    }

    @Override
    String done(Optional<Job> after) {
      return "job " + id + ": retried: available now" + retried.map(r -> " (queue " + r.queue() + ", attempt "
          + r.nextAttempt() + " next" + (r.maxAttempts() == null ? "" : " of " + r.maxAttempts()) + ")").orElse("");
    }
  }

  /** {@code pglock jobs discard ID}. */
  @Command(name = "discard", mixinStandardHelpOptions = true,
      header = "Discards an available or retryable job: it will not run (pglock jobs retry brings it back).")
  static final class Discard extends OnJob {
    @Override
    Set<JobState> appliesTo() {
      return EnumSet.of(JobState.AVAILABLE, JobState.RETRYABLE);
    }

    @Override
    boolean act(JobAdmin admin, JobRetry retry) {
      return admin.discard(id);
    }

    @Override
    String done(Optional<Job> after) {
      return "job " + id + ": discarded";
    }
  }

  /** {@code pglock jobs cancel ID}. */
  @Command(name = "cancel", mixinStandardHelpOptions = true,
      header = "Cancels an available or retryable job; asks a running one to stop.",
      description = {"%nAn available or retryable job is cancelled at once. A running job's handler is told "
          + "(JobContext.isCancelled): the job ends cancelled if it fails after that, succeeded if it completes "
          + "anyway.%n"})
  static final class Cancel extends OnJob {
    @Override
    Set<JobState> appliesTo() {
      return EnumSet.of(JobState.AVAILABLE, JobState.RETRYABLE, JobState.RUNNING);
    }

    @Override
    boolean act(JobAdmin admin, JobRetry retry) {
      return admin.cancel(id);
    }

    @Override
    String done(Optional<Job> after) {
      JobState state = after.map(Job::state).orElse(JobState.CANCELLED);
      return switch (state) {
        case CANCELLED -> "job " + id + ": cancelled";
        case RUNNING -> "job " + id + ": running" + after.map(Job::node).map(n -> " on node " + n).orElse("")
            + ", asked to stop: it ends cancelled if its handler gives up, succeeded if it completes";
        default -> "job " + id + ": was running, asked to stop; it has ended " + lower(state);
      };
    }
  }

  /** {@code pglock jobs delete ID}. */
  @Command(name = "delete", mixinStandardHelpOptions = true,
      header = "Deletes a finished job (succeeded, discarded or cancelled), with its errors.")
  static final class Delete extends OnJob {
    @Override
    Set<JobState> appliesTo() {
      return EnumSet.of(JobState.SUCCEEDED, JobState.DISCARDED, JobState.CANCELLED);
    }

    @Override
    boolean act(JobAdmin admin, JobRetry retry) {
      return admin.delete(id);
    }

    @Override
    String done(Optional<Job> after) {
      return "job " + id + ": deleted";
    }
  }
}
