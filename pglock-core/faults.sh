#!/usr/bin/env bash
# The long run of leader election under faults (docs/leader-election.md, "Proven under failure"):
# three JVMs in one election, each in a network namespace of its own, on a PostgreSQL of the test's
# own; the leader is hit again and again, the kinds mixed: SIGKILL, SIGSTOP past the lease,
# pg_terminate_backend of its lock session, a silent network partition, a clean shutdown. Every
# failover is checked (one new leader, the old one revoked first where that is promised, tokens
# strictly increasing, no ERROR) and the violations counted.
#
#   pglock-core/faults.sh [--failovers 100] [--seed S]
#
# Prints a line per failover as it goes, then the summary (failovers per kind, p50 and max failover
# time, violations; also in pglock-core/target/election-faults-summary.txt). Exit code 0 with zero
# violations, 1 otherwise, 2 for bad options. Needs root, iproute2 and iptables (.ci/run installs
# it), and the PostgreSQL binaries under /usr/lib/postgresql (the test runs a server of its own; the
# one on 127.0.0.1:5432 is left alone). ./mvnw verify runs the same test with 10 failovers.
# MAVEN_ARGS is passed to Maven (e.g. -o).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

failovers=100
seed=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --failovers) failovers="${2:-}"; shift 2 ;;
    --seed) seed="${2:-}"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$failovers" =~ ^[1-9][0-9]*$ ]]; then
  echo "--failovers needs a positive number, not '$failovers'" >&2
  exit 2
fi
if [[ -n "$seed" ]] && ! [[ "$seed" =~ ^-?[0-9]+$ ]]; then
  echo "--seed needs a number, not '$seed'" >&2
  exit 2
fi

# What the test would otherwise skip on, said plainly before a build.
if [[ "$(id -u)" != 0 ]]; then
  echo "needs root: the test makes network namespaces and firewall rules in them" >&2
  exit 1
fi
PATH="$PATH:/usr/sbin:/sbin"
for tool in ip iptables; do
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian packages iproute2, iptables)" >&2; exit 1; }
done

log="$here/target/surefire-reports/io.pglock.LeaderElectionFaultsTest-output.txt"
summary="$here/target/election-faults-summary.txt"
rm -f "$log" "$summary"
mkdir -p "$(dirname "$log")"
echo "== $failovers failovers${seed:+, seed $seed}; full log: $log"

# Follow the progress: surefire writes the test's output to the log file.
tail -n +1 -F "$log" 2>/dev/null | grep --line-buffered '^FAILOVER' &
follower=$!
trap 'kill "$follower" 2>/dev/null || true' EXIT

status=0
(cd "$root" && ./mvnw -B -q ${MAVEN_ARGS:-} -pl pglock-core -am test \
    -Dtest='LeaderElectionFaultsTest#mixedFaults*' -Dsurefire.failIfNoSpecifiedTests=false -Dmaven.test.failure.ignore=false \
    -Dpglock.faults.failovers="$failovers" ${seed:+-Dpglock.faults.seed="$seed"}) || status=$?

sleep 1 # let the follower print the last lines (tail -F reads once a second)
if [[ ! -f "$summary" ]]; then
  echo "the test printed no summary (it failed to start, or was skipped: see $log and the surefire report)" >&2
  exit 1
fi
echo "== summary"
cat "$summary"
exit $(( status == 0 ? 0 : 1 ))
