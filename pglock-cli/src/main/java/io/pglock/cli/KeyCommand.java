package io.pglock.cli;

import io.pglock.LockKey;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code pglock key NAME}: the 64-bit key of a lock name, how {@code pg_locks} shows it, and the
 * SQL that computes it and takes it, so that psql, scripts and other languages can lock the same
 * name. Computed here, with no database. Exit codes: 0, or 2 for a bad name or namespace.
 */
@Command(name = "key",
    mixinStandardHelpOptions = true,
    header = "Prints the advisory-lock key of a name, and the SQL that computes and takes it.",
    description = {
        "%nThe key is the first 8 bytes of SHA-256 over the UTF-8 bytes of \"namespace:name\", as a signed "
            + "64-bit integer: the same lock as PgLocks.lock(name) with that namespace, and as "
            + "pg_advisory_lock(pglock.key('namespace', 'name')) in SQL. Needs no database.%n"},
    footerHeading = "%nExamples:%n",
    footer = {
        "  pglock key --namespace billing invoice-42",
        "  psql -c \"SELECT pg_try_advisory_lock($(pglock key --namespace billing --quiet invoice-42))\""},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:printed", "2:bad options (a blank or too long name, a namespace with ':' or spaces)"})
public final class KeyCommand implements Callable<Integer> {
  @Spec
  private CommandSpec spec;

  @Mixin
  private NamespaceOption namespace;

  @Parameters(paramLabel = "NAME", description = "The lock name, as given to PgLocks.lock(name) or pglock run --name.")
  private String name;

  @Option(names = {"-q", "--quiet"}, description = "Print only the 64-bit key, for scripts.")
  private boolean quiet;

  @Override
  public Integer call() {
    LockKey key = namespace.key(name);
    PrintWriter out = spec.commandLine().getOut();
    if (quiet) {
      out.println(key.int64());
      out.flush();
      return ExitCodes.OK;
    }
    out.println("name       " + key);
    out.println("key        " + key.int64() + "  (bigint; the lock of pg_advisory_lock(" + key.int64() + "))");
    // pg_locks shows a 64-bit key as two unsigned 32-bit oids: the high half, then the low half.
    out.println("pg_locks   locktype = 'advisory', classid = " + Integer.toUnsignedLong(key.first())
        + ", objid = " + Integer.toUnsignedLong(key.second()) + ", objsubid = " + key.objsubid());
    out.println();
    out.println("SQL, with the pglock schema installed:");
    out.println("  " + KeySql.keyFunction(key) + ";");
    out.println("SQL, with built-in functions only:");
    out.println("  " + KeySql.builtIns(key) + ";");
    out.println("Lock it from psql (released by pg_advisory_unlock or when the session ends):");
    out.println("  " + KeySql.lockCall(key, "pg_advisory_lock") + ";");
    out.println("  " + KeySql.lockCall(key, "pg_try_advisory_lock") + ";   -- without waiting");
    out.flush();
    return ExitCodes.OK;
  }
}
