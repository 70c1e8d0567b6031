package io.pglock.cli;

import java.util.List;

/**
 * The demo's closing report: per-worker counts, the total, and the check line that says whether
 * the locks did their job. Immutable once built.
 */
final class DemoSummary {
  private final List<DemoWorker> workers;
  private final ResourceLedger ledger;
  private final int rounds;

  DemoSummary(List<DemoWorker> workers, ResourceLedger ledger, int rounds) {
    this.workers = List.copyOf(workers);
    this.ledger = ledger;
    this.rounds = rounds;
  }

  /**
   * Prints the summary.
   *
   * @return true if the checks hold: no overlap, and every resource processed exactly once in
   *     every round
   */
  boolean print(Console console) {
    int resources = ledger.resources().size();
    console.plain("");
    console.plain("summary over " + DemoCommand.count(rounds, "round"));
    int total = 0;
    for (DemoWorker w : workers) {
      console.plain(DemoFleet.tally(w.name(), w.processed(), w.alreadyDone(), w.busy()));
      total += w.processed();
    }
    console.plain("  total processed: " + total + " (" + resources + " resources x " + DemoCommand.count(rounds, "round")
        + " = " + resources * rounds + ")");

    List<Integer> distinct = ledger.distinctProcessedPerRound();
    List<Integer> twice = ledger.processedTwicePerRound();
    int overlaps = ledger.overlaps();
    StringBuilder roundProblems = new StringBuilder();
    for (int i = 0; i < rounds; i++) {
      int done = i < distinct.size() ? distinct.get(i) : 0;
      if (done != resources) {
        roundProblems.append("; round ").append(i + 1).append(" processed ").append(done).append(" of ")
            .append(resources);
      }
      if (i < twice.size() && twice.get(i) > 0) {
        roundProblems.append("; round ").append(i + 1).append(" processed ").append(twice.get(i))
            .append(" resources twice");
      }
    }
    boolean ok = overlaps == 0 && roundProblems.length() == 0;
    console.plain("  check: " + (ok ? "OK" : "FAILED") + ": " + overlaps + " overlaps ("
        + (ledger.maxInFlight() <= 1 ? "never two workers inside one resource at once"
            : "up to " + ledger.maxInFlight() + " workers inside one resource at once") + ")"
        + (roundProblems.length() == 0 ? "; every round processed all " + resources + " resources, none twice"
            : roundProblems));
    return ok;
  }
}
