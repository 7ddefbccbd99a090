"""The streaming artifact put (Database.artifact_writer, put_artifact_file)."""
import base64
import hashlib
import io
import json
import shutil

import pytest

import ctxdb

CHUNK = 256 * 1024


def content(n):
    line = b"".join(b"%06d build step ok\n" % i for i in range(1000))
    return (line * (n // len(line) + 1))[:n]


def test_streamed_content_is_the_put_artifact(db):
    data = content(3 * CHUNK + 17)
    with db.artifact_writer(kind="command_log", name="build.log") as w:
        for at in range(0, len(data), 100_000):
            assert w.write(data[at:at + 100_000]) == len(data[at:at + 100_000])
    art = w.artifact
    assert art["id"] == "art_" + hashlib.sha256(data).hexdigest()
    assert (art["raw_size"], art["chunk_count"], art["kind"]) == (len(data), 4, "command_log")
    assert db.read_artifact(art["id"]) == data
    assert db.put_artifact(data)["id"] == art["id"]
    assert len(db.artifacts()) == 1
    assert w.closed


def test_a_file_object_and_a_path(db, tmp_path):
    data = content(CHUNK + 5)
    path = tmp_path / "out.log"
    path.write_bytes(data)
    art = db.put_artifact_file(path, kind="file")
    assert art["name"] == str(path) and art["raw_size"] == len(data)
    w = db.artifact_writer()
    shutil.copyfileobj(io.BytesIO(data), w)
    assert w.writable() and not w.closed
    assert w.commit()["id"] == art["id"]
    with open(path, "rb") as f:
        assert db.put_artifact_file(f, name="x")["id"] == art["id"]
    w = db.artifact_writer()
    w.write("ünï\n")  # a str goes in as UTF-8
    assert db.read_artifact(w.commit()["id"]) == "ünï\n".encode()


def test_abort_and_exceptions_store_nothing(db):
    w = db.artifact_writer(event_id="evt_gone")
    w.write(content(2 * CHUNK))
    w.abort()
    w.abort()  # a no-op once closed
    assert db.artifacts() == []
    with pytest.raises(ZeroDivisionError):
        with db.artifact_writer() as w:
            w.write(b"half")
            1 / 0
    assert db.artifacts() == []
    with pytest.raises(ctxdb.Misuse, match="closed"):
        w.write(b"more")
    w = db.artifact_writer()
    w.write(b"dropped when collected")
    del w
    assert db.artifacts() == []


def test_other_calls_wait_for_the_writer(db):
    w = db.artifact_writer()
    w.write(b"abc")
    with pytest.raises(ctxdb.Misuse, match="artifact writer is open"):
        db.artifacts()
    with pytest.raises(ctxdb.Misuse, match="artifact writer is open"):
        db.artifact_writer()
    w.write(b"def")  # the writer carries on
    assert w.commit()["raw_size"] == 6
    assert len(db.artifacts()) == 1
    with pytest.raises(ctxdb.Misuse, match="closed"):
        w.commit()


def test_closing_the_database_rolls_back(tmp_path):
    path = str(tmp_path / "c.ctxdb")
    db = ctxdb.open(path)
    w = db.artifact_writer()
    w.write(content(2 * CHUNK))
    db.close()
    with pytest.raises(ctxdb.Misuse, match="closed"):
        w.write(b"x")
    w.abort()
    with ctxdb.open(path) as db2:
        assert db2.artifacts() == []


def test_bad_input(db):
    with pytest.raises(ctxdb.InvalidInput, match="movie"):
        db.artifact_writer(kind="movie")
    with pytest.raises(TypeError, match="kind must be a str"):
        db.artifact_writer(kind=3)
    with pytest.raises(ValueError, match="lone surrogate"):
        db.artifact_writer(name="\udcff")  # no UTF-8 form
    with pytest.raises(ctxdb.InvalidInput, match="role"):
        db.artifact_writer(role="")
    w = db.artifact_writer()
    with pytest.raises(TypeError, match="bytes or str"):
        w.write(42)
    w.write(b"\xff\x00 binary is fine")
    assert w.commit()["raw_size"] == 17
    with pytest.raises(ctxdb.Misuse, match="closed"):
        w.write(b"after the commit")
    assert [a["raw_size"] for a in db.artifacts()] == [17]  # nothing else was stored
    with pytest.raises(FileNotFoundError):
        db.put_artifact_file("/nonexistent/file")


# ---- export / import carry artifacts ----

def spilled_session(db):
    db.create_session({"id": "s1", "event_id": "e0", "payload": {"agent_id": "a"}})
    db.append("s1", type="AssistantMessageCreated", actor="assistant",
              payload={"content": [{"type": "tool_call", "id": "c1", "name": "pytest"}]})
    out = "".join("test %05d ... ok\n" % i for i in range(40000))
    db.append("s1", type="ToolCallFinished", actor="tool", id="e2",
              payload={"tool_call_id": "c1", "output": out})
    return out.encode()


def test_export_import_round_trip(db, tmp_path):
    out = spilled_session(db)
    (art,) = db.artifacts("s1")
    lines = list(db.export_ndjson("s1"))
    assert len(lines) == 3 + 1 + art["chunk_count"]
    assert lines[3].startswith('{"ctxdb_record":"artifact","format":1,')
    with ctxdb.open(str(tmp_path / "dst.ctxdb")) as dst:
        assert dst.import_ndjson(lines) == {"imported": 3, "skipped": 0}
        assert dst.read_artifact(art["id"]) == out
        assert dst.verify()["ok"]
        assert dst.artifact(art["id"])["refs"] == [
            {"event_id": "e2", "role": "output", "session_id": "s1"}]
        assert list(dst.export_ndjson())[:3] == lines[:3]  # the events, ids and hashes kept


def test_import_of_a_corrupted_chunk_imports_nothing(db, tmp_path):
    spilled_session(db)
    lines = list(db.export_ndjson())
    rec = json.loads(lines[-1])
    data = bytearray(base64.b64decode(rec["data"]))
    data[5] ^= 0xFF
    rec["data"] = base64.b64encode(bytes(data)).decode()
    lines[-1] = json.dumps(rec, separators=(",", ":"))
    with ctxdb.open(str(tmp_path / "dst.ctxdb")) as dst:
        with pytest.raises(ctxdb.Corrupt, match=f"line {len(lines)}: chunk"):
            dst.import_ndjson("\n".join(lines))
        assert dst.artifacts() == [] and dst.sessions() == []
    with pytest.raises(ctxdb.NotFound):
        db.export_ndjson("nope")
    with pytest.raises(TypeError):
        db.export_ndjson(3)
