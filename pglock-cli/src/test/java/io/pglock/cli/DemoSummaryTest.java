package io.pglock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The summary's check line, fed from a ledger directly (no database). */
class DemoSummaryTest {
  private final ResourceLedger ledger = new ResourceLedger(List.of("a", "b"));
  private final StringWriter out = new StringWriter();
  private final Console console = new Console(new PrintWriter(out));

  @Test
  void print_everyResourceOncePerRound_passes() {
    ledger.startRound();
    work("a");
    work("b");

    assertThat(new DemoSummary(List.of(), ledger, 1).print(console)).isTrue();
    assertThat(out.toString()).contains("check: OK: 0 overlaps (never two workers inside one resource at once); "
        + "every round processed all 2 resources, none twice");
  }

  @Test
  void print_overlapRecorded_fails() {
    ledger.startRound();
    ledger.enter("a");
    ledger.enter("a");
    ledger.processed("a");
    ledger.processed("a");
    ledger.exit("a");
    ledger.exit("a");
    work("b");

    assertThat(new DemoSummary(List.of(), ledger, 1).print(console)).isFalse();
    assertThat(out.toString()).contains("check: FAILED: 1 overlaps (up to 2 workers inside one resource at once); "
        + "round 1 processed 1 resources twice");
  }

  @Test
  void print_resourceMissedInARound_fails() {
    ledger.startRound();
    work("a");
    work("b");
    ledger.startRound();
    work("b");

    assertThat(new DemoSummary(List.of(), ledger, 2).print(console)).isFalse();
    assertThat(out.toString()).contains("check: FAILED: 0 overlaps").contains("; round 2 processed 1 of 2");
  }

  private void work(String resource) {
    ledger.enter(resource);
    ledger.processed(resource);
    ledger.exit(resource);
  }
}
