#!/usr/bin/env bash
# The long version of JobFleetProcessTest: worker JVMs killed with SIGKILL at random, every backend of
# others terminated, and one server restart (a crash: immediate mode) while N jobs run (default
# 10,000, the issue's figure). Every job must succeed, none lost, no two attempts of a job at the same
# time; half the jobs write an effect with an idempotency record (exactly one each), the other half
# add 1 to a counter in their handler's transaction (every counter at exactly 1). Runs on a
# PostgreSQL server of its own (needs the system's PostgreSQL binaries). Usage: pglock-queue/faults.sh [--jobs N]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    *) echo "usage: $0 [--jobs N]" >&2; exit 2 ;;
  esac
done
./mvnw -B -q -pl pglock-queue -am verify -Dtest=JobFleetProcessTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dmaven.javadoc.skip=true -Dmaven.test.failure.ignore=false -Dpglock.fleet.jobs="$jobs"
grep -h "fleet:" pglock-queue/target/surefire-reports/io.pglock.queue.JobFleetProcessTest-output.txt
