"""The parity scenario (tests/parity/scenario/) run through the Python binding.

usage: parity.py DB_PATH [SCENARIO_DIR]

Uses the Pythonic API the way a host would: every event is a dict parsed
from its line with json.loads, so the binding's own serialization is what
reaches the engine. Writes the export (every event, in append order) to
stdout. A failed call raises; a failed check is reported on stderr and
the export still written (so the driver can show its bytes), with exit
status 1.
"""
import json
import os
import sys

import ctxdb


def read_ndjson(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


problems = []


def problem(message):
    print(f"parity.py: {message}", file=sys.stderr)
    problems.append(message)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: parity.py DB_PATH [SCENARIO_DIR]")
    db_path = sys.argv[1]
    scenario = sys.argv[2] if len(sys.argv) == 3 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "scenario")
    with open(os.path.join(scenario, "session.json"), encoding="utf-8") as f:
        session = json.load(f)
    single = read_ndjson(os.path.join(scenario, "single.ndjson"))
    batch = read_ndjson(os.path.join(scenario, "batch.ndjson"))

    with ctxdb.open(db_path) as db:
        created = db.create_session(session)
        sid = created["id"]
        if "ts" in session and created["created_ts"] != session["ts"]:
            problem(f"the session was created at {created['created_ts']}, "
                    f"not at {session['ts']}")
        for event in single:
            db.append(sid, event)
        db.append_many(sid, batch)

        expected = 1 + len(single) + len(batch)
        with db.events(sid) as events:
            seen = sum(1 for _ in events)
        if seen != expected:
            problem(f"the session has {seen} events, expected {expected}")

        report = db.verify()
        if report.get("ok") is not True:
            problem(f"verify: {report}")

        # The context compiler: the bundle of compile.json, next to the DB.
        with open(os.path.join(scenario, "compile.json"), encoding="utf-8") as f:
            request = json.load(f)
        with open(db_path + ".bundle.json", "w", encoding="utf-8") as f:
            f.write(db.compile(request, raw=True) + "\n")

        out = sys.stdout.buffer
        with db.export(raw=True) as rows:
            for row in rows:
                out.write(row.encode("utf-8") + b"\n")
        out.flush()
    if problems:
        sys.exit(1)


if __name__ == "__main__":
    main()
