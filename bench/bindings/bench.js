'use strict';
// bench.js -- the Node side of bench/bindings (run by run.py).
//
//   node bench.js EVENTS.ndjson DB_DIR SINGLE_N BATCH_N BATCH_SIZE
//                 [--better-sqlite3] [--sqlite-first]
//
// The same work as bench_c.c through the binding's API, with the events held
// as objects (parsed from the NDJSON before timing, as a host holds them):
//   single: db.append(sessionId, event) per event;
//   batch:  db.appendMany(sessionId, events.slice(i, i + BATCH_SIZE)).
// Then the same with the events held as JSON text (the NDJSON lines as
// strings), which the binding passes through unserialized -- the difference
// is what serializing the objects costs:
//   single_text: db.append(sessionId, line);
//   batch_text:  db.appendMany(sessionId, lines.slice(i, i + BATCH_SIZE)).
// With --better-sqlite3, also the floor a Node host could reach with a plain
// SQLite table: better-sqlite3 inserting the same rows (the columns of
// bench/append.cpp's raw baseline) with a prepared statement, WAL and
// synchronous=NORMAL; one row per (autocommit) statement for "single", one
// transaction per BATCH_SIZE rows for "batch". The payload object is
// JSON.stringify'd inside the timed loop, since the host holds objects there
// too; ids, seqs and timestamps are made there as the engine makes its own;
// the three hash columns get one precomputed 32-byte value (no hashing).
// --sqlite-first runs the better-sqlite3 scenarios before ctxdb's (run.py
// alternates it between rounds).
//
// Each scenario runs on a fresh file after an untimed warm-up; only the
// inserts are timed. Prints one JSON line per scenario. The addon comes from
// CTXDB_NODE_ADDON (run.py points it at the build tree that built the C side).
const fs = require('node:fs');
const path = require('node:path');

const ctxdb = require(path.join(__dirname, '..', '..', 'bindings', 'node'));

function fail(msg) {
  process.stderr.write(`bench.js: ${msg}\n`);
  process.exit(1);
}

function removeDb(file) {
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    fs.rmSync(file + suffix, { force: true });
  }
}

function seconds(t0) {
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

// ---- ctxdb -----------------------------------------------------------------

function openCtxdb(file) {
  removeDb(file);
  const db = ctxdb.open(file, { durability: 'normal' });
  const sid = db.createSession({ agentId: 'bench-agent', actor: 'host' }).id;
  return { db, sid };
}

// Untimed: every event is there and the chain verifies.
function checkCtxdb({ db, sid }, appended, file) {
  const count = db.session(sid).event_count;
  if (count !== appended && count !== appended + 1) {
    fail(`session holds ${count} events after ${appended} appends`);
  }
  const report = db.verify(sid);
  if (!report.ok) fail(`verify: ${JSON.stringify(report)}`);
  db.close();
  removeDb(file);
}

function ctxdbSingle(file, events) {
  const h = openCtxdb(file);
  const { db, sid } = h;
  const t0 = process.hrtime.bigint();
  for (const ev of events) db.append(sid, ev);
  const secs = seconds(t0);
  checkCtxdb(h, events.length, file);
  return secs;
}

function ctxdbBatch(file, chunks) {
  const h = openCtxdb(file);
  const { db, sid } = h;
  const t0 = process.hrtime.bigint();
  for (const chunk of chunks) db.appendMany(sid, chunk);
  const secs = seconds(t0);
  checkCtxdb(h, chunks.reduce((n, c) => n + c.length, 0), file);
  return secs;
}

// ---- better-sqlite3 --------------------------------------------------------

const SESSION_ID = 'ses_01J0BENCH0000000000000000';
const BASE_TS = 1717243200000; // 2024-06-01, ms
const HASH = Buffer.from(
  '5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8', 'hex');

function openSqlite(Sqlite, file) {
  removeDb(file);
  const db = new Sqlite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE events(id TEXT, session_id TEXT, seq INTEGER, ts INTEGER, ' +
          'type TEXT, actor TEXT, payload TEXT, payload_hash BLOB, prev_hash BLOB, ' +
          'hash BLOB)');
  const insert = db.prepare('INSERT INTO events VALUES(?,?,?,?,?,?,?,?,?,?)');
  return { db, insert };
}

function insertRow(insert, ev, i) {
  insert.run(`evt_${String(i).padStart(26, '0')}`, SESSION_ID, i + 1, BASE_TS + i,
             ev.type, ev.actor, JSON.stringify(ev.payload), HASH, HASH, HASH);
}

function checkSqlite(db, appended, file) {
  const rows = db.prepare('SELECT count(*) AS n FROM events').get().n;
  if (rows !== appended) fail(`better-sqlite3 holds ${rows} rows, expected ${appended}`);
  db.close();
  removeDb(file);
}

function sqliteSingle(Sqlite, file, events) {
  const { db, insert } = openSqlite(Sqlite, file);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < events.length; ++i) insertRow(insert, events[i], i);
  const secs = seconds(t0);
  checkSqlite(db, events.length, file);
  return secs;
}

