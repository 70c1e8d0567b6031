package io.pglock.cli;

import io.pglock.LockKey;
import java.util.Optional;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The namespace options of the commands that show what is there ({@code pglock locks},
 * {@code pglock history}, {@code pglock tasks}), a picocli mixin. Unlike {@link NamespaceOption} there is no
 * {@code default} namespace: an operator who asks who holds what wants every service's locks unless
 * they name one, and locks taken with raw keys belong to no namespace at all.
 * {@code PGLOCK_NAMESPACE} filters as {@code --namespace} does, since scripts set it for their
 * service; {@code --all-namespaces} overrides it.
 */
final class NamespaceFilter {
  @Spec(Spec.Target.MIXEE)
  private CommandSpec spec;

  @Option(names = "--namespace", paramLabel = "NS", defaultValue = "${env:PGLOCK_NAMESPACE}",
      description = "Show only this namespace (default: $PGLOCK_NAMESPACE, else every namespace; locks and "
          + "history also show the raw keys of other tools).")
  private String namespace;

  @Option(names = "--all-namespaces",
      description = "Show every namespace (and, for locks and history, the raw keys of other tools), even if "
          + "PGLOCK_NAMESPACE is set.")
  private boolean all;

  /**
   * The namespace to show, or empty for all.
   *
   * @throws ParameterException if both options are given, or the namespace is not valid
   */
  Optional<String> namespace() {
    if (all) {
      if (spec.commandLine().getParseResult().hasMatchedOption("--namespace")) {
        throw new ParameterException(spec.commandLine(), "--namespace and --all-namespaces exclude each other");
      }
      return Optional.empty();
    }
    if (namespace == null || namespace.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(LockKey.checkNamespace(namespace));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), "--namespace: " + e.getMessage());
    }
  }
}
