package io.pglock.queue;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * A job to enqueue: its kind and payload, and how, when and where it runs. Immutable; each
 * {@code with}-style method returns a changed copy.
 *
 * <pre>{@code
 * JobRequest.of("send-invoice", new Invoice(42))
 *     .queue("billing").priority(10).delay(Duration.ofMinutes(5)).uniqueKey("invoice:42");
 * }</pre>
 */
public final class JobRequest {
  /** The queue of a request that names none. */
  public static final String DEFAULT_QUEUE = "default";
  /** The longest delay accepted: about a hundred years. */
  public static final Duration MAX_DELAY = Duration.ofDays(36_500);
  /** The longest kind, queue, unique key or concurrency key accepted, in characters. */
  public static final int MAX_NAME_LENGTH = 200;

  private final String kind;
  private final Object payload;
  private final boolean rawJson;
  private final String queue;
  private final int priority;
  private final Instant runAt;
  private final Duration delay;
  private final Integer maxAttempts;
  private final String uniqueKey;
  private final String concurrencyKey;

  private JobRequest(String kind, Object payload, boolean rawJson, String queue, int priority, Instant runAt,
      Duration delay, Integer maxAttempts, String uniqueKey, String concurrencyKey) {
    this.kind = kind;
    this.payload = payload;
    this.rawJson = rawJson;
    this.queue = queue;
    this.priority = priority;
    this.runAt = runAt;
    this.delay = delay;
    this.maxAttempts = maxAttempts;
    this.uniqueKey = uniqueKey;
    this.concurrencyKey = concurrencyKey;
  }

  /**
   * A job of a kind with a payload that the queue's {@link JsonMapper} writes as JSON.
   *
   * @param kind what the job does: the name a worker's handler is registered under
   * @param payload the handler's input (may be null: JSON {@code null})
   * @throws IllegalArgumentException if the kind is empty, too long or has control characters
   * @return the request
   */
  public static JobRequest of(String kind, Object payload) {
    return new JobRequest(checkName("kind", kind), payload, false, DEFAULT_QUEUE, 0, null, null, null, null, null);
  }

  /**
   * A job whose payload is JSON text already (stored as it is, checked by the database).
   *
   * @throws IllegalArgumentException if the kind is not valid or the JSON is null
   * @param kind the kind's name
   * @param json the JSON text
   * @return the request
   */
  public static JobRequest ofJson(String kind, String json) {
    if (json == null) {
      throw new IllegalArgumentException("the JSON payload must not be null; use \"null\" for JSON null");
    }
    return new JobRequest(checkName("kind", kind), json, true, DEFAULT_QUEUE, 0, null, null, null, null, null);
  }

  /**
   * {@return a copy on another queue} @throws IllegalArgumentException if the name is not valid
   *
   * @param queue the queue's name
   */
  public JobRequest queue(String queue) {
    return new JobRequest(kind, payload, rawJson, checkName("queue", queue), priority, runAt, delay, maxAttempts,
        uniqueKey, concurrencyKey);
  }

  /**
   * {@return a copy with a priority: among due jobs of a queue the higher runs first (default 0)}
   *
   * @throws IllegalArgumentException outside -32768..32767
   * @param priority the priority
   */
  public JobRequest priority(int priority) {
    if (priority < Short.MIN_VALUE || priority > Short.MAX_VALUE) {
      throw new IllegalArgumentException("priority must be between -32768 and 32767, got " + priority);
    }
    return new JobRequest(kind, payload, rawJson, queue, priority, runAt, delay, maxAttempts, uniqueKey,
        concurrencyKey);
  }

  /**
   * {@return a copy that runs no earlier than the instant} Replaces a {@link #delay}.
   *
   * @param runAt the earliest instant to run
   */
  public JobRequest runAt(Instant runAt) {
    return new JobRequest(kind, payload, rawJson, queue, priority, Objects.requireNonNull(runAt, "runAt"), null,
        maxAttempts, uniqueKey, concurrencyKey);
  }

