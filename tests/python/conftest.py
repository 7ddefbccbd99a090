"""Shared fixtures of the Python binding tests.

Run with CTXDB_LIB_PATH naming the built library (CTest sets it); without
it the binding's own loader looks in its lib/ folder and the build trees.
"""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINDINGS = REPO / "bindings" / "python"
if str(BINDINGS) not in sys.path:  # also runnable without PYTHONPATH
    sys.path.insert(0, str(BINDINGS))

import ctxdb  # noqa: E402
from ctxdb import _capi  # noqa: E402


@pytest.fixture(scope="session")
def lib_path() -> str:
    """The path of the library the tests run against (loads it)."""
    _capi.load()
    return os.path.realpath(_capi.loaded_path())


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "test.ctxdb"


@pytest.fixture
def db(db_path):
    d = ctxdb.open(db_path)
    yield d
    d.close()


@pytest.fixture
def sid(db) -> str:
    return db.create_session(agent_id="tester")["id"]


def prompt(text="hello", **extra):
    """A UserPromptSubmitted event dict."""
    e = {"type": "UserPromptSubmitted", "actor": "user", "payload": {"text": text}}
    e.update(extra)
    return e


def subprocess_env(**overrides):
    """os.environ for a child interpreter: the binding on PYTHONPATH,
    CTXDB_LIB_PATH removed unless given."""
    env = dict(os.environ)
    env.pop("CTXDB_LIB_PATH", None)
    env["PYTHONPATH"] = str(BINDINGS)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for k, v in overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env
