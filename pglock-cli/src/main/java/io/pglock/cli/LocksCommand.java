package io.pglock.cli;

import io.pglock.LockEntry;
import io.pglock.LockListing;
import io.pglock.LockSessionException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code pglock locks [--watch [INTERVAL]]}: who holds which advisory lock of the database and who
 * waits for it, read from the view {@code <schema>.locks} through {@link LockListing}. Every
 * namespace is shown unless {@code --namespace} (or {@code PGLOCK_NAMESPACE}) names one. With
 * {@code --watch} it redraws until stopped (Ctrl-C, SIGTERM) or {@code --count} redraws are done;
 * every refresh is bounded by a statement timeout, and a refresh that fails is shown and the next
 * one tried. Exit codes: 0, 2 bad options, 3 database unreachable, 5 schema missing.
 */
@Command(name = "locks",
    mixinStandardHelpOptions = true,
    header = "Shows who holds which advisory lock, and who waits for it.",
    description = {
        "%nOne row per holder or waiter of an advisory lock of the database, waiters indented under the lock "
            + "they wait for: the lock (namespace:name when pglock recorded the name, else the raw key other "
            + "tools took), its mode, held or waiting, the backend's pid, the pglock node, the client "
            + "(pglock's session role, or the application_name of other clients, and the address), the scope, "
            + "since when (an age: for a waiter its wait, for a holder the earliest it can have taken the "
            + "lock), and for a waiter the pids it waits for. Reads the view <schema>.locks "
            + "(PgLockSchema.migrate, schema version 3 or later). Ages count by this host's clock.%n"},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock locks",
        "  pglock locks --namespace billing --name 'invoice-*'",
        "  pglock locks --watch 5s        # redraw every 5 s until Ctrl-C"},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:shown (--watch: --count refreshes done)",
        "2:bad options",
        "3:the database could not be reached",
        "5:pglock's schema (or its view locks) is missing: run PgLockSchema.migrate or the migration files",
        "6:the role lacks a privilege (CONNECT on the database, USAGE on the schema, or one on a table, view or function): the message names the GRANT to run",
        "130:--watch stopped by Ctrl-C (SIGINT)",
        "143:--watch stopped by SIGTERM"})
public final class LocksCommand implements Callable<Integer> {
  /** How long one refresh may take, for the query and for connecting. */
  static final Duration QUERY_TIMEOUT = Duration.ofSeconds(10);
  static final Duration MIN_INTERVAL = Duration.ofMillis(100);
  static final Duration MAX_INTERVAL = Duration.ofHours(1);
  private static final String CLEAR_SCREEN = "\033[H\033[2J";
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  @Spec
  private CommandSpec spec;

  @Mixin
  private DatabaseOptions database;

  @Mixin
  private NamespaceFilter namespaces;

  @Mixin
  private SchemaOption schema;

  @Option(names = "--name", paramLabel = "PATTERN",
      description = "Show only locks whose name matches: * any characters, ? one (quote it from the shell). "
          + "Raw keys have no name and are left out.")
  private String name;

  @Option(names = {"-w", "--watch"}, arity = "0..1", fallbackValue = "2s", paramLabel = "INTERVAL",
      converter = DurationConverter.class,
      description = "Redraw every INTERVAL (default 2s) until Ctrl-C; clears the screen at a terminal, else "
          + "prints a separator line with the time before each refresh.")
  private Duration watch;

  @Option(names = "--count", paramLabel = "N",
      description = "With --watch: stop after N refreshes (exit code 0).")
  private Integer count;

  @Override
  public Integer call() throws InterruptedException {
    validate();
    Optional<String> namespace = namespaces.namespace();
    Optional<NameGlob> glob = Optional.ofNullable(name).map(NameGlob::new);
    LockListing listing = LockListing.of(database.readingDataSource(QUERY_TIMEOUT), schema.schema());
    PrintWriter out = spec.commandLine().getOut();
    if (watch == null) {
      print(out, frame(listing, namespace, glob));
      return ExitCodes.OK;
    }
    boolean terminal = System.console() != null;
    for (int refresh = 1; count == null || refresh <= count; refresh++) {
      if (refresh > 1) {
        Thread.sleep(watch.toMillis()); // the pace the operator asked for
      }
      List<String> lines;
      try {
        lines = frame(listing, namespace, glob);
      } catch (LockSessionException e) {
        if (refresh == 1) {
          throw e; // a wrong URL or password: say so and stop, as without --watch
        }
        lines = List.of("pglock locks: " + e.getMessage() + " (trying again in " + DurationConverter.format(watch) + ")");
      }
      out.print(terminal ? CLEAR_SCREEN : "--- ");
      out.println("pglock locks, every " + DurationConverter.format(watch) + ", " + LocalDateTime.now().format(TIME)
          + (terminal ? " (Ctrl-C to stop)" : ""));
      print(out, lines);
    }
    return ExitCodes.OK;
  }

  private static List<String> frame(LockListing listing, Optional<String> namespace, Optional<NameGlob> glob) {
    List<LockEntry> entries = listing.list().stream()
        .filter(e -> namespace.isEmpty() || namespace.get().equals(e.key().namespace()))
        .filter(e -> glob.isEmpty() || glob.get().matches(e.key().name()))
        .toList();
    if (entries.isEmpty() && (namespace.isPresent() || glob.isPresent())) {
      return List.of("no advisory locks held or awaited" + namespace.map(ns -> " in namespace " + ns).orElse("")
          + glob.map(g -> " with a name matching " + g).orElse(""));
    }
    return LocksTable.lines(entries, Instant.now());
  }

  private static void print(PrintWriter out, List<String> lines) {
    lines.forEach(out::println);
    out.flush();
  }

  private void validate() {
    if (name != null && name.isEmpty()) {
      throw new ParameterException(spec.commandLine(), "--name must not be empty");
    }
    if (count != null && watch == null) {
      throw new ParameterException(spec.commandLine(), "--count needs --watch");
    }
    if (count != null && count < 1) {
      throw new ParameterException(spec.commandLine(), "--count must be at least 1: " + count);
    }
    if (watch != null && (watch.compareTo(MIN_INTERVAL) < 0 || watch.compareTo(MAX_INTERVAL) > 0)) {
      throw new ParameterException(spec.commandLine(),
          "--watch interval must be between 100ms and 1h: " + DurationConverter.format(watch));
    }
  }
}
