package io.pglock.ownership.internal;

import java.util.Collection;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/** Checks of resource names (group names: {@link io.pglock.election.internal.MemberLookup#checkGroup}). */
public final class OwnershipNames {
  private OwnershipNames() {}

  /** Checks resource names (not null, not blank); returns them as a sorted set. */
  public static Set<String> checkResources(Collection<String> resources) {
    Objects.requireNonNull(resources, "resources");
    Set<String> set = new TreeSet<>();
    for (String r : resources) {
      Objects.requireNonNull(r, "a resource name is null");
      if (r.isBlank()) {
        throw new IllegalArgumentException("resource names must not be blank");
      }
      set.add(r);
    }
    return set;
  }
}
