'use strict';
// The parity scenario (tests/parity/scenario/) run through the Node binding.
//
// usage: node parity.js DB_PATH [SCENARIO_DIR]
//
// Uses the JS API the way a host would: every event is an object parsed from
// its line with JSON.parse, so the binding's own serialization is what
// reaches the engine. Writes the export (every event, in append order) to
// stdout with {raw: true}: the engine's text, which JSON.parse followed by
// JSON.stringify would not keep (1e-7 is "1.5e-07" there, "1.5e-7" in JS).
// The addon comes from $CTXDB_NODE_ADDON (see bindings/node/README.md).
const fs = require('fs');
const path = require('path');
const ctxdb = require(path.join(__dirname, '..', '..', 'bindings', 'node'));

function fail(message) {
  process.stderr.write(`parity.js: ${message}\n`);
  process.exit(1);
}

// A failed check: reported, and the export still written (so the driver can
// show its bytes), with exit status 1. A failed call throws.
function problem(message) {
  process.stderr.write(`parity.js: ${message}\n`);
  process.exitCode = 1;
}

function readNdjson(file) {
  return fs.readFileSync(file, 'utf8').split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

function main() {
  const args = process.argv.slice(2);
  if (args.length < 1 || args.length > 2) fail('usage: node parity.js DB_PATH [SCENARIO_DIR]');
  const [dbPath, scenario = path.join(__dirname, 'scenario')] = args;
  const session = JSON.parse(fs.readFileSync(path.join(scenario, 'session.json'), 'utf8'));
  const single = readNdjson(path.join(scenario, 'single.ndjson'));
  const batch = readNdjson(path.join(scenario, 'batch.ndjson'));

  const db = ctxdb.open(dbPath);
  try {
    // createSession takes the SessionStarted payload as agentId + meta.
    const { agent_id: agentId, ...meta } = session.payload;
    const options = { id: session.id, agentId, meta };
    if (session.actor !== undefined) options.actor = session.actor;
    if (session.ts !== undefined) options.ts = session.ts;
    if (session.event_id !== undefined) options.eventId = session.event_id;
    const created = db.createSession(options);
    if (session.ts !== undefined && created.created_ts !== session.ts) {
      problem(`the session was created at ${created.created_ts}, not at ${session.ts}: ` +
           'createSession() did not pass options.ts to the engine');
    }
    const sid = created.id;
    for (const event of single) db.append(sid, event);
    db.appendMany(sid, batch);

    const expected = 1 + single.length + batch.length;
    let seen = 0;
    for (const _ of db.events(sid)) seen += 1; // eslint-disable-line no-unused-vars
    if (seen !== expected) problem(`the session has ${seen} events, expected ${expected}`);

    const report = db.verify();
    if (report.ok !== true) problem(`verify: ${JSON.stringify(report)}`);

    // The context compiler: the bundle of compile.json, next to the DB.
    const request = JSON.parse(fs.readFileSync(path.join(scenario, 'compile.json'), 'utf8'));
    fs.writeFileSync(`${dbPath}.bundle.json`, `${db.compile(request, { raw: true })}\n`);

    let out = '';
    for (const row of db.export({ raw: true })) out += `${row}\n`;
    process.stdout.write(out); // synchronous for files and pipes on Linux
  } finally {
    db.close();
  }
}

main();
