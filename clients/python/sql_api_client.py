#!/usr/bin/env python3
"""pglock's SQL API from Python with psycopg2 (Debian: python3-psycopg2): the client that the
cross-language tests run, and an example of each call (docs/sql-api.md).

Connects through libpq's environment: PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD, PGAPPNAME.
Autocommit, as a session lock belongs to the connection, not to a transaction.

    sql_api_client.py SCHEMA hold NAMESPACE NAME      try the lock: "held" (then unlocks at the next line
                                                      on stdin, or at its end, and says "released") or "busy"
    sql_api_client.py SCHEMA try NAMESPACE NAME       "granted" (and unlocks) or "busy"
    sql_api_client.py SCHEMA enqueue QUEUE KIND JSON  enqueues a job; prints "job <id>"
    sql_api_client.py SCHEMA fail NAMESPACE NAME MSG  takes the lock with history, the work fails with
                                                      MSG, the failure is recorded; prints "hold <id>"
"""
import sys
import traceback

import psycopg2
from psycopg2 import sql


def main(schema, command, *args):
    conn = psycopg2.connect("")  # everything from the environment
    conn.autocommit = True
    s = sql.Identifier(schema)
    with conn.cursor() as cur:
        cur.execute("SET lock_timeout = '30s'")  # a wait is bounded: 55P03 past it, nothing held

        def one(query, params):
            cur.execute(sql.SQL(query).format(s=s), params)
            return cur.fetchone()[0]

        if command == "hold":
            namespace, name = args
            if not one("SELECT {s}.try_lock(%s, %s)", (namespace, name)):
                print("busy", flush=True)
                return
            print("held", flush=True)
            sys.stdin.readline()
            one("SELECT {s}.unlock(%s, %s) IS NULL", (namespace, name))
            print("released", flush=True)
        elif command == "try":
            namespace, name = args
            if one("SELECT {s}.try_lock(%s, %s)", (namespace, name)):
                one("SELECT {s}.unlock(%s, %s) IS NULL", (namespace, name))
                print("granted", flush=True)
            else:
                print("busy", flush=True)
        elif command == "enqueue":
            queue, kind, payload = args
            job = one("SELECT {s}.enqueue(%s, %s::jsonb, queue => %s, max_attempts => 1)", (kind, payload, queue))
            print("job %d" % job, flush=True)
        elif command == "fail":
            namespace, name, message = args
            hold = one("SELECT {s}.lock_with_history(%s, %s)", (namespace, name))
            try:
                raise RuntimeError(message)  # the work under the lock
            except Exception as e:
                one("SELECT {s}.unlock_with_history(%s, error_message => %s, error_class => %s, error_stack => %s)",
                    (hold, str(e), type(e).__name__, traceback.format_exc()))
            print("hold %d" % hold, flush=True)
        else:
            raise SystemExit("unknown command " + command)
    conn.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
