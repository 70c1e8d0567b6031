package io.pglock.election.internal;

import io.pglock.LockEntry;
import io.pglock.LockKey;
import io.pglock.LockListing;
import io.pglock.LockSessionException;
import io.pglock.SchemaMissingException;
import io.pglock.election.Member;
import io.pglock.election.Membership;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Finds a group's members in the who-holds-what listing (the holders of {@code "member:<group>:*"}
 * in the namespace) and records a member's lock name before it joins.
 */
public final class MemberLookup {
  /** SQLSTATE undefined_function and invalid_schema_name: the schema lacks the name table's function. */
  private static final List<String> MISSING = List.of("42883", "3F000");

  /** The longest recording names waits for the server's answer. */
  private static final Duration RECORD_READ_TIMEOUT = Duration.ofSeconds(10);

  private MemberLookup() {}

  /** Checks a group name: not blank, no {@code ':'} (so that one group's prefix is not another's). */
  public static String checkGroup(String group) {
    Objects.requireNonNull(group, "group");
    if (group.isBlank()) {
      throw new IllegalArgumentException("group name must not be blank");
    }
    if (group.indexOf(':') >= 0) {
      throw new IllegalArgumentException("group name must not contain ':': \"" + group + "\"");
    }
    return group;
  }

  /** The granted holders of the group's member locks in the namespace, sorted by member id. */
  public static List<Member> find(DataSource dataSource, String schema, String namespace, String group) {
    LockKey.checkNamespace(namespace);
    String prefix = Membership.lockName(checkGroup(group), "");
    List<Member> members = new ArrayList<>();
    for (LockEntry e : LockListing.of(dataSource, schema).list()) {
      if (e.granted() && e.named() && e.key().namespace().equals(namespace) && e.key().name().startsWith(prefix)) {
        members.add(new Member(group, e.key().name().substring(prefix.length()), e.node(), e.pid(),
            e.applicationName(), e.since()));
      }
    }
    members.sort(Comparator.comparing(Member::id));
    return List.copyOf(members);
  }

  /**
   * Records lock names now (as pglock's background recorder would within about a second after a
   * first grant), in one statement, so that the view names the locks from their first grant.
   */
  public static void recordNames(DataSource dataSource, String schema, String namespace, Collection<String> names) {
    if (names.isEmpty()) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      int timeout = c.getNetworkTimeout();
      c.setNetworkTimeout(Runnable::run, (int) RECORD_READ_TIMEOUT.toMillis());
      try (PreparedStatement ps = c.prepareStatement("SELECT " + schema + ".record_lock_names(?, ?)")) {
        Array namespaces = c.createArrayOf("text", Collections.nCopies(names.size(), namespace).toArray());
        Array values = c.createArrayOf("text", names.toArray());
        ps.setArray(1, namespaces);
        ps.setArray(2, values);
        ps.execute();
        if (!c.getAutoCommit()) {
          c.commit();
        }
      } finally {
        c.setNetworkTimeout(Runnable::run, timeout); // a pooled connection goes back as it came
      }
    } catch (SQLException e) {
      if (MISSING.contains(e.getSQLState())) {
        throw new SchemaMissingException("the function " + schema + ".record_lock_names is missing: it needs"
            + " pglock's schema \"" + schema + "\" at version 6 or later (PgLockSchema.migrate)");
      }
      throw new LockSessionException("could not record " + names.size() + " lock name(s) such as \""
          + names.iterator().next() + "\" in namespace " + namespace + ": " + e.getMessage() + " (SQLSTATE "
          + e.getSQLState() + ")", e);
    }
  }
}
