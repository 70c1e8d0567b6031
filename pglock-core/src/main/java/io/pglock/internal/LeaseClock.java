package io.pglock.internal;

/**
 * The two clocks a {@link Lease} reads. The monotonic one ({@link System#nanoTime()}) is immune to
 * wall-clock steps but, on Linux and in most hypervisors, does not advance while the host or VM is
 * suspended; the wall clock ({@link System#currentTimeMillis()}) does advance across a suspend but
 * can be stepped by NTP. The lease takes the stricter of the two. Tests substitute their own.
 */
interface LeaseClock {
  /** The monotonic clock, in nanoseconds. */
  long nanoTime();

  /** The wall clock, in milliseconds since the epoch. */
  long wallMillis();

  /** The JVM's clocks. */
  LeaseClock SYSTEM = new LeaseClock() {
    @Override
    public long nanoTime() {
      return System.nanoTime();
    }

    @Override
    public long wallMillis() {
      return System.currentTimeMillis();
    }
  };
}
