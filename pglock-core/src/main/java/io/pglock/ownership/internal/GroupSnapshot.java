package io.pglock.ownership.internal;

import io.pglock.LockEntry;
import io.pglock.LockKey;
import io.pglock.election.Membership;
import io.pglock.internal.listing.LockListingQuery;
import io.pglock.ownership.Ownership;
import io.pglock.ownership.ResourceOwner;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * One group's state at one instant, read from the server's lock table in one query: the live
 * members (holders of {@code "member:<group>:*"}) and the resources' holders (of
 * {@code "own:<group>:*"}), in one namespace.
 *
 * @param members the live members' ids, each with the node name of its lock's holder (if pglock's)
 * @param owners the held resources, by name, sorted
 */
public record GroupSnapshot(Map<String, Optional<String>> members, Map<String, ResourceOwner> owners) {

  /** Reads the snapshot: one listing query, each read bounded by {@code readTimeout}. */
  public static GroupSnapshot read(DataSource dataSource, String schema, String namespace, String group,
      Duration readTimeout) {
    LockKey.checkNamespace(namespace);
    String memberPrefix = Membership.lockName(group, "");
    String ownPrefix = Ownership.lockName(group, "");
    Map<String, Optional<String>> members = new TreeMap<>();
    Map<String, ResourceOwner> owners = new TreeMap<>();
    for (LockEntry e : LockListingQuery.list(dataSource, schema, readTimeout)) {
      if (!e.granted() || !e.named() || !e.key().namespace().equals(namespace)) {
        continue;
      }
      String name = e.key().name();
      if (name.startsWith(memberPrefix)) {
        members.put(name.substring(memberPrefix.length()), e.node());
      } else if (name.startsWith(ownPrefix)) {
        String resource = name.substring(ownPrefix.length());
        owners.put(resource, new ResourceOwner(group, resource, e.node(), e.pid()));
      }
    }
    return new GroupSnapshot(Map.copyOf(members), owners);
  }

  /** The owned resources, sorted by name. */
  public List<ResourceOwner> ownerList() {
    return List.copyOf(owners.values());
  }

  /**
   * How many resources each live member holds: a resource counts for the member whose lock is held
   * from the same pglock node (a member's node name is that of its {@code PgLocks}).
   */
  public Map<String, Integer> heldCounts() {
    Map<String, String> memberOfNode = new HashMap<>();
    members.forEach((id, node) -> node.ifPresent(n -> memberOfNode.put(n, id)));
    Map<String, Integer> counts = new HashMap<>();
    members.keySet().forEach(id -> counts.put(id, 0));
    for (ResourceOwner o : owners.values()) {
      String id = o.node().map(memberOfNode::get).orElse(null);
      if (id != null) {
        counts.merge(id, 1, Integer::sum);
      }
    }
    return counts;
  }

  /** Whether someone holds the resource's lock. */
  public boolean isHeld(String resource) {
    return owners.containsKey(Objects.requireNonNull(resource));
  }
}
