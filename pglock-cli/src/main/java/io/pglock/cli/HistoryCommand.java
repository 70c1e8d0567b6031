package io.pglock.cli;

import io.pglock.cli.HistoryQuery.Hold;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code pglock history [--failed]}: the lock history, newest first, from the view
 * {@code <schema>.history} that {@code SessionLock.run} writes with history on (and
 * {@code pglock run --history}). {@code --show-stack ID} prints one hold with its error stack.
 * Exit codes: 0, 1 no hold with that id, 2 bad options, 3 database unreachable, 5 schema missing,
 * 6 the role may not read the history.
 */
@Command(name = "history",
    mixinStandardHelpOptions = true,
    header = "Shows the lock history: who held which lock, when, for how long, and how it ended.",
    description = {
        "%nOne row per hold, newest first: its id, when it was acquired (this host's time zone, the holder's "
            + "clock), the lock, the node and backend pid that held it, for how long, how it ended (open, "
            + "released, failed, lost, disconnected) and why (the work's exception class and the first line of "
            + "its message, or the cause of a loss). Only holds taken through SessionLock.run with history on "
            + "(PgLocksBuilder.history(), withHistory(), pglock run --history) are recorded. Reads the view "
            + "<schema>.history (schema version 4), which is not granted to PUBLIC: grant SELECT on it to the "
            + "operator's role.%n"},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock history --failed --since 1d",
        "  pglock history --namespace billing --name 'invoice-*' --limit 20",
        "  pglock history --show-stack 4120938470129834"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:shown",
        "1:--show-stack: no hold with that id",
        "2:bad options",
        "3:the database could not be reached",
        "5:pglock's schema (or its view history) is missing: run PgLockSchema.migrate or the migration files",
        "6:the role lacks a privilege (CONNECT on the database, USAGE on the schema, or one on a table, view or function): the message names the GRANT to run"})
public final class HistoryCommand implements Callable<Integer> {
  static final int MAX_LIMIT = 10_000;
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");
  private static final List<String> HEADER =
      List.of("ID", "ACQUIRED", "LOCK", "NODE", "PID", "HELD FOR", "OUTCOME", "DETAIL");
  private static final int[] MAX_WIDTHS = {20, 19, 50, 40, 7, 8, 12, 100};

  @Spec
  private CommandSpec spec;

  @Mixin
  private DatabaseOptions database;

  @Mixin
  private NamespaceFilter namespaces;

  @Mixin
  private SchemaOption schema;

  @Option(names = "--failed", description = "Only holds that failed, were lost or whose holder disconnected.")
  private boolean failed;

  @Option(names = "--name", paramLabel = "PATTERN",
      description = "Only locks whose name matches: * any characters, ? one (quote it from the shell).")
  private String name;

