package io.pglock;

import io.pglock.ownership.OwnedResource;
import io.pglock.ownership.Owner;
import io.pglock.ownership.Release;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The owners of a test, all in one JVM: who the owners believe owns each resource, and every
 * event. A resource gained while another member still believes it owns it is an overlap.
 */
final class OwnershipRecorder {
  /** One event: {@code member gained|lost resource (why) token}. */
  record Event(String member, String resource, boolean gained, Release why, long token) {}

  final Map<String, String> believedOwner = new ConcurrentHashMap<>();
  final List<Event> events = java.util.Collections.synchronizedList(new ArrayList<>());
  final AtomicInteger overlaps = new AtomicInteger();

  Owner owner(String member) {
    return new Owner() {
      @Override
      public void gained(OwnedResource r) {
        events.add(new Event(member, r.resource(), true, null, r.fencingToken()));
        if (believedOwner.putIfAbsent(r.resource(), member) != null) {
          overlaps.incrementAndGet();
        }
      }

      @Override
      public void lost(OwnedResource r, Release why) {
        events.add(new Event(member, r.resource(), false, why, r.fencingToken()));
        believedOwner.remove(r.resource(), member);
      }
    };
  }

  List<Event> lost(String member, Release why) {
    synchronized (events) {
      return events.stream().filter(e -> !e.gained() && e.member().equals(member) && e.why() == why).toList();
    }
  }
}
