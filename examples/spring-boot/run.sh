#!/usr/bin/env bash
# Builds and runs the example service: examples/spring-boot/run.sh [--spring.datasource.url=jdbc:postgresql://...]
# Without a URL it starts an embedded PostgreSQL of its own. Then try:
#   curl -X POST 'localhost:8080/signups?email=ada@example.com'          # enqueued in the request's transaction
#   curl -X POST 'localhost:8080/signups?email=bob@example.com&fail=true' # rolled back: no job
#   curl localhost:8080/actuator/health/pglock ; curl localhost:8080/actuator/metrics/pglock.jobs.attempts
#   open http://localhost:8080/pglock/                                     # the dashboard: locks, tasks, jobs
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
./mvnw -B -q -ntp package -pl examples/spring-boot -am -DskipTests
exec java -jar examples/spring-boot/target/pglock-example-spring-boot.jar "$@"