  @Option(names = "--since", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "Only holds acquired within this long before now: 30m, 12h, 7d.")
  private Duration since;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
      description = "At most N holds, the newest (default: ${DEFAULT-VALUE}, at most 10000).")
  private int limit;

  @Option(names = "--show-stack", paramLabel = "ID",
      description = "Print the hold with this id (the first column) and the stack of its failure, instead of a list.")
  private Long showStack;

  @Override
  public Integer call() {
    validate();
    HistoryQuery query = new HistoryQuery(database.readingDataSource(LocksCommand.QUERY_TIMEOUT), schema.schema());
    PrintWriter out = spec.commandLine().getOut();
    if (showStack != null) {
      return printStack(query, showStack, out);
    }
    HistoryQuery.Filter filter = new HistoryQuery.Filter(namespaces.namespace(),
        Optional.ofNullable(name).map(NameGlob::new), failed, Optional.ofNullable(since), limit);
    List<Hold> holds = query.holds(filter);
    if (holds.isEmpty()) {
      out.println("no " + (failed ? "failed, lost or disconnected " : "") + "holds recorded"
          + filter.namespace().map(ns -> " in namespace " + ns).orElse("")
          + filter.name().map(g -> " with a name matching " + g).orElse("")
          + filter.since().map(d -> " within " + DurationConverter.format(d)).orElse("")
          + " (recorded: SessionLock.run with history on, pglock run --history)");
    } else {
      TextTable table = new TextTable(HEADER, MAX_WIDTHS);
      holds.forEach(h -> table.add(row(h)));
      table.lines().forEach(out::println);
    }
    out.flush();
    return ExitCodes.OK;
  }

  private int printStack(HistoryQuery query, long id, PrintWriter out) {
    Optional<HistoryQuery.HoldWithStack> found = query.hold(id);
    if (found.isEmpty()) {
      PrintWriter err = spec.commandLine().getErr();
      err.println("pglock history: no hold with id " + id + " in " + schema.schema() + ".history");
      err.flush();
      return ExitCodes.CHECK_FAILED;
    }
    Hold h = found.get().hold();
    out.println("id        " + h.id());
    out.println("lock      " + lockName(h));
    out.println("holder    node " + h.node() + ", backend pid " + h.pid());
    out.println("acquired  " + TIME.format(h.acquiredAt().atZone(ZoneId.systemDefault())));
    out.println("held for  " + h.heldFor().map(HistoryCommand::heldFor).orElse("- (still open)"));
    out.println("outcome   " + h.outcome() + h.lossCause().map(c -> " (" + c + ")").orElse(""));
    h.errorClass().ifPresent(c -> out.println("error     " + c + h.errorMessage().map(m -> ": " + m).orElse("")));
    out.println(found.get().stack().map(s -> "stack:" + System.lineSeparator() + s).orElse("stack:   none recorded"));
    out.flush();
    return ExitCodes.OK;
  }

  private static List<String> row(Hold h) {
    return List.of(Long.toString(h.id()), TIME.format(h.acquiredAt().atZone(ZoneId.systemDefault())), lockName(h),
        h.node(), Integer.toString(h.pid()), h.heldFor().map(HistoryCommand::heldFor).orElse("-"), h.outcome(),
        detail(h));
  }

  /** Why the hold ended as it did, in one line: the exception and its message's first line, or the loss cause. */
  static String detail(Hold h) {
    if (h.errorClass().isPresent()) {
      String c = h.errorClass().get();
      String simple = c.substring(c.lastIndexOf('.') + 1);
      return simple + h.errorMessage().map(m -> ": " + m.lines().findFirst().orElse("")).orElse("");
    }
    return h.lossCause().orElse("");
  }

  /** Holds raw keys under namespace "" and the key's text as the name; named locks as namespace:name. */
  private static String lockName(Hold h) {
    return h.namespace().isEmpty() ? h.name() : h.namespace() + ":" + h.name();
  }

  /** Sub-second precision where it matters: "230ms", "4.2s", then "3m12s" as ages. */
  static String heldFor(Duration d) {
    if (d.compareTo(Duration.ofSeconds(1)) < 0) {
      return Math.max(0, d.toMillis()) + "ms";
    }
    if (d.compareTo(Duration.ofMinutes(1)) < 0) {
      return String.format(Locale.ROOT, "%.1fs", d.toMillis() / 1000.0);
    }
    return Ages.format(d);
  }

  private void validate() {
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new ParameterException(spec.commandLine(), "--limit must be between 1 and " + MAX_LIMIT + ": " + limit);
    }
    if (name != null && name.isEmpty()) {
      throw new ParameterException(spec.commandLine(), "--name must not be empty");
    }
    boolean listing = failed || name != null || since != null
        || spec.commandLine().getParseResult().hasMatchedOption("--limit");
    if (showStack != null && listing) {
      throw new ParameterException(spec.commandLine(),
          "--show-stack prints one hold; it takes none of --failed, --name, --since, --limit");
    }
  }
}
