package io.pglock.schedule.internal;

import io.pglock.SessionLock;
import io.pglock.schedule.Task;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One registered task as the scheduler's loop sees it. Read and written by the loop thread only:
 * run threads never touch it (they report their end through {@link RunEnded} events, which the
 * loop applies), so no field needs a lock or a volatile.
 */
final class TaskState {
  final Task task;
  final SessionLock lock;
  final SlotPlanner.Policy policy;
  /** Every slot up to this one has a row (run, running or skipped by someone): resolved. */
  Instant resolvedUpTo;
  /** Every slot up to this one has a decision: resolved, or waiting in {@link #pending}. */
  Instant decidedUpTo;
  /** Decided and not yet resolved, oldest first. */
  final ArrayDeque<SlotPlanner.Decision> pending = new ArrayDeque<>();
  /** This node's runs of the task that may cover undecided slots (the current one last). */
  final List<SlotPlanner.RunSpan> spans = new ArrayList<>();
  /**
   * Other nodes' runs that a slot waited behind (the lock taken, their rows started before the
   * slot and running): once the lock is free, the waiting slots are decided again.
   */
  final java.util.Set<RunTable.RunRef> waitedBehind = new java.util.LinkedHashSet<>();
  /** Those runs as their rows read once the lock was free, until the loop decides again. */
  List<SlotPlanner.OtherRun> waitedOn = List.of();
  /** For a fixed delay: the latest row, refreshed at each poll and after this node's runs. */
  RunTable.Latest delayLatest;
  /** For a fixed delay that never ran: its first slot, the task's first registration (database clock). */
  Instant firstSlot;
  boolean paused;
  Instant pendingManual;
  /** This node's run of the task, while it goes. */
  RunExecution current;
  /** System.nanoTime() before which the loop claims nothing of the task; 0 for none. */
  long retryAt;
  /** System.nanoTime() before which the loop does not try the manual trigger again; 0 for none. */
  long manualRetryAt;

  TaskState(Task task, SessionLock lock) {
    this.task = task;
    this.lock = lock;
    this.policy = SlotPlanner.Policy.of(task);
  }

  /** A run of this node started (database clock). */
  void runStarted(RunExecution run, Instant at) {
    current = run;
    spans.add(new SlotPlanner.RunSpan(at, null));
  }

  /** This node's run ended (database clock): its span closes, and slots queued behind it may go. */
  void runEnded(RunExecution run, Instant at) {
    if (current == run) {
      current = null;
    }
    for (int i = spans.size() - 1; i >= 0; i--) {
      if (spans.get(i).end() == null) {
        spans.set(i, new SlotPlanner.RunSpan(spans.get(i).start(), at));
        break;
      }
    }
    retryAt = 0;
    manualRetryAt = 0;
  }

  /** Forgets the runs that ended before every unresolved slot: they cover none (even if it is decided again). */
  void pruneSpans() {
    spans.removeIf(s -> s.end() != null && resolvedUpTo != null && !s.end().isAfter(resolvedUpTo));
  }

  /** The decisions from the head on are dropped: those slots are decided again by the next pass. */
  void replan() {
    pending.clear();
    decidedUpTo = resolvedUpTo;
  }
}
