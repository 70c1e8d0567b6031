package io.pglock.spring.leader;

import io.pglock.election.Revocation;
import io.pglock.election.Term;
import java.util.Optional;
import org.springframework.context.ApplicationEvent;

/**
 * Published when this node becomes the leader of an election that {@link LeaderOnly} beans stand
 * in, and when its term ends. Listeners run on the election's thread, one event at a time and in
 * order: return promptly.
 */
public final class LeadershipChangedEvent extends ApplicationEvent {
  private static final long serialVersionUID = 1L;
  /** The term that began or ended. */
  private final transient Term term;
  /** True if the term began. */
  private final boolean leader;
  /** Why the term ended, or null if it began. */
  private final Revocation revocation;

  /**
   * Creates the event.
   *
   * @param source the processor that publishes it
   * @param term the term that began or ended
   * @param revocation why it ended, or null if it began
   */
  public LeadershipChangedEvent(Object source, Term term, Revocation revocation) {
    super(source);
    this.term = term;
    this.leader = revocation == null;
    this.revocation = revocation;
  }

  /** {@return the election's name} */
  public String election() {
    return term.election();
  }

  /** {@return true if this node just became the leader, false if its term just ended} */
  public boolean isLeader() {
    return leader;
  }

  /** {@return the term: its fencing token is for the leader's writes to check} */
  public Term term() {
    return term;
  }

  /** {@return why the term ended, or empty if it began} */
  public Optional<Revocation> revocation() {
    return Optional.ofNullable(revocation);
  }

  @Override
  public String toString() {
    return "LeadershipChangedEvent[" + term.election() + ", " + (leader ? "elected" : "revoked " + revocation)
        + ", token " + term.fencingToken() + "]";
  }
}
