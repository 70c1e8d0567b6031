package io.pglock.cli;

import java.util.regex.Pattern;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --schema} option of the commands that read or use pglock's database objects (a picocli
 * mixin): the schema {@code PgLockSchema.migrate} installed them in, {@code pglock} unless
 * {@code PGLOCK_SCHEMA} says otherwise.
 */
final class SchemaOption {
  // As the library checks it (PgLockSchema.migrate): the name goes into SQL text, so nothing else passes.
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  @Spec(Spec.Target.MIXEE)
  private CommandSpec spec;

  @Option(names = "--schema", paramLabel = "SCHEMA", defaultValue = "${env:PGLOCK_SCHEMA:-pglock}",
      description = "Schema of pglock's tables and views, as given to PgLockSchema.migrate "
          + "(default: $PGLOCK_SCHEMA, else ${DEFAULT-VALUE}).")
  private String schema;

  /**
   * The schema name, checked.
   *
   * @throws ParameterException unless it is a lower-case SQL identifier, so that it exits with the usage code
   */
  String schema() {
    if (schema == null || !IDENTIFIER.matcher(schema).matches()) {
      throw new ParameterException(spec.commandLine(), "--schema must be a lower-case SQL identifier "
          + "(letters, digits and '_', not starting with a digit, at most 63 characters): \"" + schema + "\"");
    }
    return schema;
  }
}
