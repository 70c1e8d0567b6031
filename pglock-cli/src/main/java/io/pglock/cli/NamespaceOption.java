package io.pglock.cli;

import io.pglock.LockKey;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --namespace} option every command shares (a picocli mixin): the namespace names
 * live in, {@code default} like the library's, or {@code PGLOCK_NAMESPACE} from the environment.
 */
final class NamespaceOption {
  @Spec(Spec.Target.MIXEE)
  private CommandSpec spec;

  @Option(names = "--namespace", paramLabel = "NS", defaultValue = "${env:PGLOCK_NAMESPACE:-default}",
      description = "Namespace of the lock names, as PgLocksBuilder.namespace sets it: usually the service's "
          + "name (default: $PGLOCK_NAMESPACE, else ${DEFAULT-VALUE}).")
  private String namespace;

  /**
   * The namespace, checked as the library checks it.
   *
   * @throws ParameterException naming the problem, so that it exits with the usage code
   */
  String namespace() {
    try {
      return LockKey.checkNamespace(namespace);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), "--namespace: " + e.getMessage());
    }
  }

  /**
   * The key of a name in the namespace.
   *
   * @throws ParameterException if the namespace or the name is not valid, naming the problem
   */
  LockKey key(String name) {
    String ns = namespace();
    try {
      return LockKey.named(ns, name);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }
}
