package io.pglock.dashboard.internal.data;

import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Leaders, members and owners, read from the locks they hold: {@code election:<name>} (the leader
 * holds it, candidates wait for it), {@code member:<group>:<id>} and {@code own:<group>:<resource>}.
 */
public final class ElectionsData {
  private ElectionsData() {}

  /**
   * One election.
   *
   * @param namespace its namespace
   * @param name its name
   * @param leaderNode the leader's node, or null when nobody leads
   * @param leaderPid the leader's backend, or 0
   * @param since when the leader's connection started (the earliest its term can have begun)
   * @param candidates how many candidates wait
   */
  public record Election(String namespace, String name, String leaderNode, int leaderPid, Instant since,
      int candidates) {}

  /**
   * One member of a group and what it owns.
   *
   * @param id the member's id
   * @param node its node
   * @param since member since
   * @param owns the resources it owns, sorted
   */
  public record Member(String id, String node, Instant since, List<String> owns) {}

  /**
   * A membership group.
   *
   * @param namespace its namespace
   * @param name its name
   * @param members its members, by id
   * @param unowned resources held by no live member's node (an owner of another node)
   */
  public record Group(String namespace, String name, List<Member> members, List<String> unowned) {}

  /**
   * Everything on the page.
   *
   * @param elections the elections
   * @param groups the membership groups
   */
  public record View(List<Election> elections, List<Group> groups) {}

  /** {@return the elections and groups seen in the locks now} */
  public static View read(Db db, String namespace) throws SQLException {
    List<LocksData.LockRow> rows = db.list("SELECT namespace, name, key, mode, granted, scope, pid, node, role,"
        + " application_name, since, blocked_by FROM {s}.locks"
        + " WHERE (name LIKE 'election:%' OR name LIKE 'member:%' OR name LIKE 'own:%')"
        + " AND (?::text IS NULL OR namespace = ?) ORDER BY namespace, name LIMIT 5000", ps -> {
          ps.setString(1, namespace);
          ps.setString(2, namespace);
        }, LocksData::lock);
    Map<String, Election> elections = new TreeMap<>();
    Map<String, Map<String, Member>> members = new TreeMap<>();
    Map<String, List<LocksData.LockRow>> owned = new TreeMap<>();
    for (LocksData.LockRow r : rows) {
      String[] parts = r.name().split(":", 3);
      String group = r.namespace() + "\u0000" + parts[1];
      switch (parts[0]) {
        case "election" -> {
          Election e = elections.getOrDefault(group, new Election(r.namespace(), parts[1], null, 0, null, 0));
          elections.put(group, r.granted()
              ? new Election(e.namespace(), e.name(), r.node(), r.pid(), r.since(), e.candidates())
              : new Election(e.namespace(), e.name(), e.leaderNode(), e.leaderPid(), e.since(), e.candidates() + 1));
        }
        case "member" -> {
          if (r.granted() && parts.length == 3) {
            members.computeIfAbsent(group, g -> new TreeMap<>())
                .put(parts[2], new Member(parts[2], r.node(), r.since(), new ArrayList<>()));
          }
        }
        default -> {
          if (r.granted() && parts.length == 3) {
            owned.computeIfAbsent(group, g -> new ArrayList<>()).add(r);
          }
        }
      }
    }
    List<Group> groups = new ArrayList<>();
    for (String key : union(members.keySet(), owned.keySet())) {
      Map<String, Member> byId = members.getOrDefault(key, Map.of());
      List<String> unowned = new ArrayList<>();
      for (LocksData.LockRow own : owned.getOrDefault(key, List.of())) {
        String resource = own.name().split(":", 3)[2];
        // An owner is the member on the same node (member ids default to node names).
        Member m = byId.values().stream().filter(x -> x.node() != null && x.node().equals(own.node())).findFirst()
            .orElse(null);
        if (m == null) {
          unowned.add(resource + " (" + own.node() + ")");
        } else {
          m.owns().add(resource);
        }
      }
      byId.values().forEach(m -> m.owns().sort(null));
      String[] nsAndName = key.split("\u0000", 2);
      groups.add(new Group(nsAndName[0], nsAndName[1], List.copyOf(byId.values()), List.copyOf(unowned)));
    }
    return new View(List.copyOf(elections.values()), List.copyOf(groups));
  }

  private static List<String> union(java.util.Set<String> a, java.util.Set<String> b) {
    java.util.TreeSet<String> all = new java.util.TreeSet<>(a);
    all.addAll(b);
    return List.copyOf(all);
  }
}
