package io.pglock.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table for a terminal: a header and rows of cells, each column as wide as its widest
 * cell, cells longer than their column's limit cut with "..." so that one long lock name cannot push
 * every other column off the screen. Trailing blanks are trimmed. Not thread-safe.
 */
final class TextTable {
  private static final String GAP = "  ";

  private final List<String> header;
  private final int[] maxWidths;
  private final List<List<String>> rows = new ArrayList<>();

  /** A table with these column titles, each column at most as wide as the limit at its index. */
  TextTable(List<String> header, int... maxWidths) {
    if (header.size() != maxWidths.length) {
      throw new IllegalArgumentException(header.size() + " columns but " + maxWidths.length + " widths");
    }
    this.header = header;
    this.maxWidths = maxWidths;
  }

  void add(List<String> cells) {
    if (cells.size() != header.size()) {
      throw new IllegalArgumentException(header.size() + " columns but " + cells.size() + " cells: " + cells);
    }
    List<String> row = new ArrayList<>(cells.size());
    for (int i = 0; i < cells.size(); i++) {
      row.add(cut(cells.get(i), maxWidths[i]));
    }
    rows.add(row);
  }

  boolean isEmpty() {
    return rows.isEmpty();
  }

  /** {@return the header line, then one line per row} */
  List<String> lines() {
    int[] widths = new int[header.size()];
    for (int i = 0; i < widths.length; i++) {
      widths[i] = header.get(i).length();
      for (List<String> row : rows) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    List<String> lines = new ArrayList<>();
    lines.add(line(header, widths));
    rows.forEach(r -> lines.add(line(r, widths)));
    return lines;
  }

  private static String line(List<String> cells, int[] widths) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      if (i > 0) {
        b.append(GAP);
      }
      b.append(cells.get(i));
      b.append(" ".repeat(widths[i] - cells.get(i).length()));
    }
    return b.toString().stripTrailing();
  }

  private static String cut(String cell, int max) {
    String oneLine = cell.replaceAll("[\\r\\n\\t]+", " ");
    return oneLine.length() <= max ? oneLine : oneLine.substring(0, max - 3) + "...";
  }
}
