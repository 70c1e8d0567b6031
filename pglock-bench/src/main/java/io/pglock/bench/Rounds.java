package io.pglock.bench;

import java.util.Arrays;
import java.util.Locale;

/**
 * Interleaved rounds of a baseline and a pglock measurement, so that both sides see the same
 * background load: B P, P B, B P, ... (the order alternates so that neither side always runs
 * first). The reported ratio is the median of the per-round ratios pglock/baseline; each round
 * pairs two measurements taken a second apart, which cancels slow drift of a shared machine. Load
 * that comes and goes faster (other test suites starting and stopping) makes the rounds bimodal,
 * so the tables report the quiet rounds (see {@link Paired#quiet}), and the notes all rounds.
 */
final class Rounds {
  private Rounds() {}

  @FunctionalInterface
  interface Measure {
    double run() throws Exception;
  }

  /** A baseline round counts as quiet within this factor of the baseline's best round. */
  static final double QUIET_FACTOR = 1.5;

  record Paired(double[] baseline, double[] pglock) {
    double baselineMedian() {
      return median(baseline);
    }

    double pglockMedian() {
      return median(pglock);
    }

    /** Median over rounds of pglock / baseline. */
    double ratio() {
      double[] r = new double[baseline.length];
      for (int i = 0; i < r.length; i++) {
        r[i] = pglock[i] / baseline[i];
      }
      return median(r);
    }

    /**
     * The quiet rounds only: those whose baseline is within {@link #QUIET_FACTOR} of the baseline's
     * best round. On a machine whose load comes and goes, these are the figures of its quiet moments;
     * on a steady machine every round is quiet. All rounds if fewer than 3 (or than all) are quiet.
     */
    Paired quiet(boolean lowerIsBetter) {
      double best = lowerIsBetter ? Arrays.stream(baseline).min().orElseThrow()
          : Arrays.stream(baseline).max().orElseThrow();
      double[] b = new double[baseline.length];
      double[] p = new double[baseline.length];
      int n = 0;
      for (int i = 0; i < baseline.length; i++) {
        if (lowerIsBetter ? baseline[i] <= best * QUIET_FACTOR : baseline[i] >= best / QUIET_FACTOR) {
          b[n] = baseline[i];
          p[n++] = pglock[i];
        }
      }
      return n < Math.min(3, baseline.length) ? this : new Paired(Arrays.copyOf(b, n), Arrays.copyOf(p, n));
    }

    int rounds() {
      return baseline.length;
    }

    String detail(String format) {
      StringBuilder b = new StringBuilder("rounds baseline/pglock:");
      for (int i = 0; i < baseline.length; i++) {
        b.append(' ').append(String.format(Locale.ROOT, format, baseline[i])).append('/')
            .append(String.format(Locale.ROOT, format, pglock[i]));
      }
      return b.toString();
    }
  }

  /** One unmeasured warm-up of each side, then {@code rounds} measured rounds of each, interleaved. */
  static Paired interleave(int rounds, Measure baseline, Measure pglock) throws Exception {
    baseline.run();
    pglock.run();
    double[] b = new double[rounds];
    double[] p = new double[rounds];
    for (int i = 0; i < rounds; i++) {
      if (i % 2 == 0) {
        b[i] = baseline.run();
        p[i] = pglock.run();
      } else {
        p[i] = pglock.run();
        b[i] = baseline.run();
      }
    }
    return new Paired(b, p);
  }

  /** A note comparing all rounds with the quiet ones. */
  static String summary(Paired all, Paired quiet, String format) {
    return Report.fmt("ratio over all %d rounds %.2fx (medians " + format + " / " + format + "); quiet rounds "
        + "(baseline within %.1fx of its best): %d, ratio %.2fx", all.rounds(), all.ratio(), all.baselineMedian(),
        all.pglockMedian(), QUIET_FACTOR, quiet.rounds(), quiet.ratio());
  }

  static double median(double[] values) {
    double[] s = values.clone();
    Arrays.sort(s);
    int n = s.length;
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }
}
