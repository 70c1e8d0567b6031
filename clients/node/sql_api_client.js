// pglock's SQL API from Node with node-postgres (`pg`, installed here by `npm ci`): the client that the
// cross-language tests run, and an example of each call (docs/sql-api.md).
//
// Connects through libpq's environment, which pg reads too: PGHOST, PGPORT, PGDATABASE, PGUSER,
// PGPASSWORD, PGAPPNAME. Outside a transaction, as a session lock belongs to the connection.
//
//   node sql_api_client.js SCHEMA hold NAMESPACE NAME      try the lock: "held" (then unlocks at the next
//                                                          line on stdin, or at its end: "released") or "busy"
//   node sql_api_client.js SCHEMA try NAMESPACE NAME       "granted" (and unlocks) or "busy"
//   node sql_api_client.js SCHEMA enqueue QUEUE KIND JSON  enqueues a job; prints "job <id>"
//   node sql_api_client.js SCHEMA fail NAMESPACE NAME MSG  takes the lock with history, the work fails
//                                                          with MSG, the failure is recorded; prints "hold <id>"
'use strict';
const { Client } = require('pg');
const readline = require('readline');

async function main([schema, command, ...args]) {
  const client = new Client();
  await client.connect();
  const s = client.escapeIdentifier(schema);
  const one = async (text, values) => Object.values((await client.query(text, values)).rows[0])[0];
  try {
    await client.query("SET lock_timeout = '30s'"); // a wait is bounded: 55P03 past it, nothing held
    if (command === 'hold') {
      const [namespace, name] = args;
      if (!(await one(`SELECT ${s}.try_lock($1, $2)`, [namespace, name]))) {
        console.log('busy');
        return;
      }
      console.log('held');
      await nextLine();
      await client.query(`SELECT ${s}.unlock($1, $2)`, [namespace, name]);
      console.log('released');
    } else if (command === 'try') {
      const [namespace, name] = args;
      if (await one(`SELECT ${s}.try_lock($1, $2)`, [namespace, name])) {
        await client.query(`SELECT ${s}.unlock($1, $2)`, [namespace, name]);
        console.log('granted');
      } else {
        console.log('busy');
      }
    } else if (command === 'enqueue') {
      const [queue, kind, payload] = args;
      const job = await one(`SELECT ${s}.enqueue($1, $2::jsonb, queue => $3, max_attempts => 1)`,
        [kind, payload, queue]);
      console.log(`job ${job}`); // a bigint arrives as a string: exact
    } else if (command === 'fail') {
      const [namespace, name, message] = args;
      const hold = await one(`SELECT ${s}.lock_with_history($1, $2)`, [namespace, name]);
      try {
        throw new TypeError(message); // the work under the lock
      } catch (e) {
        await client.query(
          `SELECT ${s}.unlock_with_history($1, error_message => $2, error_class => $3, error_stack => $4)`,
          [hold, e.message, e.name, e.stack]);
      }
      console.log(`hold ${hold}`);
    } else {
      throw new Error(`unknown command ${command}`);
    }
  } finally {
    await client.end();
  }
}

function nextLine() {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin });
    const done = () => { rl.close(); process.stdin.destroy(); resolve(); }; // stdin would keep node running
    rl.once('line', done);
    rl.once('close', resolve);
  });
}

main(process.argv.slice(2)).catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
