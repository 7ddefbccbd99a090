"""import_transcript: another agent's session folder imported, again, and
the errors, through the engine's own readers (tests/fixtures/transcripts)."""
import shutil
from pathlib import Path

import pytest

import ctxdb

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


@pytest.fixture
def codex_home(tmp_path) -> Path:
    home = tmp_path / ".codex"
    shutil.copytree(FIXTURES / "codex", home)
    return home


def by_status(report, status):
    return [f for f in report["sessions"] if f["status"] == status]


def test_a_folder_imports_each_file_and_a_malformed_one_fails_alone(db, codex_home):
    report = db.import_transcript("codex", codex_home)
    assert report["format"] == "codex"
    files = report["sessions"]
    assert [f["file"] for f in files] == sorted(f["file"] for f in files)
    assert all(f["file"].startswith(str(codex_home.resolve())) for f in files)
    failed = by_status(report, "failed")
    assert len(failed) == 1 and report["failed"] == 1
    assert failed[0]["events"] == 0
    assert failed[0]["file"] + ":" in failed[0]["error"]  # file:line
    imported = by_status(report, "imported")
    assert report["imported"] == len(imported) == len(files) - 1
    for f in imported:
        assert f["session_id"].startswith("codex-")
        assert db.session(f["session_id"])["id"] == f["session_id"]
        assert f["events"] > 0 and f["lines"] > 0
    assert sum(f["events"] for f in imported) == db.verify()["events"]
    assert db.verify()["ok"] is True
    assert db.rebuild(check=True)["identical"] is True


def test_importing_again_changes_nothing(db, codex_home):
    db.import_transcript("codex", str(codex_home))
    events = list(db.export(raw=True))
    again = db.import_transcript("codex", codex_home, final=True)
    assert again["imported"] == 0 and again["failed"] == 1
    assert again["unchanged"] == len(again["sessions"]) - 1
    assert list(db.export(raw=True)) == events


def test_errors_name_what_was_wrong_and_change_nothing(db, db_path, codex_home):
    db.create_session(id="s", agent_id="a")
    before = list(db.export(raw=True))
    with pytest.raises(ctxdb.InvalidInput, match="unknown format 'aider'"):
        db.import_transcript("aider", codex_home)
    with pytest.raises(ctxdb.NotFound, match="does not exist"):
        db.import_transcript("codex", codex_home / "nowhere")
    with pytest.raises(TypeError, match="format must be a str"):
        db.import_transcript(None, codex_home)
    with pytest.raises(TypeError, match="final must be a bool"):
        db.import_transcript("codex", codex_home, final="yes")
    with pytest.raises(TypeError, match="path must be"):
        db.import_transcript("codex", 3)
    assert list(db.export(raw=True)) == before
    db.close()
    with ctxdb.open(db_path, read_only=True) as ro:
        with pytest.raises(ctxdb.ReadOnly):
            ro.import_transcript("codex", codex_home)
