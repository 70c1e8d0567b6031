package io.pglock.ownership;

import java.util.Optional;

/**
 * Who owns a resource now, as the server's lock table tells: one row of
 * {@link Ownership#owners(io.pglock.PgLocks, String)}.
 *
 * @param group the ownership group's name
 * @param resource the resource's name
 * @param node the pglock node name of the holder of the resource's lock (the member's id unless
 *     the member chose an id of its own); empty if the holder is not a pglock connection
 * @param pid the process id of the backend that holds the resource's lock
 */
public record ResourceOwner(String group, String resource, Optional<String> node, int pid) {
}
