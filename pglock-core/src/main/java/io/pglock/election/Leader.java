package io.pglock.election;

import java.time.Instant;
import java.util.Optional;

/**
 * Who leads an election now, as far as the server's lock table tells: a snapshot read by
 * {@link LeaderElection#currentLeader(io.pglock.PgLocks, String)}. The term's fencing token is not
 * in the lock table, so it is not here; the leader's own {@link Term} has it.
 *
 * @param election the election's name
 * @param node the leader's pglock node name, if its connection is pglock's and visible to this role
 * @param pid the process id of the backend that holds the election's lock
 * @param applicationName the holder's {@code application_name} (empty if this role may not see it)
 * @param since the earliest the leader can have been elected as far as the server can tell: the
 *     start of the holding connection (pglock reuses connections, so the term may have begun later)
 */
public record Leader(String election, Optional<String> node, int pid, String applicationName,
    Optional<Instant> since) {
}