  /**
   * {@return a copy that runs no earlier than the delay after the insert, by the database's clock}
   * Replaces a {@link #runAt}.
   *
   * @throws IllegalArgumentException if negative or longer than {@link #MAX_DELAY}
   * @param delay the wait after the insert
   */
  public JobRequest delay(Duration delay) {
    if (delay == null || delay.isNegative() || delay.compareTo(MAX_DELAY) > 0) {
      throw new IllegalArgumentException("delay must be between zero and " + MAX_DELAY.toDays() + " days, got " + delay);
    }
    return new JobRequest(kind, payload, rawJson, queue, priority, null, delay, maxAttempts, uniqueKey,
        concurrencyKey);
  }

  /**
   * {@return a copy allowed this many attempts in all} Without it, the worker's setting for the kind
   * applies ({@link JobWorkerBuilder#maxAttempts}).
   *
   * @throws IllegalArgumentException if less than 1
   * @param maxAttempts attempts in all
   */
  public JobRequest maxAttempts(int maxAttempts) {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
    }
    return new JobRequest(kind, payload, rawJson, queue, priority, runAt, delay, maxAttempts, uniqueKey,
        concurrencyKey);
  }

  /**
   * {@return a copy that is inserted only if no unfinished job (available, running or retryable)
   * has the same key} The database enforces it, so concurrent enqueues cannot both insert; the key is
   * global to the job table: put the kind in it if it must be unique per kind.
   *
   * @throws IllegalArgumentException if the key is empty or too long
   * @param uniqueKey the unique key
   */
  public JobRequest uniqueKey(String uniqueKey) {
    return new JobRequest(kind, payload, rawJson, queue, priority, runAt, delay, maxAttempts,
        checkName("unique key", uniqueKey), concurrencyKey);
  }

  /**
   * {@return a copy that counts against a per-key concurrency limit} Workers with
   * {@link JobWorkerBuilder#concurrencyPerKey(int)} run at most that many jobs with the same key at
   * once, across the fleet.
   *
   * @throws IllegalArgumentException if the key is empty or too long
   * @param concurrencyKey the concurrency key
   */
  public JobRequest concurrencyKey(String concurrencyKey) {
    return new JobRequest(kind, payload, rawJson, queue, priority, runAt, delay, maxAttempts, uniqueKey,
        checkName("concurrency key", concurrencyKey));
  }

  /** {@return the kind} */
  public String kind() {
    return kind;
  }

  /** {@return the payload object, or the JSON text for {@link #ofJson}} */
  public Object payload() {
    return payload;
  }

  /** {@return true if the payload is JSON text already} */
  public boolean isRawJson() {
    return rawJson;
  }

  /** {@return the queue} */
  public String queueName() {
    return queue;
  }

  /** {@return the priority} */
  public int priorityValue() {
    return priority;
  }

  /** {@return the absolute run-at, or null} */
  public Instant runAtValue() {
    return runAt;
  }

  /** {@return the delay after the insert, or null} */
  public Duration delayValue() {
    return delay;
  }

  /** {@return the max attempts, or null for the worker's setting} */
  public Integer maxAttemptsValue() {
    return maxAttempts;
  }

  /** {@return the unique key, or null} */
  public String uniqueKeyValue() {
    return uniqueKey;
  }

  /** {@return the concurrency key, or null} */
  public String concurrencyKeyValue() {
    return concurrencyKey;
  }

  /** Checks a kind, queue or key: 1 to {@link #MAX_NAME_LENGTH} characters, no control characters. */
  static String checkName(String what, String value) {
    if (value == null || value.isEmpty() || value.length() > MAX_NAME_LENGTH) {
      throw new IllegalArgumentException("a job's " + what + " must be 1 to " + MAX_NAME_LENGTH + " characters, got "
          + (value == null ? "null" : value.length() + " characters"));
    }
    for (int i = 0; i < value.length(); i++) {
      if (Character.isISOControl(value.charAt(i))) {
        throw new IllegalArgumentException("a job's " + what + " must not contain control characters, got "
            + value.replaceAll("\\p{Cntrl}", "?"));
      }
    }
    return value;
  }

  @Override
  public String toString() {
    return "JobRequest[" + kind + " on " + queue + (uniqueKey == null ? "" : ", unique " + uniqueKey) + "]";
  }
}
