package io.pglock;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * The identity of an advisory lock, in one of three key spaces that are never mixed by accident.
 *
 * <ul>
 *   <li>{@link KeySpace#INT64}: a 64-bit key, as in {@code pg_advisory_lock(bigint)}.
 *   <li>{@link KeySpace#INT32_PAIR}: a pair of 32-bit keys, as in {@code pg_advisory_lock(int, int)}.
 *       PostgreSQL keeps this space apart from the 64-bit one ({@code objsubid} 2 instead of 1).
 *   <li>{@link KeySpace#NAME}: a name in a namespace. Its 64-bit key is the first 8 bytes,
 *       big-endian, of SHA-256 over the UTF-8 bytes of {@code namespace + ":" + name}, the same
 *       as the SQL function {@code pglock.key(namespace, name)}. Named keys live in PostgreSQL's
 *       64-bit space: a 64-bit key equal to a name's hash is the same server lock.
 * </ul>
 *
 * <p>{@link #toString()} gives a form that {@link #parse(String)} reads back: {@code int64:42},
 * {@code int32x2:7:9}, {@code name:billing:invoice-42}. Immutable and thread-safe.
 */
public final class LockKey {

  /** The longest name accepted, in UTF-8 bytes. */
  public static final int MAX_NAME_BYTES = 512;
  /** The longest namespace accepted, in characters. */
  public static final int MAX_NAMESPACE_LENGTH = 63;

  /** Which of PostgreSQL's advisory key spaces a key lives in, and how it was given. */
  public enum KeySpace {
    /** A 64-bit key ({@code pg_locks.objsubid} = 1). */
    INT64,
    /** A pair of 32-bit keys ({@code pg_locks.objsubid} = 2). */
    INT32_PAIR,
    /** A name in a namespace, hashed into the 64-bit space. */
    NAME
  }

  private final KeySpace space;
  private final long value;
  private final String namespace;
  private final String name;

  private LockKey(KeySpace space, long value, String namespace, String name) {
    this.space = space;
    this.value = value;
    this.namespace = namespace;
    this.name = name;
  }

  /**
   * A 64-bit key.
   *
   * @param key the key, as {@code pg_advisory_lock(bigint)} takes it
   * @return the key in the 64-bit space
   */
  public static LockKey of(long key) {
    return new LockKey(KeySpace.INT64, key, null, null);
  }

  /**
   * A pair of 32-bit keys.
   *
   * @param first the first key, as {@code pg_advisory_lock(int, int)} takes it
   * @param second the second key
   * @return the key in the space of 32-bit pairs
   */
  public static LockKey of(int first, int second) {
    return new LockKey(KeySpace.INT32_PAIR, ((long) first << 32) | (second & 0xFFFF_FFFFL), null, null);
  }

  /**
   * A name in a namespace.
   *
   * @param namespace the namespace (see {@link #checkNamespace})
   * @param name the name: not blank, no NUL character (U+0000), at most {@value #MAX_NAME_BYTES} UTF-8 bytes
   * @return the key: the first 8 bytes of SHA-256 over {@code namespace + ":" + name}
   * @throws IllegalArgumentException if the namespace is not valid (see {@link #checkNamespace})
   *     or the name is null, blank, contains NUL (U+0000) or is longer than {@value #MAX_NAME_BYTES} UTF-8 bytes
   */
  public static LockKey named(String namespace, String name) {
    checkNamespace(namespace);
    checkName(name);
    return new LockKey(KeySpace.NAME, hash(namespace, name), namespace, name);
  }

  /**
   * Checks a namespace: 1 to {@value #MAX_NAMESPACE_LENGTH} characters, no ':' (it separates the
   * namespace from the name), no whitespace or control characters.
   *
   * @param namespace the namespace to check
   * @return the namespace
   * @throws IllegalArgumentException naming the problem
   */
  public static String checkNamespace(String namespace) {
    if (namespace == null || namespace.isEmpty()) {
      throw new IllegalArgumentException("namespace must not be null or empty; use the service name, "
          + "for example \"billing\"");
    }
    if (namespace.length() > MAX_NAMESPACE_LENGTH) {
      throw new IllegalArgumentException("namespace is " + namespace.length() + " characters, longer than "
          + MAX_NAMESPACE_LENGTH + ": \"" + namespace.substring(0, 20) + "...\"");
    }
    for (int i = 0; i < namespace.length(); i++) {
      char c = namespace.charAt(i);
      if (c == ':' || Character.isWhitespace(c) || Character.isISOControl(c)) {
        throw new IllegalArgumentException("namespace \"" + namespace + "\" contains "
            + (c == ':' ? "':', which separates namespace from name" : "whitespace or a control character")
            + " at index " + i + "; use letters, digits, '-', '_' or '.'");
      }
    }
    return namespace;
  }

  private static void checkName(String name) {
    if (name == null) {
      throw new IllegalArgumentException("lock name must not be null");
    }
    if (name.isBlank()) {
      throw new IllegalArgumentException("lock name must not be blank: \"" + name + "\"");
    }
    int nul = name.indexOf('\0');
    if (nul >= 0) {
      throw new IllegalArgumentException("lock name contains the NUL character (U+0000) at index " + nul
          + ", which PostgreSQL text cannot hold, so the name could never be shown: \""
          + (name.length() > 60 ? name.substring(0, 60) + "..." : name).replace("\0", "\\0")
          + "\"; remove it, or lock on an encoding of the name without it (hex, Base64)");
    }
    int bytes = name.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_NAME_BYTES) {
      throw new IllegalArgumentException("lock name is " + bytes + " UTF-8 bytes, longer than " + MAX_NAME_BYTES
          + " (\"" + name.substring(0, 20) + "...\"); lock on a shorter identifier, such as the row's id");
    }
  }

  private static long hash(String namespace, String name) {
    byte[] digest;
    try {
      digest = MessageDigest.getInstance("SHA-256")
          .digest((namespace + ":" + name).getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
    long key = 0;
    for (int i = 0; i < 8; i++) {
      key = (key << 8) | (digest[i] & 0xFF);
    }
    return key;
  }

  /**
   * Reads the form {@link #toString()} writes.
   *
   * @param text {@code int64:<long>}, {@code int32x2:<int>:<int>} or
   *     {@code name:<namespace>:<name>}
   * @return the key
   * @throws IllegalArgumentException if the text is not one of the three forms
   */
  public static LockKey parse(String text) {
    Objects.requireNonNull(text, "text");
    try {
      if (text.startsWith("int64:")) {
        return of(Long.parseLong(text.substring(6)));
      }
      if (text.startsWith("int32x2:")) {
        String rest = text.substring(8);
        int colon = rest.indexOf(':');
        if (colon > 0) {
          return of(Integer.parseInt(rest.substring(0, colon)), Integer.parseInt(rest.substring(colon + 1)));
        }
      }
      if (text.startsWith("name:")) {
        String rest = text.substring(5);
        int colon = rest.indexOf(':');
        if (colon > 0) {
          return named(rest.substring(0, colon), rest.substring(colon + 1));
        }
      }
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a lock key: \"" + text + "\" (" + e.getMessage() + ")", e);
    }
    throw new IllegalArgumentException("not a lock key: \"" + text
        + "\"; expected int64:<long>, int32x2:<int>:<int> or name:<namespace>:<name>");
  }

  /** {@return the key space} */
  public KeySpace space() {
    return space;
  }

  /**
   * The 64-bit key PostgreSQL locks for {@link KeySpace#INT64} and {@link KeySpace#NAME} keys.
   *
   * @return the 64-bit key
   * @throws IllegalStateException for a pair of 32-bit keys
   */
  public long int64() {
    if (space == KeySpace.INT32_PAIR) {
      throw new IllegalStateException(this + " is a pair of 32-bit keys; use first() and second()");
    }
    return value;
  }

  /**
   * {@return the first 32-bit key of a pair; for 64-bit and named keys, the high 32 bits
   * ({@code pg_locks.classid})}
   */
  public int first() {
    return (int) (value >>> 32);
  }

  /**
   * {@return the second 32-bit key of a pair; for 64-bit and named keys, the low 32 bits
   * ({@code pg_locks.objid})}
   */
  public int second() {
    return (int) value;
  }

  /** {@return the namespace of a named key, or null} */
  public String namespace() {
    return namespace;
  }

  /** {@return the name of a named key, or null} */
  public String name() {
    return name;
  }

  /** {@return {@code pg_locks.objsubid} of this key's lock: 1 for the 64-bit space, 2 for pairs} */
  public int objsubid() {
    return space == KeySpace.INT32_PAIR ? 2 : 1;
  }

  /**
   * True if this key and the other take the same PostgreSQL lock (same key space on the server
   * and same bits), which is also true of a name and the 64-bit key its hash gives.
   *
   * @param other the key to compare with
   * @return whether both keys take the same server lock
   */
  public boolean sameServerLock(LockKey other) {
    return other.objsubid() == objsubid() && other.value == value;
  }

  /** Equal keys have the same space and value, and for names the same namespace and name. */
  @Override
  public boolean equals(Object o) {
    if (!(o instanceof LockKey)) {
      return false;
    }
    LockKey k = (LockKey) o;
    return space == k.space && value == k.value && Objects.equals(namespace, k.namespace)
        && Objects.equals(name, k.name);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(value) * 31 + space.ordinal();
  }

  @Override
  public String toString() {
    switch (space) {
      case INT64:
        return "int64:" + value;
      case INT32_PAIR:
        return "int32x2:" + first() + ":" + second();
      default:
        return "name:" + namespace + ":" + name;
    }
  }
}
