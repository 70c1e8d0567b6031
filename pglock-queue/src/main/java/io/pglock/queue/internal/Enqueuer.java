package io.pglock.queue.internal;

import io.pglock.queue.Enqueued;
import io.pglock.queue.JobQueueException;
import io.pglock.queue.JobRequest;
import io.pglock.queue.JsonMapper;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Inserts jobs, one or many, in one statement of arrays (one round trip, one plan whatever the
 * count), with the NOTIFY that wakes workers in the same statement, so that it is sent if and only if
 * the insert commits.
 */
final class Enqueuer {
  private static final int ATTEMPTS = 3;

  private final JobSql sql;
  private final String channel;
  private final JsonMapper mapper;

  Enqueuer(JobSql sql, String channel, JsonMapper mapper) {
    this.sql = sql;
    this.channel = channel;
    this.mapper = mapper;
  }

  /**
   * Inserts the requests on the connection, in its transaction if one is open.
   *
   * @param traceContext the trace context every job carries (JSON text), or null for none
   * @return one result per request, in order
   */
  List<Enqueued> insert(Connection c, List<JobRequest> requests, String traceContext) throws SQLException {
    String[] payloads = new String[requests.size()];
    for (int i = 0; i < payloads.length; i++) {
      JobRequest r = requests.get(i);
      payloads[i] = r.isRawJson() ? (String) r.payload() : mapper.write(r.payload());
    }
    Enqueued[] results = new Enqueued[requests.size()];
    List<Integer> pending = new ArrayList<>();
    for (int i = 0; i < results.length; i++) {
      pending.add(i);
    }
    // A unique job whose key holder finishes between our insert and our look-up is inserted on the
    // next pass; three passes make that race practically impossible to lose.
    for (int pass = 0; pass < ATTEMPTS && !pending.isEmpty(); pass++) {
      pending = insertOnce(c, requests, payloads, traceContext, pending, results);
    }
    if (!pending.isEmpty()) {
      throw new JobQueueException("could not enqueue " + pending.size() + " unique jobs: their keys were taken and "
          + "freed again repeatedly while enqueuing; try again", null);
    }
    return List.of(results);
  }

  private List<Integer> insertOnce(Connection c, List<JobRequest> requests, String[] payloads, String traceContext,
      List<Integer> which, Enqueued[] results) throws SQLException {
    int n = which.size();
    String[] queue = new String[n];
    String[] kind = new String[n];
    String[] payload = new String[n];
    Integer[] priority = new Integer[n];
    String[] runAt = new String[n];
    Long[] delayMs = new Long[n];
    Integer[] maxAttempts = new Integer[n];
    String[] uniqueKey = new String[n];
    String[] concurrencyKey = new String[n];
    for (int k = 0; k < n; k++) {
      JobRequest r = requests.get(which.get(k));
      queue[k] = r.queueName();
      kind[k] = r.kind();
      payload[k] = payloads[which.get(k)];
      priority[k] = r.priorityValue();
      Instant at = r.runAtValue();
      runAt[k] = at == null ? null : at.toString(); // ISO-8601 in UTC: no zone of the JVM involved
      delayMs[k] = r.delayValue() == null ? 0L : r.delayValue().toMillis();
      maxAttempts[k] = r.maxAttemptsValue();
      uniqueKey[k] = r.uniqueKeyValue();
      concurrencyKey[k] = r.concurrencyKeyValue();
    }
    List<Long> plainIds = new ArrayList<>();
    Map<String, Long> insertedByKey = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql.enqueue)) {
      int i = 1;
      if (sql.traceColumn) {
        ps.setString(i++, traceContext); // one for all the rows: null when the jobs carry none
      }
      ps.setArray(i++, c.createArrayOf("text", queue));
      ps.setArray(i++, c.createArrayOf("text", kind));
      ps.setArray(i++, c.createArrayOf("text", payload));
      ps.setArray(i++, c.createArrayOf("int4", priority));
      ps.setArray(i++, c.createArrayOf("text", runAt));
      ps.setArray(i++, c.createArrayOf("int8", delayMs));
      ps.setArray(i++, c.createArrayOf("int4", maxAttempts));
      ps.setArray(i++, c.createArrayOf("text", uniqueKey));
      ps.setArray(i++, c.createArrayOf("text", concurrencyKey));
      ps.setString(i, channel);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String key = rs.getString(2);
          if (key == null) {
            plainIds.add(rs.getLong(1)); // ids rise in the order of the arrays: the rows' order
          } else {
            insertedByKey.put(key, rs.getLong(1));
          }
        }
      }
    }
    int plain = 0;
    Set<String> claimedHere = new HashSet<>();
    List<String> lookUp = new ArrayList<>();
    for (int k = 0; k < n; k++) {
      int i = which.get(k);
      String key = uniqueKey[k];
      if (key == null) {
        results[i] = new Enqueued(plainIds.get(plain++), true);
      } else if (insertedByKey.containsKey(key)) {
        // a key repeated in one batch: the first request inserts, the others are its duplicates
        results[i] = new Enqueued(insertedByKey.get(key), claimedHere.add(key));
      } else {
        lookUp.add(key);
      }
    }
    if (lookUp.isEmpty()) {
      return List.of();
    }
    Map<String, Long> existing = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql.existingUnique)) {
      ps.setArray(1, c.createArrayOf("text", lookUp.toArray(new String[0])));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          existing.put(rs.getString(2), rs.getLong(1));
        }
      }
    }
    List<Integer> again = new ArrayList<>();
    for (int k = 0; k < n; k++) {
      int i = which.get(k);
      if (results[i] == null) {
        Long id = existing.get(uniqueKey[k]);
        if (id != null) {
          results[i] = new Enqueued(id, false);
        } else {
          again.add(i);
        }
      }
    }
    return again;
  }
}
