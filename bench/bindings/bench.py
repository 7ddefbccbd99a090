"""bench.py -- the Python side of bench/bindings (run by run.py).

    python3 bench.py EVENTS.ndjson DB_DIR SINGLE_N BATCH_N BATCH_SIZE [--profile]

The same work as bench_c.c through the Pythonic API, with the events held
as dicts (parsed from the NDJSON before timing, as a host holds them):
  single: db.append(session_id, event) per event;
  batch:  db.append_many(session_id, events[i:i + BATCH_SIZE]) per chunk.
Then the same with the events held as JSON text (the NDJSON lines as str),
which the binding passes through unserialized -- the difference is what
serializing the dicts costs:
  single_text: db.append(session_id, line);
  batch_text:  db.append_many(session_id, lines[i:i + BATCH_SIZE]).
Each scenario runs on a fresh file after an untimed warm-up; only the
append calls are timed. Prints one JSON line per scenario.

--profile: instead, runs the single and batch scenarios under cProfile and
prints the top of each profile (by own time) to stdout. Time spent inside
the C library is counted in the binding function that makes the ctypes
call (Database._out), since ctypes calls are not profiled on their own.

The library comes from CTXDB_LIB_PATH (run.py sets it to the build tree
that also built the C and Node sides).
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))

import ctxdb  # noqa: E402


def remove_db(path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass


def open_db(path):
    remove_db(path)
    db = ctxdb.open(path, durability="normal")
    sid = db.create_session(agent_id="bench-agent", actor="host")["id"]
    return db, sid


def check_close(db, sid, appended, path):
    """Untimed: every event is there and the chain verifies."""
    count = db.session(sid)["event_count"]
    if count not in (appended, appended + 1):
        raise SystemExit(f"bench.py: session holds {count} events after "
                         f"{appended} appends")
    report = db.verify(sid)
    if not report.get("ok"):
        raise SystemExit(f"bench.py: verify: {report}")
    db.close()
    remove_db(path)


def run_single(path, events):
    db, sid = open_db(path)
    append = db.append
    t0 = time.perf_counter()
    for ev in events:
        append(sid, ev)
    secs = time.perf_counter() - t0
    check_close(db, sid, len(events), path)
    return secs


def run_batch(path, chunks):
    db, sid = open_db(path)
    append_many = db.append_many
    t0 = time.perf_counter()
    for chunk in chunks:
        append_many(sid, chunk)
    secs = time.perf_counter() - t0
    check_close(db, sid, sum(len(c) for c in chunks), path)
    return secs


def report(scenario, n, secs):
    print(json.dumps({"host": "python", "scenario": scenario, "events": n,
                      "seconds": round(secs, 6), "eps": round(n / secs, 1)}),
          flush=True)


def main(argv):
    args = [a for a in argv if a != "--profile"]
    profile = len(args) != len(argv)
    if len(args) != 5:
        sys.exit("usage: bench.py EVENTS.ndjson DB_DIR SINGLE_N BATCH_N "
                 "BATCH_SIZE [--profile]")
    events_path, db_dir = args[0], args[1]
    single_n, batch_n, batch_size = (int(a) for a in args[2:5])
    with open(events_path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    events = [json.loads(line) for line in lines]
    if len(events) < max(single_n, batch_n, batch_size):
        sys.exit(f"bench.py: {events_path} has {len(events)} events, fewer "
                 f"than asked for")
    single = events[:single_n]
    chunks = [events[i:i + batch_size] for i in range(0, batch_n, batch_size)]
    single_text = lines[:single_n]
    chunks_text = [lines[i:i + batch_size] for i in range(0, batch_n, batch_size)]

    # Warm-up, untimed: the same calls on a scratch file.
    warm = os.path.join(db_dir, "py-warmup.ctxdb")
    run_single(warm, events[:min(single_n, 200)])
    run_batch(warm, [events[:batch_size]])
    run_single(warm, lines[:min(single_n, 200)])
    run_batch(warm, [lines[:batch_size]])

    if profile:
        import cProfile
        import pstats
        for name, fn, data, n in (("single", run_single, single, single_n),
                                  ("batch", run_batch, chunks, batch_n)):
            prof = cProfile.Profile()
            prof.enable()
            secs = fn(os.path.join(db_dir, f"py-{name}.ctxdb"), data)
            prof.disable()
            print(f"{name} under cProfile: {n / secs:,.0f} ev/s (profiling "
                  f"slows it down)")
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
        return

    report("single", single_n, run_single(os.path.join(db_dir, "py-single.ctxdb"), single))
    report("batch", batch_n, run_batch(os.path.join(db_dir, "py-batch.ctxdb"), chunks))
    report("single_text", single_n,
           run_single(os.path.join(db_dir, "py-single.ctxdb"), single_text))
    report("batch_text", batch_n,
           run_batch(os.path.join(db_dir, "py-batch.ctxdb"), chunks_text))
    print(json.dumps({"host": "python", "meta": {
        "ctxdb": ctxdb.version(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable}}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
