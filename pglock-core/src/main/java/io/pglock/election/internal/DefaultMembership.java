package io.pglock.election.internal;

import io.pglock.LockHandle;
import io.pglock.LossCause;
import io.pglock.PgLocks;
import io.pglock.PgLocksConfig;
import io.pglock.election.Member;
import io.pglock.election.Membership;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One member of one group: the handle of the member's exclusive session lock. No thread of its
 * own; the lock's handle signals the loss. Closed or lost, it stays ended (no rejoin).
 */
public final class DefaultMembership implements Membership {
  private static final Logger log = LoggerFactory.getLogger(DefaultMembership.class);

  private final PgLocksConfig config;
  private final String group;
  private final String memberId;
  private final LockHandle handle;

  private DefaultMembership(PgLocksConfig config, String group, String memberId, LockHandle handle) {
    this.config = config;
    this.group = group;
    this.memberId = memberId;
    this.handle = handle;
  }

  /** Records the member's lock name, then takes the lock without waiting; see {@link Membership#join}. */
  public static DefaultMembership join(PgLocks locks, String group, String memberId) {
    Objects.requireNonNull(locks, "locks");
    MemberLookup.checkGroup(group);
    Objects.requireNonNull(memberId, "memberId");
    if (memberId.isBlank()) {
      throw new IllegalArgumentException("member id must not be blank");
    }
    PgLocksConfig config = locks.config();
    String name = Membership.lockName(group, memberId);
    locks.key(name); // checks the name's length before any I/O
    MemberLookup.recordNames(config.dataSource(), config.schema(), config.namespace(), List.of(name));
    Optional<LockHandle> handle = locks.lock(name).tryAcquire();
    if (handle.isEmpty()) {
      throw new IllegalStateException("member id \"" + memberId + "\" is already in the group \"" + group
          + "\" (namespace " + config.namespace() + "): another member holds the lock \"" + name + "\"");
    }
    DefaultMembership m = new DefaultMembership(config, group, memberId, handle.get());
    handle.get().onLoss(cause -> log.warn("member {} left the group {} (namespace {}): its lock was lost ({})",
        memberId, group, config.namespace(), cause));
    log.debug("member {} joined the group {} (namespace {})", memberId, group, config.namespace());
    return m;
  }

  @Override
  public String group() {
    return group;
  }

  @Override
  public String memberId() {
    return memberId;
  }

  /** {@return the member's lock: for a watcher that needs the loss cause at once (ownership)} */
  public LockHandle handle() {
    return handle;
  }

  /** The handle's own answer, by the lease clock: false from the lease deadline on. */
  @Override
  public boolean isJoined() {
    return handle.isHeld();
  }

  @Override
  public List<Member> members() {
    return MemberLookup.find(config.dataSource(), config.schema(), config.namespace(), group);
  }

  @Override
  public CompletionStage<LossCause> lost() {
    return handle.lost();
  }

  @Override
  public void close() {
    handle.close();
  }

  @Override
  public String toString() {
    return "Membership[group=" + group + ", member=" + memberId + ", namespace=" + config.namespace()
        + ", " + handle.state() + "]";
  }
}
