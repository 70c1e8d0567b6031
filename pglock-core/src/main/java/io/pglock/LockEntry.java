package io.pglock;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One advisory lock of the database, held or awaited by one backend: a row of
 * {@code <schema>.locks}, as {@link LockListing} reads it.
 *
 * @param key the lock's key: {@link LockKey#named named} when pglock has recorded the name of a
 *     64-bit key, else the raw 64-bit key or pair of 32-bit keys (locks taken by other tools)
 * @param mode exclusive or shared
 * @param granted true for a holder, false for a waiter
 * @param scope {@code "session"} when the lock cannot be transaction-scoped (the holder is a pglock
 *     lock or wait session, or has no open transaction), else {@code "session or transaction"}:
 *     PostgreSQL does not tell the two apart in {@code pg_locks}
 * @param pid the backend's process id
 * @param node the pglock node name from the backend's {@code application_name}, if it is pglock's
 * @param role the pglock role ({@code lock-0}, {@code wait-3}) from {@code application_name}, if pglock's
 * @param applicationName the backend's {@code application_name} (empty when the role may not see it)
 * @param clientAddress the client's address, if the server shows it (none over a Unix socket)
 * @param user the backend's database role, if the server shows it
 * @param since for a waiter, when its wait began; for a holder, the earliest it can have taken the
 *     lock as far as the server can tell (its transaction's start for a lock that may be
 *     transaction-scoped, else its connection's start)
 * @param blockedBy for a waiter, the pids it waits for; empty for a holder
 * @param holderNamespace the namespace of the holder's {@code PgLocks}, from its
 *     {@code application_name} (cut to fit 63 bytes), if it is pglock's: it may differ from the key's
 */
public record LockEntry(LockKey key, LockMode mode, boolean granted, String scope, int pid, Optional<String> node,
    Optional<String> role, String applicationName, Optional<String> clientAddress, Optional<String> user,
    Optional<Instant> since, List<Integer> blockedBy, Optional<String> holderNamespace) {

  /** {@return true if pglock knows the lock's name} */
  public boolean named() {
    return key.space() == LockKey.KeySpace.NAME;
  }
}
