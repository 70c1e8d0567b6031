package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class WorkDistributorTest extends PgLocksTestSupport {
  private static final List<Integer> RESOURCES = IntStream.rangeClosed(1, 10).boxed().collect(Collectors.toList());

  @Test
  void run_skipsHeldResources_recordsFailures_andHoldsTheLockDuringWork() {
    PgLocks worker = newLocks();
    PgLocks other = newLocks();
    LockHandle busy = other.lock("r-3").tryAcquire().orElseThrow();
    List<Boolean> heldDuringWork = new ArrayList<>();
    WorkDistributor.WorkReport<Integer> report = WorkDistributor.of(worker).run(RESOURCES, r -> "r-" + r,
        (r, handle) -> {
          heldDuringWork.add(handle.isHeld() && other.lock("r-" + r).tryAcquire().isEmpty());
          if (r == 5) {
            throw new IllegalStateException("boom");
          }
        });
    busy.close();
    assertThat(report.skipped()).containsExactly(3);
    assertThat(report.failed()).containsOnlyKeys(5);
    assertThat(report.processed()).containsExactlyInAnyOrderElementsOf(
        RESOURCES.stream().filter(r -> r != 3 && r != 5).collect(Collectors.toList()));
    assertThat(heldDuringWork).hasSize(9).containsOnly(true);
  }

  @Test
  void run_interrupted_stopsTheWalk() {
    PgLocks worker = newLocks();
    List<Integer> seen = new ArrayList<>();
    try {
      WorkDistributor.WorkReport<Integer> report = WorkDistributor.of(worker).run(RESOURCES, r -> "i-" + r, r -> {
        seen.add(r);
        Thread.currentThread().interrupt();
      });
      assertThat(report.processed()).hasSize(1);
      assertThat(seen).hasSize(1);
    } finally {
      assertThat(Thread.interrupted()).isTrue();
    }
  }
}
