package io.pglock.dashboard.internal.view;

import java.util.ArrayList;
import java.util.List;

/**
 * A bar chart drawn as inline SVG on the server: no script, no chart library.
 *
 * @param title what it shows
 * @param bars the bars, stacked where a bucket has several series
 * @param width the drawing's width
 * @param height the drawing's height
 * @param max the value at the top of the scale
 * @param from the label under the first bucket
 * @param to the label under the last bucket
 * @param note a remark shown under the chart (a capped window), or ""
 */
public record Chart(String title, List<Bar> bars, int width, int height, long max, String from, String to,
    String note) {
  /** Height of the drawing. */
  public static final int HEIGHT = 80;

  /**
   * One rectangle.
   *
   * @param x left edge
   * @param y top edge
   * @param w width
   * @param h height
   * @param series the series' CSS class
   * @param tip the tooltip
   */
  public record Bar(double x, double y, double w, double h, String series, String tip) {}

  /** {@return true if no bucket has a value} */
  public boolean empty() {
    return bars.isEmpty();
  }

  /**
   * {@return a stacked chart of buckets}
   *
   * @param title what it shows
   * @param labels one label per bucket (tooltips)
   * @param series the series' CSS classes
   * @param values values[series][bucket]
   * @param from label under the first bucket
   * @param to label under the last bucket
   * @param note remark under the chart
   */
  public static Chart stacked(String title, List<String> labels, List<String> series, long[][] values, String from,
      String to, String note) {
    int buckets = labels.size();
    // At least wide enough for the axis under it: two timestamps and the top value.
    int width = Math.max(480, buckets * 8);
    long max = 1;
    for (int b = 0; b < buckets; b++) {
      long sum = 0;
      for (long[] v : values) {
        sum += v[b];
      }
      max = Math.max(max, sum);
    }
    double slot = (double) width / Math.max(1, buckets);
    List<Bar> bars = new ArrayList<>();
    for (int b = 0; b < buckets; b++) {
      double top = HEIGHT;
      for (int s = 0; s < series.size(); s++) {
        long v = values[s][b];
        if (v <= 0) {
          continue;
        }
        double h = Math.max(1, HEIGHT * (double) v / max);
        top -= h;
        bars.add(new Bar(b * slot + 1, top, Math.max(1, slot - 2), h, series.get(s),
            labels.get(b) + ": " + String.format("%,d", v) + " " + series.get(s)));
      }
    }
    return new Chart(title, List.copyOf(bars), width, HEIGHT, max, from, to, note);
  }
}
