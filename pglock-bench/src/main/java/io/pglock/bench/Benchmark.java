package io.pglock.bench;

/** One benchmark: measures pglock against a raw-JDBC baseline in the same run. */
interface Benchmark {
  String id();

  /** One line: what it measures. */
  String title();

  Report run(Db db, BenchOptions options) throws Exception;

  /** A random key base, so that runs never collide with each other's keys. */
  static long keyBase() {
    return java.util.concurrent.ThreadLocalRandom.current().nextLong(1L << 40, 1L << 60);
  }
}
