#!/usr/bin/env bash
# Runs the pglock benchmarks (B1..B7) and prints baseline, pglock, ratio, goal and PASS/MISS.
#   pglock-bench/run.sh [--url jdbc:postgresql://127.0.0.1:5432/test] [--only B1,B3] [--seconds 1] [--rounds 10]
#                        [--trials 20] [--idle-seconds 10]
# Builds the runnable jar first if it is missing or older than any source or pom.
# JAVA_OPTS is passed to the JVM.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
jar="$here/target/pglock-bench.jar"

if [[ ! -f "$jar" ]] || [[ -n "$(find "$root/pom.xml" "$root/pglock-core/pom.xml" "$root/pglock-core/src/main" \
    "$here/pom.xml" "$here/src/main" -newer "$jar" -type f -print -quit)" ]]; then
  echo "building $jar ..." >&2
  (cd "$root" && ./mvnw -q -pl pglock-bench -am package -DskipTests)
fi

# A fixed, modest heap keeps B4's heap figure steady; G1 is the default collector.
exec java -Xms512m -Xmx512m ${JAVA_OPTS:-} -jar "$jar" "$@"
