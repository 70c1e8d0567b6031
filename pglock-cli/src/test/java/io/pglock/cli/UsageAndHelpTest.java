package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Bare {@code pglock}, and the layout of every command's {@code --help}. */
class UsageAndHelpTest {

  @Test
  void barePglock_printsUsageOnStandardError_andExitsWithTheUsageCode() {
    CliRun run = CliRun.of();
    assertThat(run.exitCode()).as(run.describe()).isEqualTo(ExitCodes.USAGE);
    assertThat(run.err()).contains("pglock: a command is needed").contains("Usage: pglock").contains("Commands:");
    assertThat(run.out()).isEmpty();
  }

  /**
   * Every word of every help, URLs, file names and lock names included, is printed whole on one
   * line: picocli broke {@code jdbc:postgresql://db.example:5432/app} after "db." before. The words
   * are those of the same help rendered unwrapped.
   */
  @Test
  void everyHelp_keepsEveryWordWhole_withinEightyColumns() {
    List<String> problems = new ArrayList<>();
    for (CommandLine cl : all(PglockCommand.commandLine())) {
      String wrapped = usage(cl);
      Set<String> printed = Arrays.stream(wrapped.split("\\s+")).collect(Collectors.toSet());
      cl.setUsageHelpWidth(10_000);
      String unwrapped = usage(cl);
      for (String word : unwrapped.split("\\s+")) {
        if (!word.isEmpty() && !printed.contains(word)) {
          problems.add(cl.getCommandSpec().qualifiedName() + ": \"" + word + "\" is broken across lines");
        }
      }
      for (String line : wrapped.split("\n")) {
        if (line.length() > HelpLayout.WIDTH && line.strip().contains(" ")) {
          problems.add(cl.getCommandSpec().qualifiedName() + ": a line of " + line.length() + " columns: " + line);
        }
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void everyDatabaseCommandsUrlOption_saysWhatItConnectsTo_andOffersAConnectTimeout() {
    List<String> problems = new ArrayList<>();
    for (CommandLine cl : all(PglockCommand.commandLine())) {
      CommandLine.Model.OptionSpec url = cl.getCommandSpec().findOption("--url");
      if (url == null) {
        continue;
      }
      String name = cl.getCommandSpec().qualifiedName();
      String text = String.join(" ", url.description());
      if (text.contains("lock on")) {
        problems.add(name + ": --url says \"" + text + "\"");
      }
      if (cl.getCommandSpec().findOption("--connect-timeout") == null) {
        problems.add(name + ": no --connect-timeout");
      }
    }
    assertThat(problems).isEmpty();
  }

  private static String usage(CommandLine cl) {
    StringWriter w = new StringWriter();
    cl.usage(new PrintWriter(w));
    return w.toString();
  }

  private static List<CommandLine> all(CommandLine root) {
    List<CommandLine> out = new ArrayList<>(List.of(root));
    for (CommandLine sub : root.getSubcommands().values()) {
      out.addAll(all(sub));
    }
    return out;
  }
}
