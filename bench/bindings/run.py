#!/usr/bin/python3
"""bench/bindings: what the Python and Node bindings cost over C.

Runs the same appends from C (bench_bindings_c), Python (bench.py) and
Node (bench.js), interleaved over several rounds in one run, and reports
the median events/s of each host and the overhead C_eps / host_eps:
  single: one append call (one transaction) per event;
  batch:  one batch call (one transaction) per 1000 events.
Goals: batches within 1.5x of C, single appends within 3x. With Node it
also runs better-sqlite3 inserting the same rows into a plain table, the
floor a Node host could reach without ctxdb.

    /usr/bin/python3 bench/bindings/run.py [--build-dir build] [--quick]

Exit status: 0 when the run completed (whether or not the goals hold),
1 on any error (including better-sqlite3 failing to install; pass
--no-better-sqlite3 to skip it), 2 on a bad command line or a missing build.
See README.md beside this file.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import gen_events  # noqa: E402

GOALS = {"single": 3.0, "batch": 1.5}  # max overhead C_eps / host_eps
LABELS = {"single": "single append", "batch": "batch of {n}"}
HOSTS = ("c", "python", "node")
HOST_NAMES = {"c": "C", "python": "Python", "node": "Node"}
HOST_TIMEOUT = 600  # seconds for one host's round; a hang is an error


class BenchError(Exception):
    pass


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---- what to run --------------------------------------------------------------

def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="run.py", description="ctxdb bindings against C (see README.md)")
    p.add_argument("--build-dir", default=os.environ.get("CTXDB_BUILD_DIR",
                                                         os.path.join(ROOT, "build")),
                   help="CMake build tree with libctxdb, bench_bindings_c and "
                        "the Node addon (default: $CTXDB_BUILD_DIR or build/)")
    p.add_argument("--quick", action="store_true",
                   help="a smoke run of a few seconds (2 rounds, 500 single, "
                        "2000 batched events)")
    p.add_argument("--rounds", type=int, help="rounds (default 9)")
    p.add_argument("--single", type=int, metavar="N",
                   help="events per round appended one by one (default 5000)")
    p.add_argument("--batch", type=int, metavar="N",
                   help="events per round appended in batches (default 20000)")
    p.add_argument("--batch-size", type=int, default=1000, metavar="N",
                   help="events per batch call (default 1000)")
    p.add_argument("--dir", help="where to create the temp dir for the "
                                 "database files (default: the system's)")
    p.add_argument("--python", default="/usr/bin/python3" if os.path.exists(
        "/usr/bin/python3") else sys.executable,
                   help="interpreter for bench.py (default /usr/bin/python3)")
    p.add_argument("--node", default="node", help="node for bench.js")
    p.add_argument("--no-better-sqlite3", dest="bsqlite", action="store_false",
                   help="skip the better-sqlite3 comparison (and its npm ci)")
    p.add_argument("--profile-python", action="store_true",
                   help="after the run, profile Python's single appends with "
                        "cProfile and print the top of it")
    a = p.parse_args(argv)
    quick = a.quick
    a.rounds = a.rounds if a.rounds is not None else (2 if quick else 9)
    a.single = a.single if a.single is not None else (500 if quick else 5000)
    a.batch = a.batch if a.batch is not None else (2000 if quick else 20000)
    for name in ("rounds", "single", "batch", "batch_size"):
        if getattr(a, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
    if a.batch % a.batch_size:
        p.error("--batch must be a multiple of --batch-size")
    return a


def find_build(build_dir: str) -> Dict[str, str]:
    b = os.path.abspath(build_dir)
    paths = {
        "lib": os.path.join(b, "libctxdb.so.1"),
        "c": os.path.join(b, "bench", "bench_bindings_c"),
        "addon": os.path.join(b, "bindings", "node", "ctxdb.node"),
    }
    missing = [p for p in paths.values() if not os.path.exists(p)]
    if missing:
        log("run.py: not built: " + ", ".join(missing) + "\n"
            f"  build them: cmake -S {ROOT} -B {b} && cmake --build {b} "
            "--target bench_bindings_c ctxdb_node\n"
            "  (or pass --build-dir)")
        sys.exit(2)
    paths["build_type"] = "?"
    try:
        with open(os.path.join(b, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("CMAKE_BUILD_TYPE:"):
                    paths["build_type"] = line.split("=", 1)[1].strip() or "(none)"
    except OSError:
        pass
    return paths


# ---- better-sqlite3 -------------------------------------------------------------

def node_prefix(node: str) -> str:
    """The install prefix whose include/node has the headers of this node."""
    exe = shutil.which(node)
    if not exe:
        raise BenchError(f"{node} not found")
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
    if not os.path.exists(os.path.join(prefix, "include", "node", "node_api.h")):
        raise BenchError(f"no Node headers in {prefix}/include/node (scripts/setup.sh "
                         "installs them); node-gyp would download them instead")
    return prefix


def bsqlite_loads(node: str) -> bool:
    r = subprocess.run([node, "-e", "require('better-sqlite3')"], cwd=HERE,
                       capture_output=True, text=True)
    return r.returncode == 0


def ensure_bsqlite(node: str, tmp: str) -> None:
    """npm ci in bench/bindings when better-sqlite3 is not there (or does not
    load). Its install script runs `prebuild-install || node-gyp rebuild`;
    build-from-source makes prebuild-install give up without a download
    (its prebuilt binaries are not on the npm registry), and nodedir makes
    node-gyp compile against the installed headers instead of fetching them.
    devdir, where node-gyp would put downloaded headers, is a fresh temp dir
    that must still be empty afterwards."""
    if bsqlite_loads(node):
        return
    npm = shutil.which("npm")
    if not npm:
        raise BenchError("npm not found")
    devdir = os.path.join(tmp, "node-gyp-devdir")
    os.makedirs(devdir)
    env = dict(os.environ,
               npm_config_build_from_source="true",
               npm_config_nodedir=node_prefix(node),
               npm_config_devdir=devdir,
               npm_config_python=sys.executable,
               JOBS=str(os.cpu_count() or 1))
    log("run.py: installing better-sqlite3 into bench/bindings/node_modules "
        "(npm ci; compiles its SQLite, about a minute) ...")
    logfile = os.path.join(tmp, "npm-ci.log")
    with open(logfile, "w") as out:
        r = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--foreground-scripts"],
                           cwd=HERE, env=env, stdout=out, stderr=subprocess.STDOUT)
    with open(logfile, errors="replace") as f:
        text = f.read()
    if r.returncode != 0:
        tail = "\n".join(text.splitlines()[-25:])
        raise BenchError(f"npm ci failed ({r.returncode}); the end of its log:\n{tail}")
    if os.listdir(devdir):
        raise BenchError(f"node-gyp downloaded into {devdir}: {os.listdir(devdir)}")
    if not bsqlite_loads(node):
        raise BenchError("better-sqlite3 installed but does not load")


# ---- running --------------------------------------------------------------------

def run_host(cmd: List[str], env: Dict[str, str], name: str) -> List[dict]:
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=HOST_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{name} took over {HOST_TIMEOUT} s: {' '.join(cmd)}") from None
    if r.returncode != 0:
        raise BenchError(f"{name} failed ({r.returncode}): {' '.join(cmd)}\n"
                         f"{r.stderr.strip()}")
    try:
        return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    except ValueError:
        raise BenchError(f"{name} printed something else than JSON lines:\n{r.stdout}") from None


def median(xs: List[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def commas(v: float) -> str:
    return f"{v:,.0f}" if v == v else "-"


def main(argv: List[str]) -> int:
    a = parse_args(argv)
    paths = find_build(a.build_dir)
    errors: List[str] = []
    tmp = tempfile.mkdtemp(prefix="ctxdb-bench-bindings-", dir=a.dir)
    try:
        bsqlite = a.bsqlite
        if bsqlite:
            try:
                ensure_bsqlite(a.node, tmp)
            except BenchError as e:
                log(f"run.py: better-sqlite3 is unavailable: {e}\nrun.py: going on "
                    "without it (the run will exit 1; --no-better-sqlite3 skips it)")
                errors.append("better-sqlite3 is unavailable: "
                              + str(e).splitlines()[0] + " (see above)")
                bsqlite = False

        events_file = os.path.join(tmp, "events.ndjson")
        n_events = max(a.single, a.batch, a.batch_size)
        event_bytes = gen_events.write_ndjson(n_events, events_file)

        env = dict(os.environ, CTXDB_LIB_PATH=paths["lib"],
                   CTXDB_NODE_ADDON=paths["addon"])
        counts = [str(a.single), str(a.batch), str(a.batch_size)]
        db_dir = os.path.join(tmp, "db")
        os.makedirs(db_dir)
        base = [events_file, db_dir] + counts
        commands = {
            "c": [paths["c"]] + base,
            "python": [a.python, os.path.join(HERE, "bench.py")] + base,
            "node": [a.node, os.path.join(HERE, "bench.js")] + base
                    + (["--better-sqlite3"] if bsqlite else []),
        }

        samples: Dict[Tuple[str, str], List[float]] = {}
        meta: Dict[str, dict] = {}
        progress = sys.stderr.isatty()
        for r in range(a.rounds):
            # Rotate who goes first, so no host always gets the warmer machine.
            order = HOSTS[r % 3:] + HOSTS[:r % 3]
            for host in order:
                if progress:
                    print(f"\rround {r + 1}/{a.rounds}: {host:<8}", end="",
                          file=sys.stderr, flush=True)
                cmd = commands[host]
                if host == "node" and bsqlite and r % 2:
                    cmd = cmd + ["--sqlite-first"]
                for rec in run_host(cmd, env, host):
                    if "meta" in rec:
                        meta[rec["host"]] = rec["meta"]
                    else:
                        samples.setdefault((rec["host"], rec["scenario"]), []).append(rec["eps"])
        if progress:
            print("\r" + " " * 40 + "\r", end="", file=sys.stderr, flush=True)

        report(a, paths, meta, samples, event_bytes, tmp, bsqlite)
        if a.profile_python:
            print("\n--- cProfile of Python's single and batch appends (bench.py --profile) ---",
                  flush=True)
            r = subprocess.run(commands["python"] + ["--profile"], env=env)
            if r.returncode != 0:
                raise BenchError(f"bench.py --profile failed ({r.returncode})")
    except BenchError as e:
        log(f"run.py: {e}")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for e in errors:
        log(f"run.py: error: {e}")
    return 1 if errors else 0


def report(a, paths, meta, samples, event_bytes, tmp, bsqlite) -> None:
    m = {k: median(v) for k, v in samples.items()}
    py, nd, c = meta.get("python", {}), meta.get("node", {}), meta.get("c", {})
    print(f"bench/bindings: ctxdb {c.get('ctxdb', '?')} ({paths['lib']}, build "
          f"{paths['build_type']}), SQLite {c.get('sqlite', '?')}")
    print(f"hosts: C; {py.get('python', '?')} ({py.get('executable', '?')}); "
          f"Node {nd.get('node', '?')}"
          + (f"; better-sqlite3 {nd.get('better_sqlite3')} (its own SQLite "
             f"{nd.get('better_sqlite3_sqlite')})" if bsqlite else ""))
    print(f"{a.rounds} rounds, hosts interleaved (order rotates each round), each "
          f"on fresh files in {tmp}; mean event {event_bytes} bytes")
    print("overhead = C ev/s / host ev/s (medians); goals: batch <= "
          f"{GOALS['batch']}x, single <= {GOALS['single']}x\n")

    rows = [("single", a.single), ("batch", a.batch)]
    label = {s: LABELS[s].format(n=a.batch_size) for s, _ in rows}
    print(f"{'scenario':<20}{'events/round':>13}{'C ev/s':>12}{'Python ev/s':>13}"
          f"{'overhead':>10}{'Node ev/s':>12}{'overhead':>10}")
    for s, n in rows:
        cc, pp, nn = m[("c", s)], m[("python", s)], m[("node", s)]
        print(f"{label[s]:<20}{n:>13}{commas(cc):>12}{commas(pp):>13}"
              f"{cc / pp:>9.2f}x{commas(nn):>12}{cc / nn:>9.2f}x")
    print()
    # The same appends with the host holding JSON text instead of objects:
    # the binding passes it through, so this isolates the binding's own cost
    # (argument checks, the FFI call, copying and parsing the result) from
    # serializing the objects.
    print("the same with the host holding JSON text (NDJSON lines as strings, "
          "passed through unserialized):")
    print(f"{'scenario':<20}{'events/round':>13}{'C ev/s':>12}{'Python ev/s':>13}"
          f"{'overhead':>10}{'Node ev/s':>12}{'overhead':>10}")
    for s, n in rows:
        cc, pp, nn = m[("c", s)], m[("python", s + "_text")], m[("node", s + "_text")]
        print(f"{label[s] + ', text':<20}{n:>13}{commas(cc):>12}{commas(pp):>13}"
              f"{cc / pp:>9.2f}x{commas(nn):>12}{cc / nn:>9.2f}x")
    print("\nwhere the time goes, microseconds per event (medians): C, then what "
          "each host adds:\nthe binding (text - C) and serializing the objects "
          "(objects - text)")
    print(f"{'scenario':<20}{'C':>8}{'Py binding':>12}{'Py JSON':>9}"
          f"{'Node binding':>14}{'Node JSON':>11}")
    for s, _ in rows:
        us = {k: 1e6 / v for k, v in m.items() if k[1] in (s, s + "_text")}
        c_us = us[("c", s)]
        cols = [f"{c_us:>8.1f}"]
        for host, w in (("python", (12, 9)), ("node", (14, 11))):
            t_us, o_us = us[(host, s + "_text")], us[(host, s)]
            cols.append(f"{t_us - c_us:>+{w[0]}.1f}{o_us - t_us:>+{w[1]}.1f}")
        print(f"{label[s]:<20}" + "".join(cols))
    print()
    for s, _ in rows:
        for host in ("python", "node"):
            ov = m[("c", s)] / m[(host, s)]
            print(f"goal: {HOST_NAMES[host]} {label[s]} within {GOALS[s]}x of C: "
                  f"{ov:.2f}x, {'met' if ov <= GOALS[s] else 'NOT met'}")

    if bsqlite:
        print("\nNode: ctxdb against better-sqlite3 inserting the same rows into a "
              "plain table\n(prepared statement, WAL, synchronous=NORMAL; single: "
              "autocommit per row, batch: a transaction per "
              f"{a.batch_size} rows)\n")
        print(f"{'scenario':<20}{'ctxdb-node ev/s':>17}{'better-sqlite3 ev/s':>21}"
              f"{'ctxdb/b-s3':>12}")
        for s, _ in rows:
            nn, bb = m[("node", s)], m[("better-sqlite3", s)]
            print(f"{label[s]:<20}{commas(nn):>17}{commas(bb):>21}{nn / bb:>12.2f}")
    print()
    # One JSON object per line, for scripts and CI graphs.
    for s, n in rows + [("single_text", a.single), ("batch_text", a.batch)]:
        for host in ("c", "python", "node", "better-sqlite3"):
            if (host, s) not in samples:
                continue
            xs = samples[(host, s)]
            rec = {"bench": "bindings", "scenario": s, "host": host,
                   "batch": 1 if s.startswith("single") else a.batch_size,
                   "events_per_round": n, "rounds": a.rounds, "event_bytes": event_bytes,
                   "eps": round(median(xs), 1), "eps_min": min(xs), "eps_max": max(xs)}
            if host in ("python", "node"):
                rec["overhead"] = round(m[("c", s.split("_")[0])] / median(xs), 4)
            elif host == "better-sqlite3":
                rec["ctxdb_node_ratio"] = round(m[("node", s)] / median(xs), 4)
            print(json.dumps(rec, separators=(",", ":")))
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
