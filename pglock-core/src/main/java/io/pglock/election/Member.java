package io.pglock.election;

import java.time.Instant;
import java.util.Optional;

/**
 * One live member of a group, as far as the server's lock table tells: a snapshot read by
 * {@link Membership#members()} or {@link Membership#members(io.pglock.PgLocks, String)}.
 *
 * @param group the group's name
 * @param id the member's id in the group (by default its pglock node name)
 * @param node the pglock node name of the connection that holds the member's lock, if it is
 *     pglock's (it differs from {@code id} when the member chose an id of its own)
 * @param pid the process id of the backend that holds the member's lock
 * @param applicationName the holder's {@code application_name} (empty if this role may not see it)
 * @param since the earliest the member can have joined as far as the server can tell: the start of
 *     the holding connection (pglock reuses connections, so the member may have joined later)
 */
public record Member(String group, String id, Optional<String> node, int pid, String applicationName,
    Optional<Instant> since) {
}
