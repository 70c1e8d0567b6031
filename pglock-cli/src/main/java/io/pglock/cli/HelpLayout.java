package io.pglock.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.IHelpSectionRenderer;

/**
 * The layout of every {@code --help}: lines of at most {@link #WIDTH} columns, broken at spaces
 * only. Picocli breaks lines where {@link java.text.BreakIterator} allows, which includes after
 * '.', '-', ':' and '/', so it printed {@code jdbc:postgresql://db.} on one line and
 * {@code example:5432/app} on the next, and split file names and lock names the same way; a
 * reader copying them got them wrong. Here picocli renders each section unwrapped (at a width no
 * line reaches) and this class wraps it again at spaces, keeping picocli's indentation: a
 * two-column line (an option, a subcommand, an exit code) continues under its second column, a
 * usage line under its first option, anything else under its own indent. A word longer than a
 * line stands alone on its line, whole.
 */
final class HelpLayout {
  /** The width help is wrapped to: picocli's default, what a terminal shows without wrapping. */
  static final int WIDTH = 80;
  /** Wider than any line of the help, so that picocli wraps nothing. */
  private static final int UNWRAPPED = 10_000;
  /** A left column, then at least two spaces, then the second column. */
  private static final Pattern TWO_COLUMNS = Pattern.compile("^( *\\S+(?: \\S+)*? {2,})\\S");

  private HelpLayout() {}

  /** Applies the layout to a command line and every subcommand under it. */
  static void apply(CommandLine cl) {
    cl.setUsageHelpWidth(UNWRAPPED);
    cl.setUsageHelpLongOptionsMaxWidth(30);
    cl.setColorScheme(Help.defaultColorScheme(Help.Ansi.OFF));
    Map<String, IHelpSectionRenderer> sections = new LinkedHashMap<>(cl.getHelpSectionMap());
    sections.replaceAll((key, renderer) -> key.equals(CommandLine.Model.UsageMessageSpec.SECTION_KEY_SYNOPSIS)
        ? help -> wrapSynopsis(renderer.render(help))
        : help -> wrap(renderer.render(help)));
    cl.setHelpSectionMap(sections);
    for (CommandLine sub : cl.getSubcommands().values()) {
      apply(sub);
    }
  }

  /**
   * Wraps the synopsis, which follows the heading {@code "Usage: "} on its line, continuing under
   * its first option.
   */
  static String wrapSynopsis(String text) {
    String heading = "Usage: ";
    String wrapped = wrap(heading + text);
    return wrapped.substring(heading.length());
  }

  /** Wraps every line of a rendered section at spaces, within {@link #WIDTH}. */
  static String wrap(String text) {
    if (text == null || text.isEmpty()) {
      return text;
    }
    StringBuilder sb = new StringBuilder();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      if (i > 0) {
        sb.append('\n');
      }
      sb.append(String.join("\n", wrapLine(lines[i])));
    }
    return sb.toString();
  }

  private static List<String> wrapLine(String line) {
    List<String> out = new ArrayList<>();
    if (line.stripTrailing().length() <= WIDTH) {
      out.add(line);
      return out;
    }
    // The first line keeps its left column and the gap after it as picocli laid them out.
    Matcher m = TWO_COLUMNS.matcher(line);
    String prefix = m.find() && m.group(1).length() < WIDTH / 2 ? m.group(1) : " ".repeat(indentOf(line));
    String hang = " ".repeat(hangingIndent(line));
    StringBuilder current = new StringBuilder(prefix);
    boolean fresh = true; // nothing but the prefix or indentation on the current line yet
    for (String w : line.substring(prefix.length()).split(" +")) {
      if (!fresh && current.length() + 1 + w.length() > WIDTH) {
        out.add(current.toString());
        current = new StringBuilder(hang);
        fresh = true;
      }
      if (!fresh) {
        current.append(' ');
      }
      current.append(w);
      fresh = false;
    }
    out.add(current.toString());
    return out;
  }

  /** Where a wrapped line continues: under the second column, the first option, or its own indent. */
  private static int hangingIndent(String line) {
    if (line.startsWith("Usage: ")) {
      int bracket = line.indexOf(" [");
      return bracket > 0 && bracket < WIDTH / 2 ? bracket + 1 : "Usage: ".length();
      // (the command's name is followed by its options in brackets)
    }
    Matcher m = TWO_COLUMNS.matcher(line);
    if (m.find() && m.group(1).length() < WIDTH / 2) {
      return m.group(1).length() + 2;
    }
    return indentOf(line);
  }

  private static int indentOf(String line) {
    int i = 0;
    while (i < line.length() && line.charAt(i) == ' ') {
      i++;
    }
    return i;
  }
}
