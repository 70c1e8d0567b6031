package io.pglock;

import static org.assertj.core.api.Assertions.assertThat;

import io.pglock.PgLocksListener.AcquireKind;
import io.pglock.PgLocksListener.AcquireOutcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The listener hears acquires and losses, and one that throws changes nothing in pglock. */
class PgLocksListenerTest extends PgLocksTestSupport {

  /** Records events as text. */
  private static final class Recording implements PgLocksListener {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void acquireEnded(String namespace, LockMode mode, AcquireKind kind, AcquireOutcome outcome, long nanos) {
      assertThat(nanos).isNotNegative();
      events.add("acquire " + namespace + " " + mode + " " + kind + " " + outcome);
    }

    @Override
    public void lockLost(String namespace, LossCause cause) {
      events.add("lost " + namespace + " " + cause);
    }
  }

  @Test
  void acquireEnded_reportsAcquiredBusyAndTimedOut_andClose_reportsLostClosed() throws Exception {
    Recording heard = new Recording();
    PgLocks locks = track(builder().listener(heard).build());
    PgLocks other = track(builder().build());
    LockHandle held = other.lock("listener-busy").tryAcquire().orElseThrow();
    try {
      assertThat(locks.lock("listener-busy").tryAcquire()).isEmpty();
      assertThat(locks.lock("listener-busy").tryAcquire(Duration.ofMillis(20))).isEmpty();
    } finally {
      held.close();
    }
    LockHandle h = locks.readWriteLock("listener-free").readLock().acquire(Duration.ofSeconds(10));
    assertThat(h.isHeld()).isTrue();
    locks.close();
    assertThat(heard.events).containsExactly(
        "acquire test EXCLUSIVE TRY NOT_ACQUIRED",
        "acquire test EXCLUSIVE WAIT NOT_ACQUIRED",
        "acquire test SHARED WAIT ACQUIRED",
        "lost test CLOSED");
  }

  @Test
  void listenerThatThrows_changesNothing() throws Exception {
    PgLocksListener throwing = new PgLocksListener() {
      @Override
      public void acquireEnded(String namespace, LockMode mode, AcquireKind kind, AcquireOutcome outcome,
          long nanos) {
        throw new IllegalStateException("a broken listener");
      }
    };
    PgLocks locks = track(builder().listener(throwing).build());
    try (LockHandle h = locks.lock("listener-throws").tryAcquire().orElseThrow()) {
      assertThat(h.isHeld()).isTrue();
    }
    try (LockHandle h = locks.lock("listener-throws").acquire(Duration.ofSeconds(10))) {
      assertThat(h.isHeld()).isTrue();
    }
  }

  @Test
  void listener_isSetOnce() {
    PgLocksBuilder b = builder().listener(new PgLocksListener() {});
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> b.listener(new PgLocksListener() {}))
        .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("listener was already set");
  }
}