function sqliteBatch(Sqlite, file, chunks) {
  const { db, insert } = openSqlite(Sqlite, file);
  let next = 0;
  const tx = db.transaction((chunk) => {
    for (const ev of chunk) insertRow(insert, ev, next++);
  });
  const t0 = process.hrtime.bigint();
  for (const chunk of chunks) tx(chunk);
  const secs = seconds(t0);
  checkSqlite(db, next, file);
  return secs;
}

// ---- main ------------------------------------------------------------------

function report(host, scenario, n, secs) {
  process.stdout.write(`${JSON.stringify({
    host, scenario, events: n, seconds: Number(secs.toFixed(6)),
    eps: Number((n / secs).toFixed(1)),
  })}\n`);
}

function main(argv) {
  const flags = new Set(argv.filter((a) => a.startsWith('--')));
  const args = argv.filter((a) => !a.startsWith('--'));
  for (const f of flags) {
    if (f !== '--better-sqlite3' && f !== '--sqlite-first') fail(`unknown flag ${f}`);
  }
  if (args.length !== 5) {
    fail('usage: node bench.js EVENTS.ndjson DB_DIR SINGLE_N BATCH_N BATCH_SIZE ' +
         '[--better-sqlite3] [--sqlite-first]');
  }
  const [eventsFile, dbDir] = args;
  const [singleN, batchN, batchSize] = args.slice(2).map((a) => {
    const n = Number(a);
    if (!Number.isSafeInteger(n) || n <= 0) fail(`not a positive integer: ${a}`);
    return n;
  });
  const lines = fs.readFileSync(eventsFile, 'utf8').split('\n')
    .filter((l) => l.trim() !== '');
  const events = lines.map((l) => JSON.parse(l));
  if (events.length < Math.max(singleN, batchN, batchSize)) {
    fail(`${eventsFile} has ${events.length} events, fewer than asked for`);
  }
  const single = events.slice(0, singleN);
  const chunksOf = (list) => {
    const out = [];
    for (let i = 0; i < batchN; i += batchSize) out.push(list.slice(i, Math.min(i + batchSize, batchN)));
    return out;
  };
  const chunks = chunksOf(events);
  const singleText = lines.slice(0, singleN);
  const chunksText = chunksOf(lines);
  const warmSingle = events.slice(0, Math.min(singleN, 200));
  const warmChunks = [events.slice(0, batchSize)];
  const file = (name) => path.join(dbDir, `node-${name}.ctxdb`);

  const runCtxdb = () => {
    ctxdbSingle(file('warmup'), warmSingle); // untimed warm-up
    ctxdbBatch(file('warmup'), warmChunks);
    ctxdbSingle(file('warmup'), singleText.slice(0, warmSingle.length));
    ctxdbBatch(file('warmup'), [lines.slice(0, batchSize)]);
    report('node', 'single', singleN, ctxdbSingle(file('single'), single));
    report('node', 'batch', batchN, ctxdbBatch(file('batch'), chunks));
    report('node', 'single_text', singleN, ctxdbSingle(file('single'), singleText));
    report('node', 'batch_text', batchN, ctxdbBatch(file('batch'), chunksText));
  };
  let Sqlite = null;
  const runSqlite = () => {
    sqliteSingle(Sqlite, file('sqlite-warmup'), warmSingle); // untimed warm-up
    sqliteBatch(Sqlite, file('sqlite-warmup'), warmChunks);
    report('better-sqlite3', 'single', singleN, sqliteSingle(Sqlite, file('sqlite-single'), single));
    report('better-sqlite3', 'batch', batchN, sqliteBatch(Sqlite, file('sqlite-batch'), chunks));
  };

  const meta = { ctxdb: ctxdb.version(), node: process.version };
  if (flags.has('--better-sqlite3')) {
    // From bench/bindings/node_modules (run.py installs it with npm ci).
    Sqlite = require('better-sqlite3');
    meta.better_sqlite3 = require('better-sqlite3/package.json').version;
    const probe = new Sqlite(':memory:');
    meta.better_sqlite3_sqlite = probe.prepare('SELECT sqlite_version() AS v').get().v;
    probe.close();
    if (flags.has('--sqlite-first')) {
      runSqlite();
      runCtxdb();
    } else {
      runCtxdb();
      runSqlite();
    }
  } else {
    runCtxdb();
  }
  process.stdout.write(`${JSON.stringify({ host: 'node', meta })}\n`);
}

try {
  main(process.argv.slice(2));
} catch (e) {
  fail(e && e.stack ? e.stack : String(e));
}
