"""The Pythonic layer over _capi: Database, EventIterator and open().

It adds idiom, never logic: arguments are checked and turned into the
bytes the C ABI takes, results come back as plain dicts/lists, failures as
ctxdb.Error subclasses. What the data must look like is the engine's call.
"""
from __future__ import annotations

import asyncio
import builtins
import functools
import json
import operator
import os
import threading
import weakref
from collections.abc import Iterable, Mapping
from ctypes import POINTER, byref, c_int64, c_size_t, c_uint32, c_void_p, string_at
from typing import Any, Callable, Iterator, List, Optional, Set, Tuple, Union

from . import _capi
from .errors import InternalError, Misuse, error_for, last_error
from .types import (Anchor, Artifact, ArtifactPreview, ArtifactSearch, BatchResult, Branch,
                    Bundle, Children, CompileRequest, Event, FileInfo, ImportResult, Message,
                    OptimizeReport, RebuildReport, Session, State, Stats, ToolCall,
                    TranscriptImportResult, VerifyReport)
from .errors import InternalError, Misuse, last_error
from .types import SearchResult
from ctypes import byref, c_size_t, c_void_p, cast, string_at
from typing import Any, Callable, Iterator, List, Optional, Set, Tuple, Union

from . import _capi
from .errors import CheckFailed, InternalError, Misuse, last_error
from .types import (Artifact, ArtifactPreview, ArtifactSearch, BatchResult, Branch, Children, Event, FileInfo,
                    ImportResult, Memory, MemoryForgetResult, MemoryRetrieval, Message,
                    OptimizeReport, RebuildReport, Session, State, Stats, ToolCall,
                    VerifyReport)

__all__ = ["Database", "EventIterator", "open", "version", "version_number",
           "abi_version"]

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

BytesLike = Union[bytes, bytearray, memoryview]
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


# ---- turning Python values into what the C ABI takes -------------------------

def _encode(s: str, what: str) -> bytes:
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"{what} cannot be encoded as UTF-8: it contains a lone surrogate "
            f"(U+{ord(s[e.start]):04X}) at index {e.start}") from None


def _text(value: Any, what: str) -> bytes:
    """A str (encoded as UTF-8) or bytes (passed through as they are)."""
    if isinstance(value, str):
        return _encode(value, what)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


# ASCII output: escaping non-ASCII characters is much faster in the stdlib
# encoder than writing them as UTF-8, and the engine stores its own
# canonical form, so the stored bytes and hashes are the same either way.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_UTF8_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                                 allow_nan=False)


def _not_serializable(o: Any) -> Any:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


# The C encoder behind JSONEncoder, made once: JSONEncoder.encode builds it
# anew on every call, which append_many would pay per event. No circular
# check (markers=None): a cycle ends in RecursionError, reported as such.
_C_ENCODE = (json.encoder.c_make_encoder(
    None, _not_serializable, json.encoder.c_encode_basestring_ascii, None,
    ":", ",", False, False, False)
    if json.encoder.c_make_encoder and json.encoder.c_encode_basestring_ascii
    else None)


def _encode_json(value: Any) -> str:
    if _C_ENCODE is None or not isinstance(value, dict):
        return _ENCODER.encode(value)
    try:
        return "".join(_C_ENCODE(value, 0))
    except RecursionError:
        raise ValueError("Circular reference detected (or nesting too deep)") from None


def _json(value: Any, what: Any) -> bytes:
    """value as compact JSON bytes; ``what`` names it in errors, and may be
    a callable that builds the name only when one is needed."""
    try:
        s = _encode_json(value)
    except TypeError as e:
        raise TypeError(f"{_name(what)}: {e}") from None
    except ValueError as e:  # NaN/Infinity, circular reference
        raise ValueError(f"{_name(what)}: {e}") from None
    # A "\ud..." escape may be a lone surrogate, which has no UTF-8 form:
    # such documents take the slow path, which names it.
    if "\\ud" in s:
        _encode(_UTF8_ENCODER.encode(value), _name(what) + " (a string in it)")
    return s.encode("ascii")


def _name(what: Any) -> str:
    return what() if callable(what) else what


def _event(event: Any, fields: Mapping, what: str) -> bytes:
    """One event: a dict (plus keyword fields), or JSON text as str/bytes."""
    if event is None:
        if not fields:
            raise TypeError(f"{what} needs an event: a dict, JSON text, or "
                            f"keyword fields (type=..., actor=..., payload=...)")
        return _json(dict(fields), what)
    if isinstance(event, Mapping):
        doc = dict(event)
        doc.update(fields)
        return _json(doc, what)
    if isinstance(event, (str, bytes, bytearray, memoryview)):
        if fields:
            raise TypeError(f"{what}: keyword fields cannot be combined with an "
                            f"event given as JSON text; pass a dict")
        return _text(event, what + " event")
    raise TypeError(f"{what}: the event must be a dict, str or bytes, "
                    f"not {type(event).__name__}")


def _line(item: Any, what: str, index: int) -> bytes:
    if type(item) is dict:  # the common case first
        return _json(item, lambda: f"{what} item {index}")
    if isinstance(item, Mapping):
        return _json(dict(item), lambda: f"{what} item {index}")
    if isinstance(item, str):
        item = _encode(item, f"{what} item {index}")
    elif isinstance(item, (bytes, bytearray, memoryview)):
        item = bytes(item)
    else:
        raise TypeError(f"{what}: item {index} must be a dict, str or bytes, "
                        f"not {type(item).__name__}")
    # A line read from a file keeps its newline; one at the end is fine.
    if item.endswith(b"\n"):
        item = item[:-1]
    if b"\n" in item:
        raise ValueError(f"{what}: item {index} contains a newline; each item "
                         f"must be one JSON document on one line")
    return item


def _ndjson(data: Any, what: str) -> bytes:
    """NDJSON text (str/bytes, passed through) or an iterable of items, each
    a dict, or one JSON line as str/bytes. Item i becomes line i, so the
    engine's "line N" names the N-th item."""
    if isinstance(data, (str, bytes, bytearray, memoryview)):
        return _text(data, what)
    if isinstance(data, Mapping):
        raise TypeError(f"{what} takes NDJSON text or an iterable of events, "
                        f"not a single dict")
    if not isinstance(data, Iterable):
        raise TypeError(f"{what} takes NDJSON text or an iterable of events, "
                        f"not {type(data).__name__}")
    lines = []
    for i, item in enumerate(data, 1):
        # The common case, a plain dict, inline: this runs for every event
        # of every batch. Anything unusual (an error, a "\\ud" escape that
        # may be a lone surrogate) takes _line, which names the item.
        if type(item) is dict and _C_ENCODE is not None:
            try:
                text = "".join(_C_ENCODE(item, 0))
            except (TypeError, ValueError, RecursionError):
                text = None
            if text is not None and "\\ud" not in text:
                lines.append(text.encode("ascii"))
                continue
        lines.append(_line(item, what, i))
    return b"\n".join(lines)


def _opt_text(value: Any, what: str) -> Tuple[Optional[bytes], int]:
    """An optional string argument as the C ABI's (pointer, length): None
    is (NULL, 0), anything else as _text."""
    if value is None:
        return None, 0
    b = _text(value, what)
    return b, len(b)


def _int64(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if not _INT64_MIN <= n <= _INT64_MAX:
        raise ValueError(f"{what} is out of the int64 range: {n}")
    return n


def _scope_list(scopes: Any) -> list:
    """retrieve_memories()'s scopes: a list (or tuple) of them, or None."""
    if scopes is None:
        return []
    if not isinstance(scopes, (list, tuple)):
        raise TypeError("retrieve_memories(): scopes must be a list of scopes, not "
                        f"{type(scopes).__name__}")
    return list(scopes)


def _scope_ref(s: Any) -> dict:
    """A scope as memory_query.schema.json has it: {"scope", "id"?} from a
    dict, or from a (scope,) or (scope, id) tuple or list."""
    if isinstance(s, dict):
        return s
    if not isinstance(s, (list, tuple)) or len(s) not in (1, 2):
        raise TypeError("retrieve_memories(): a scope is a dict or a (scope, id) pair, not "
                        f"{s!r}")
    return {"scope": s[0]} if len(s) == 1 or s[1] is None else {"scope": s[0], "id": s[1]}


def _path(path: Any) -> bytes:
    if path is None or not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path must be str, bytes or os.PathLike, "
                        f"not {type(path).__name__}")
    try:
        b = os.fsencode(path)
    except UnicodeEncodeError as e:
        raise ValueError(f"path cannot be encoded: {e}") from None
    if b"\0" in b:
        raise ValueError("path contains a NUL character")
    return b


def _closed() -> Misuse:
    return Misuse(_capi.MISUSE, "the database is closed")


# ---- host token counters ----------------------------------------------------------

class _TokenCounter:
    """A Python callable as a ctxdb_token_count_fn: the ctypes callback and
    what went wrong in it, so that the failed call can say so."""
    __slots__ = ("name", "fn", "c_fn", "error")

    def __init__(self, name: str, fn: Callable[[str], int]) -> None:
        self.name = name
        self.fn = fn
        self.error: Optional[BaseException] = None
        self.c_fn = _capi.ctxdb_token_count_fn(self._count)

    def _count(self, _user_data: Any, text: Any, length: int, out_tokens: Any) -> int:
        # Nothing may escape into C: every failure is kept and reported as
        # CTXDB_INTERNAL, which fails the ctxdb call that needed the count.
        try:
            data = string_at(text, length) if length else b""
            n = self.fn(data.decode("utf-8", "replace"))
            if isinstance(n, bool) or not isinstance(n, int):
                raise TypeError(f"the token counter must return an int, "
                                f"not {type(n).__name__}")
            if not 0 <= n <= _INT64_MAX:
                raise ValueError(f"the token counter returned {n}, not a count "
                                 f"(0 .. 2**63-1)")
            out_tokens[0] = n
            return _capi.OK
        except BaseException as e:  # KeyboardInterrupt too: re-raised after the call
            if self.error is None:
                self.error = e
            return _capi.INTERNAL


def _call_error(conn: _Conn, rc: int, ptr: int) -> BaseException:
    """The exception for a failed call on conn: the library's, joined by
    what the host token counter raised when that is why it failed."""
    err = last_error(rc, ptr)
    counter = conn.counter
    cause = counter.error if counter is not None else None
    if cause is None:
        return err
    counter.error = None
    if not isinstance(cause, Exception):  # KeyboardInterrupt, SystemExit
        return cause
    wrapped = error_for(rc, f"{err.message}: {type(cause).__name__}: {cause}")
    wrapped.__cause__ = cause
    return wrapped


def _json_input(value: Any, fields: Mapping, what: str) -> bytes:
    """A JSON document: a dict (plus keyword fields), or JSON text as
    str/bytes (passed as it is)."""
    if isinstance(value, Mapping):
        doc = dict(value)
        doc.update(fields)
        return _json(doc, what)
    if value is None and fields:
        return _json(dict(fields), what)
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        if fields:
            raise TypeError(f"{what}: keyword fields cannot be combined with JSON "
                            f"text; pass a dict")
        return _text(value, what)
    raise TypeError(f"{what} takes a dict or JSON text (str or bytes), "
                    f"not {type(value).__name__}")


# ---- the handle and its iterators ----------------------------------------------

class _IterState:
    """The C iterator pointer, shared by an EventIterator and its handle."""
    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr: Optional[int] = ptr


class _Conn:
    """The C handle pointer and the iterators open on it.

    Shared by a Database, its EventIterators and their finalizers, none of
    which refers back to the Database, so finalizers run in any order.
    The pointer is None once closed and is never passed to C after that:
    a freed handle's address may be reused by another handle.
    """
    __slots__ = ("ptr", "iters", "lock", "counter")

    def __init__(self, ptr: int) -> None:
        self.ptr: Optional[int] = ptr
        self.iters: Set[_IterState] = set()
        # The host token counter set on the handle (set_token_counter): kept
        # here, with the handle, so that the C callback outlives its use.
        self.counter: Optional[_TokenCounter] = None
        # Reentrant: a finalizer may run (garbage collection) on a thread
        # that already holds it.
        self.lock = threading.RLock()

    def close(self) -> int:
        with self.lock:
            ptr = self.ptr
            if ptr is None:
                return _capi.OK
            for state in list(self.iters):
                if state.ptr is not None:
                    _capi.ctxdb_iter_free(state.ptr)
                    state.ptr = None
            self.iters.clear()
            self.ptr = None
            return _capi.ctxdb_close(ptr)


def _close_quietly(conn: _Conn) -> None:
    conn.close()  # a finalizer has nowhere to report an error


def _free_iter(conn: _Conn, state: _IterState) -> None:
    with conn.lock:
        ptr = state.ptr
        if ptr is None:  # exhausted earlier, or freed when its handle closed
            return
        state.ptr = None
        conn.iters.discard(state)
        if conn.ptr is not None:
            _capi.ctxdb_iter_free(ptr)


def _awaitable(name: str) -> Callable[..., Any]:
    """Database.<name>_async: <name> run on the running loop's default
    executor (a thread), so the loop keeps turning while it works."""
    call = getattr(Database, name)

    @functools.wraps(call)
    async def run(self: Database, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(call, self, *args, **kwargs))

    run.__name__ = run.__qualname__ = f"{name}_async"
    run.__doc__ = f"Awaitable {name}(): the same call, run in a thread (see Database)."
    return run


class EventIterator(Iterator[Any]):
    """A streaming iterator over stored events (ctxdb_events_iter).

    Rows are fetched one ctxdb_iter_next call at a time (the engine reads
    pages of 256) and copied before the next call. The C iterator is freed
    when the iterator is exhausted, on close() / leaving a ``with`` block,
    when it is garbage collected, and when its database closes. It keeps
    its Database open while it is alive.
    """

    def __init__(self, db: "Database", ptr: int, raw: bool) -> None:
        self._db = db
        self._conn = db._require_conn()
        self._state = _IterState(ptr)
        self._raw = raw
        self._finished = False
        self._conn.iters.add(self._state)
        self._finalizer = weakref.finalize(self, _free_iter, self._conn, self._state)

    def __iter__(self) -> "EventIterator":
        return self

    def __next__(self) -> Any:
        conn, state = self._conn, self._state
        row = c_void_p()
        row_len = c_size_t(0)
        with conn.lock:
            if state.ptr is None:
                if conn.ptr is None and not self._finished:
                    raise Misuse(_capi.MISUSE, "the iterator's database was closed")
                raise StopIteration
            rc = _capi.ctxdb_iter_next(state.ptr, byref(row), byref(row_len))
            if rc == _capi.ROW:
                if not row.value:
                    self._finish()
                    raise InternalError(_capi.INTERNAL, "ctxdb_iter_next gave a NULL row")
                data = string_at(row.value, row_len.value)  # copy: borrowed row
            elif rc == _capi.DONE:
                self._finish()
                raise StopIteration
            else:
                err = last_error(rc, None)
                self._finish()
                raise err
        return data.decode("utf-8") if self._raw else json.loads(data)

    def _finish(self) -> None:
        self._finished = True
        self._finalizer()

    def close(self) -> None:
        """Frees the C iterator now; further next() calls stop."""
        self._finished = True
        self._finalizer()

    @property
    def closed(self) -> bool:
        return self._state.ptr is None

    def __enter__(self) -> "EventIterator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()



def _artifact_meta(caller: str, **fields: Optional[str]) -> bytes:
    """The meta JSON of put_artifact() and artifact_writer(): the fields
    given (each a str), by name."""
    meta = {}
    for key, value in fields.items():
        if value is not None:
            if not isinstance(value, str):
                raise TypeError(f"{caller}: {key} must be a str, "
                                f"not {type(value).__name__}")
            meta[key] = value
    return _json(meta, f"{caller} meta")

class Database:
    """A connection to one ctxdb file (ctxdb_open). Use ``ctxdb.open()``.

    A context manager; ``close()`` is idempotent; a Database that is
    garbage collected is closed. Calls on one Database are serialized, so
    it may be shared between threads.

    Every call releases the GIL while the library works (ctypes does, for a
    CDLL), so other Python threads run meanwhile. The calls that can take
    long also have awaitable variants that run them on the event loop's
    default executor: ``compile_async``, ``compact_async``,
    ``import_ndjson_async``, ``import_transcript_async``, ``verify_async``,
    ``rebuild_async``, ``optimize_async``, ``search_async``,
    ``retrieve_memories_async`` and ``record_response_async`` take the same
    arguments as the call they are named after. ``close()`` waits for a call
    in flight on another thread.
    """

    def __init__(self, path: PathLike, **config: Any) -> None:
        self._conn: Optional[_Conn] = None
        bpath = _path(path)
        cfg = {k: v for k, v in config.items() if v is not None}
        cfg_json = _json(cfg, "open() config") if cfg else None
        handle = c_void_p()
        rc = _capi.ctxdb_open(bpath, cfg_json, len(cfg_json) if cfg_json else 0,
                              byref(handle))
        if rc != _capi.OK:
            raise last_error(rc, None)
        if not handle.value:
            raise InternalError(_capi.INTERNAL, "ctxdb_open gave no handle")
        self._conn = _Conn(handle.value)
        self._finalizer = weakref.finalize(self, _close_quietly, self._conn)
        self.path: str = os.fsdecode(bpath)
        self.config = cfg

    # ---- lifetime ----

    def close(self) -> None:
        """Closes the database and every iterator still open on it."""
        conn = self._conn
        if conn is None:
            return
        self._finalizer.detach()
        rc = conn.close()
        if rc != _capi.OK:
            raise last_error(rc, None)

    @property
    def closed(self) -> bool:
        return self._conn is None or self._conn.ptr is None

    def __enter__(self) -> "Database":
        self._require_conn()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<ctxdb.Database {getattr(self, 'path', '?')!r} {state}>"

    def _require_conn(self) -> _Conn:
        conn = self._conn
        if conn is None or conn.ptr is None:
            raise _closed()
        return conn

    def _out(self, fn: Callable[..., int], *args: Any) -> bytes:
        """Calls fn(db, *args, &out, &out_len); returns a copy of *out and
        frees it (exactly once, also when the call failed)."""
        conn = self._require_conn()
        out = c_void_p()
        out_len = c_size_t(0)
        with conn.lock:
            ptr = conn.ptr
            if ptr is None:
                raise _closed()
            rc = fn(ptr, *args, byref(out), byref(out_len))
            try:
                if rc != _capi.OK:
                    raise _call_error(conn, rc, ptr)
                if not out.value:
                    raise InternalError(_capi.INTERNAL, "a ctxdb call gave no output")
                return string_at(out.value, out_len.value)
            finally:
                if out.value:
                    _capi.ctxdb_free(out.value)

    # ---- sessions ----

    def create_session(self, id: Union[None, str, Mapping] = None,
                       agent_id: Optional[str] = None,
                       actor: Optional[str] = None, *,
                       ts: Optional[int] = None, **meta: Any) -> Session:
        """Creates a session (appends its SessionStarted event).

        Either ``create_session(id=None, agent_id=..., actor=None, **meta)``
        -- meta joins agent_id in the SessionStarted payload -- or
        ``create_session({"id"?, "actor"?, "ts"?, "payload": {"agent_id": ...}})``.
        """
        if isinstance(id, Mapping):
            if agent_id is not None or actor is not None or ts is not None or meta:
                raise TypeError("create_session() takes a dict or keyword "
                                "arguments, not both")
            doc = dict(id)
        else:
            if id is not None and not isinstance(id, str):
                raise TypeError(f"create_session(): id must be a str, a dict or "
                                f"None, not {type(id).__name__}")
            doc = {}
            if id is not None:
                doc["id"] = id
            if actor is not None:
                doc["actor"] = actor
            if ts is not None:
                doc["ts"] = ts
            payload = {} if agent_id is None else {"agent_id": agent_id}
            payload.update(meta)
            doc["payload"] = payload
        data = _json(doc, "create_session()")
        return json.loads(self._out(_capi.ctxdb_session_create, data, len(data)))

    def session(self, id: Union[str, bytes]) -> Session:
        """The session with this id (NotFound when there is none)."""
        sid = _text(id, "session id")
        return json.loads(self._out(_capi.ctxdb_session_get, sid, len(sid)))

    def sessions(self) -> List[Session]:
        """Every session, oldest first."""
        return json.loads(self._out(_capi.ctxdb_session_list))

    # ---- the event log ----

    def append(self, session_id: Union[str, bytes], event: Any = None,
               **fields: Any) -> Event:
        """Appends one event; returns it as stored.

        ``event`` is a dict or JSON text (str/bytes, passed as is); keyword
        fields (type=..., actor=..., payload=..., id=..., ...) build or
        extend a dict.
        """
        sid = _text(session_id, "session_id")
        data = _event(event, fields, "append()")
        return json.loads(self._out(_capi.ctxdb_append, sid, len(sid), data, len(data)))

    def append_many(self, session_id: Union[str, bytes], events: Any) -> BatchResult:
        """Appends events in one transaction (one ctxdb_append_batch call):
        all or nothing. ``events`` is an iterable of dicts / JSON lines, or
        NDJSON text. An error names the failing line (= item number)."""
        sid = _text(session_id, "session_id")
        data = _ndjson(events, "append_many()")
        return json.loads(self._out(_capi.ctxdb_append_batch, sid, len(sid),
                                    data, len(data)))

    def record_response(self, session_id: Union[str, bytes], response: Any,
                        format: str, *, stream: bool = False,
                        **options: Any) -> Event:
        """Records a provider's answer as the AssistantMessageCreated it
        means (one ctxdb_response_record call); returns the stored event.

        ``format`` is "openai.chat", "openai.responses",
        "anthropic.messages" or "gemini.generate_content". ``response`` is
        the complete response (a dict, e.g. ``completion.model_dump()``, or
        its JSON text); with ``stream=True`` it is the stream's events:
        NDJSON text, or an iterable of event dicts / JSON lines. Keyword
        options: branch_id, parent_id, actor, run_id, ts, latency_ms
        (response_record_options.schema.json). Recording the same response
        again returns the stored event.
        """
        sid = _text(session_id, "session_id")
        opts = dict(options)
        opts["format"] = format
        if stream:
            opts["stream"] = True
            data = _ndjson(response, "record_response()")
        elif isinstance(response, Mapping):
            data = _json(dict(response), "record_response() response")
        else:
            data = _text(response, "record_response() response")
        o = _json(opts, "record_response() options")
        return json.loads(self._out(_capi.ctxdb_response_record, sid, len(sid),
                                    o, len(o), data, len(data)))

    def event(self, id: Union[str, bytes]) -> Event:
        """The stored event with this id (NotFound when there is none)."""
        eid = _text(id, "event id")
        return json.loads(self._out(_capi.ctxdb_event_get, eid, len(eid)))

    def events(self, session_id: Union[str, bytes], from_seq: int = 1,
               to_seq: Optional[int] = None, *, raw: bool = False) -> EventIterator:
        """Streams a session's events with from_seq <= seq <= to_seq (None:
        no upper bound), in seq order. raw=True yields the JSON text."""
        sid = _text(session_id, "session_id")
        lo = _int64(from_seq, "from_seq")
        hi = -1 if to_seq is None else _int64(to_seq, "to_seq")
        return self._iter(_capi.ctxdb_events_iter, raw, sid, len(sid), lo, hi)

    def export(self, *, raw: bool = False) -> EventIterator:
        """Streams every event of every session in append order -- the
        events of the stream import_ndjson() takes (export_ndjson() adds
        the artifacts). raw=True yields the JSON text lines."""
        return self._iter(_capi.ctxdb_events_iter, raw, None, 0, 0, -1)

    def export_ndjson(self, session_id: Union[None, str, bytes] = None) -> EventIterator:
        """The export stream as NDJSON lines (str), what import_ndjson()
        takes: the events (of every session, or of session_id), then the
        artifacts they refer to, each an artifact line and its chunk lines
        (checked by hash on import)."""
        sid = None if session_id is None else _text(session_id, "session_id")
        return self._iter(_capi.ctxdb_export, True, sid, 0 if sid is None else len(sid))

    def _iter(self, fn: Callable[..., int], raw: bool, *args: Any) -> EventIterator:
        """Opens an iterator with fn(db, *args, &iter)."""
        conn = self._require_conn()
        handle = c_void_p()
        with conn.lock:
            ptr = conn.ptr
            if ptr is None:
                raise _closed()
            rc = fn(ptr, *args, byref(handle))
            if rc != _capi.OK:
                raise last_error(rc, ptr)
            if not handle.value:
                raise InternalError(_capi.INTERNAL, "a ctxdb call gave no iterator")
            try:
                return EventIterator(self, handle.value, bool(raw))
            except BaseException:
                _capi.ctxdb_iter_free(handle.value)
                raise

    # ---- the session tree ----

    def fork(self, session_id: Union[str, bytes], event_id: str,
             kind: Optional[str] = None, name: Optional[str] = None,
             id: Optional[str] = None, *, actor: Optional[str] = None,
             ts: Optional[int] = None) -> Branch:
        """Forks a branch at event_id (any event of the session) by
        appending a BranchCreated event; returns the new branch. kind:
        "fork" (default), "subagent" or "what_if"; name: a name to find it
        by; id: the branch's id (generated when None)."""
        sid = _text(session_id, "session_id")
        if not isinstance(event_id, str):
            raise TypeError(f"fork(): event_id must be a str, "
                            f"not {type(event_id).__name__}")
        spec = {"event_id": event_id}
        for key, value in (("kind", kind), ("name", name), ("id", id),
                           ("actor", actor), ("ts", ts)):
            if value is not None:
                spec[key] = value
        data = _json(spec, "fork()")
        return json.loads(self._out(_capi.ctxdb_branch_fork, sid, len(sid), data, len(data)))

    def branches(self, session_id: Union[str, bytes]) -> List[Branch]:
        """The session's branches, main first, then in the order they were
        opened (NotFound for an unknown session)."""
        sid = _text(session_id, "session_id")
        return json.loads(self._out(_capi.ctxdb_branch_list, sid, len(sid)))

    def branch_path(self, session_id: Union[str, bytes],
                    branch: Union[None, str, bytes] = None, *,
                    raw: bool = False) -> EventIterator:
        """Streams the events on a branch's path, root to leaf. branch is
        the branch's id or a name unique in the session; None is main. An
        unknown session or branch raises NotFound here, not while
        iterating. raw=True yields the JSON text. (Database.path is the
        file's path.)"""
        sid = _text(session_id, "session_id")
        return self._iter(_capi.ctxdb_branch_path, raw, sid, len(sid),
                          *_opt_text(branch, "branch"))

    def children(self, event_id: Union[str, bytes]) -> Children:
        """What follows an event: {"event_id", "events": [the next event on
        its branch, then the first event of each branch forked there],
        "sessions": [the child sessions it spawned]}."""
        eid = _text(event_id, "event id")
        return json.loads(self._out(_capi.ctxdb_event_children, eid, len(eid)))

    # ---- views of a branch ----
    # Each reads one branch's path root to leaf: branch is the branch's id
    # or a name unique in the session; None is main.

    def _view(self, fn: Callable[..., int], session_id: Union[str, bytes],
              branch: Union[None, str, bytes]) -> Any:
        sid = _text(session_id, "session_id")
        return json.loads(self._out(fn, sid, len(sid), *_opt_text(branch, "branch")))

    def messages(self, session_id: Union[str, bytes],
                 branch: Union[None, str, bytes] = None) -> List[Message]:
        """The messages of a branch: role, typed blocks, token count."""
        return self._view(_capi.ctxdb_messages_list, session_id, branch)

    def tool_calls(self, session_id: Union[str, bytes],
                   branch: Union[None, str, bytes] = None) -> List[ToolCall]:
        """The tool calls of a branch, in call order, each with its status
        ("pending", "success", "error") and result as seen from it."""
        return self._view(_capi.ctxdb_tool_calls_list, session_id, branch)

    def files(self, session_id: Union[str, bytes],
              branch: Union[None, str, bytes] = None) -> List[FileInfo]:
        """The files a branch touched, by path: last read, last write,
        counts and every change."""
        return self._view(_capi.ctxdb_files_list, session_id, branch)

    # ---- state and stats ----

    def state(self, session_id: Union[str, bytes],
              branch: Optional[str] = None, at: Optional[str] = None) -> State:
        """The agent state: {"session_id", "branch_id", "seq", "event_id",
        "state": {goal, plan, constraints, facts, decisions, ...}}. branch:
        a branch id or a name unique in the session (None: main); at: an
        event id of the session, for the state right after it on its own
        branch (time travel). Not both."""
        sid = _text(session_id, "session_id")
        query = {}
        for key, value, what in (("branch_id", branch, "branch"), ("at", at, "at")):
            if value is not None:
                if not isinstance(value, str):
                    raise TypeError(f"state(): {what} must be a str, "
                                    f"not {type(value).__name__}")
                query[key] = value
        data = _json(query, "state() query")
        return json.loads(self._out(_capi.ctxdb_state_get, sid, len(sid), data, len(data)))

    def stats(self, session_id: Union[None, str, bytes] = None) -> Stats:
        """One session's stats, or (None) the totals of every session:
        events, messages, tokens, tools, latency_ms, approvals,
        compactions, context, errors."""
        return json.loads(self._out(_capi.ctxdb_stats_get, *_opt_text(session_id, "session_id")))

    # ---- compaction ----
    # policy (compaction_policy.schema.json): None or a dict such as
    # {"branch_id": "main", "keep_recent_tokens": 20000, "timeout_ms": 60000}.

    def _policy_call(self, fn: Callable[..., int], session_id: Union[str, bytes],
                     policy: Optional[Mapping]) -> Any:
        sid = _text(session_id, "session_id")
        data = _json(policy if policy is not None else {}, "policy")
        return json.loads(self._out(fn, sid, len(sid), data, len(data)))

    def should_compact(self, session_id: Union[str, bytes],
                       policy: Optional[Mapping] = None) -> Any:
        """Whether to compact: context_tokens (anchored on provider usage),
        the soft and hard limits, net_benefit_tokens, should_compact and
        the reason. Reads cached counts only."""
        return self._policy_call(_capi.ctxdb_compact_should, session_id, policy)

    def plan_compaction(self, session_id: Union[str, bytes],
                        policy: Optional[Mapping] = None) -> Any:
        """The plan: the cut, the range, the previous summary to inherit,
        the obligations the summary must cover, memory candidates, and the
        transcript for a model's prompt. Writes nothing."""
        return self._policy_call(_capi.ctxdb_compact_plan, session_id, policy)

    def commit_compaction(self, session_id: Union[str, bytes], plan: Any,
                          summary: Any) -> Any:
        """Checks a summary (a dict, or JSON text) made for a plan (what
        plan_compaction returned) and commits it. CheckFailed names the
        failed checks; a CompactionFailed event records them."""
        sid = _text(session_id, "session_id")
        p = _text(plan, "plan") if isinstance(plan, (str, bytes)) else _json(plan, "plan")
        s = summary if isinstance(summary, (str, bytes)) else _encode_json(summary)
        s = _text(s, "summary")
        return json.loads(self._out(_capi.ctxdb_compact_commit, sid, len(sid), p, len(p),
                                    s, len(s)))

    def compact(self, session_id: Union[str, bytes], policy: Optional[Mapping] = None,
                summarizer: Optional[Callable[[Any], Any]] = None) -> Any:
        """plan -> summarize -> check -> commit. summarizer(plan: dict)
        returns the summary (a dict, or JSON text); None uses the built-in
        extractive summarizer. It runs on this thread and must not call
        this Database. If it raises, returns something unusable, or
        answers after policy["timeout_ms"], nothing is committed, one
        CompactionFailed event records why, and CheckFailed is raised
        (chained to the summarizer's exception). Returns
        {"status": "compacted", "event_id", "tokens_before",
        "tokens_after", "ratio", "checks", "summary", ...} or
        {"status": "nothing_to_compact", "reason", ...}."""
        sid = _text(session_id, "session_id")
        data = _json(policy if policy is not None else {}, "policy")
        if summarizer is None:
            return json.loads(self._out(_capi.ctxdb_compact, sid, len(sid), data, len(data),
                                        None, None))
        if not callable(summarizer):
            raise TypeError(f"compact(): summarizer must be callable, "
                            f"not {type(summarizer).__name__}")
        raised: List[BaseException] = []

        def trampoline(_user: Any, plan: int, plan_len: int, ctx: int) -> int:
            # No exception may cross into C: it is reported through ctx.
            try:
                answer = summarizer(json.loads(string_at(plan, plan_len)))
                text = answer if isinstance(answer, (str, bytes)) else _encode_json(answer)
                out = _text(text, "summary")
                return _capi.ctxdb_summary_set(ctx, out, len(out))
            except BaseException as e:  # noqa: BLE001 -- recorded, then re-raised below
                raised.append(e)
                msg = _encode(f"{type(e).__name__}: {e}", "message")
                _capi.ctxdb_summary_error(ctx, msg, len(msg))
                return _capi.INTERNAL

        fn = _capi.ctxdb_summarize_fn(trampoline)
        try:
            return json.loads(self._out(_capi.ctxdb_compact, sid, len(sid), data, len(data),
                                        cast(fn, c_void_p), None))
        except CheckFailed as e:
            if raised and not isinstance(raised[0], Exception):
                raise raised[0]  # KeyboardInterrupt, SystemExit: not the summary's fault
            if raised:
                raise e from raised[0]
            raise

    def summarize_branch(self, session_id: Union[str, bytes], from_leaf: str,
                         to_event: str) -> Any:
        """Summarizes the path abandoned at from_leaf since its common
        ancestor with to_event, and appends the summary at to_event (a new
        fork when to_event is not a leaf) as a BranchSummarized event:
        {"event_id", "branch_id", "common_ancestor_event_id", "range",
        "summary", "text"}."""
        sid = _text(session_id, "session_id")
        a = _text(from_leaf, "from_leaf")
        b = _text(to_event, "to_event")
        return json.loads(self._out(_capi.ctxdb_branch_summarize, sid, len(sid), a, len(a),
                                    b, len(b)))

    def compactions(self, session_id: Union[str, bytes],
                    branch: Union[None, str, bytes] = None) -> List[Any]:
        """The compactions on a branch's path, oldest first: range,
        tokens_before, tokens_after, ratio, checks, summarizer."""
        return self._view(_capi.ctxdb_compactions_list, session_id, branch)

    # ---- artifacts ----

    def put_artifact(self, data: Any, kind: Optional[str] = None,
                     mime: Optional[str] = None, name: Optional[str] = None,
                     event_id: Optional[str] = None,
                     role: Optional[str] = None) -> Artifact:
        """Stores bytes (a str is stored as UTF-8) as an artifact; returns
        it ({"id": "art_<sha256>", "raw_size", "kind", ...}). The same bytes
        are stored once; event_id (with role, default "output") adds a
        reference from that event."""
        content = _text(data, "put_artifact(): data")
        m = _artifact_meta("put_artifact()", kind=kind, mime=mime, name=name,
                           event_id=event_id, role=role)
        return json.loads(self._out(_capi.ctxdb_artifact_put, content, len(content), m, len(m)))

    # ---- the streaming put (ctxdb_artifact_writer_*) ----

    def artifact_writer(self, kind: Optional[str] = None, mime: Optional[str] = None,
                        name: Optional[str] = None, event_id: Optional[str] = None,
                        role: Optional[str] = None) -> "ArtifactWriter":
        """A streaming put, for content too large to hold in memory: write()
        pieces, then commit() (or leave a ``with`` block) for the artifact;
        abort() or an exception stores nothing. Meta as put_artifact().
        While the writer is open, other calls on this Database raise Misuse."""
        from ._artifact_writer import ArtifactWriter
        m = _artifact_meta("artifact_writer()", kind=kind, mime=mime, name=name,
                           event_id=event_id, role=role)
        conn = self._require_conn()
        w = c_void_p()
        with conn.lock:
            ptr = conn.ptr
            if ptr is None:
                raise _closed()
            rc = _capi.ctxdb_artifact_writer_open(ptr, m, len(m), byref(w))
            if rc != _capi.OK:
                raise last_error(rc, ptr)
            return ArtifactWriter(conn, w.value)

    def put_artifact_file(self, source: Any, kind: Optional[str] = None,
                          mime: Optional[str] = None, name: Optional[str] = None,
                          event_id: Optional[str] = None,
                          role: Optional[str] = None) -> Artifact:
        """Streams a file (a path, or a binary file object) into an artifact
        a MiB at a time; name defaults to the path."""
        if isinstance(source, (str, os.PathLike)):
            with builtins.open(source, "rb") as f:
                return self.put_artifact_file(f, kind, mime,
                                              name if name is not None else os.fspath(source),
                                              event_id, role)
        with self.artifact_writer(kind, mime, name, event_id, role) as w:
            for block in iter(lambda: source.read(1 << 20), b""):
                w.write(block)
        return w.artifact  # type: ignore[return-value]

    # ---- (end of the streaming put) ----

    def read_artifact(self, id: Union[str, bytes], offset: int = 0,
                      length: int = -1) -> bytes:
        """The bytes [offset, offset+length) of an artifact (-1: to the end)."""
        aid = _text(id, "id")
        return self._out(_capi.ctxdb_artifact_read, aid, len(aid),
                         _int64(offset, "offset"), _int64(length, "length"))

    def artifact(self, id: Union[str, bytes]) -> Artifact:
        """One artifact's sizes, kind, mime, name and references."""
        aid = _text(id, "id")
        return json.loads(self._out(_capi.ctxdb_artifact_info, aid, len(aid)))

    def artifacts(self, session_id: Union[None, str, bytes] = None) -> List[Artifact]:
        """Every artifact, or (session_id) those the session's events refer
        to, oldest first."""
        return json.loads(self._out(_capi.ctxdb_artifact_list,
                                    *_opt_text(session_id, "session_id")))

    def artifact_lines(self, id: Union[str, bytes], first: int = 1,
                       count: int = -1) -> str:
        """Lines first .. first+count-1 (1-based, each with its newline;
        count -1: to the end), decoded as UTF-8 (invalid bytes replaced)."""
        aid = _text(id, "id")
        out = self._out(_capi.ctxdb_artifact_lines, aid, len(aid),
                        _int64(first, "first"), _int64(count, "count"))
        return out.decode("utf-8", "replace")

    def artifact_preview(self, id: Union[str, bytes], mode: str = "head_tail",
                         lines: Optional[int] = None,
                         bytes: Optional[int] = None) -> ArtifactPreview:
        """The head, the tail, or both (mode "head_tail", around a marker
        naming what was left out), within at most `lines` lines and `bytes`
        bytes (None: no limit)."""
        aid = _text(id, "id")
        spec: dict = {"mode": mode}
        if lines is not None:
            spec["lines"] = _int64(lines, "lines")
        if bytes is not None:
            spec["bytes"] = _int64(bytes, "bytes")
        data = _json(spec, "artifact_preview() spec")
        return json.loads(self._out(_capi.ctxdb_artifact_preview, aid, len(aid), data, len(data)))

    def artifact_search(self, id: Union[str, bytes], pattern: Union[str, bytes],
                        before: int = 0, after: int = 0, max_matches: int = 100,
                        ignore_case: bool = False) -> ArtifactSearch:
        """grep in an artifact: the lines matching the PCRE2 pattern, with
        before/after context lines, at most max_matches of them."""
        aid = _text(id, "id")
        pat = _text(pattern, "pattern")
        if not isinstance(ignore_case, bool):
            raise TypeError("artifact_search(): ignore_case must be a bool")
        options = _json({"before": _int64(before, "before"), "after": _int64(after, "after"),
                         "max_matches": _int64(max_matches, "max_matches"),
                         "ignore_case": ignore_case}, "artifact_search() options")
        return json.loads(self._out(_capi.ctxdb_artifact_search, aid, len(aid), pat, len(pat),
                                    options, len(options)))


    # ---- the context compiler ----

    def compile(self, request: Union[None, CompileRequest, Mapping, str, bytes] = None, *,
                raw: bool = False, **fields: Any) -> Any:
        """Compiles the context for a model's next call (ctxdb_compile).

        ``request`` is a dict (compile_request.schema.json: session_id,
        max_tokens, reserved_output_tokens, branch_id or leaf_event_id,
        request, tool_results, continuation, instructions, tools, policy,
        format, record) or its JSON text; keyword fields build or extend the
        dict, e.g.
        ``db.compile(session_id=s, max_tokens=8000, format="openai.chat")``.
        Returns the bundle (a Bundle dict for format "canonical", else the
        provider's request JSON) parsed, or its JSON text with raw=True.
        BudgetExceeded when what is never dropped exceeds the budget;
        NotFound for an unknown session, branch or leaf event; Conflict when
        a call of the last turn has no result (give it in ``tool_results``)
        or the branch ends on the assistant's finished answer with no new
        request (give ``request``, or ``continuation=True``).
        """
        data = _json_input(request, fields, "compile() request")
        out = self._out(_capi.ctxdb_compile, data, len(data))
        return out.decode("utf-8") if raw else json.loads(out)

    def bundle_convert(self, bundle: Union[Bundle, Mapping, str, bytes], format: str, *,
                       raw: bool = False) -> Any:
        """A canonical bundle (a dict, or its JSON text) in a provider's
        format: "openai.chat", "openai.responses", "anthropic.messages",
        "gemini.generate_content", "ai.sdk" (or "canonical"). Images are
        read from their artifacts; thinking goes back only to the provider
        that produced it. Returns the parsed JSON, or its text with
        raw=True."""
        data = _json_input(bundle, {}, "bundle_convert() bundle")
        fmt = _text(format, "format")
        out = self._out(_capi.ctxdb_bundle_convert, data, len(data), fmt, len(fmt))
        return out.decode("utf-8") if raw else json.loads(out)

    def set_token_counter(self, name: Optional[str],
                          fn: Optional[Callable[[str], int]]) -> None:
        """Makes ``fn(text) -> int`` this handle's token counter, in place of
        the built-in estimator: for the counts cached at append (messages
        record ``name`` as their token_counter), compiles, memory retrieval
        and compaction. None
        restores the config's token_counter (default: the built-in
        estimator). fn runs on the calling thread, inside the ctxdb call
        that needs the count, and must not use this
        Database; an exception in it (or a result that is not a
        non-negative int) fails that call with InternalError, nothing
        written, the exception chained as __cause__."""
        conn = self._require_conn()
        if fn is None:
            counter, bname = None, None
        else:
            if not callable(fn):
                raise TypeError(f"set_token_counter(): fn must be callable or None, "
                                f"not {type(fn).__name__}")
            if not isinstance(name, str):
                raise TypeError(f"set_token_counter(): name must be a str, "
                                f"not {type(name).__name__}")
            counter, bname = _TokenCounter(name, fn), _encode(name, "name")
        with conn.lock:
            ptr = conn.ptr
            if ptr is None:
                raise _closed()
            rc = _capi.ctxdb_token_counter_set(
                ptr, bname, len(bname) if bname else 0,
                counter.c_fn if counter else _capi.ctxdb_token_count_fn(), None)  # NULL fn
            if rc != _capi.OK:
                raise last_error(rc, ptr)
            conn.counter = counter  # the previous callback is no longer used
    # ---- search ----

    def search(self, query: Union[str, bytes], *,
               session_id: Union[None, str, bytes] = None,
               branch_id: Union[None, str, bytes] = None,
               role: Optional[str] = None, type: Optional[str] = None,
               since: Optional[int] = None, until: Optional[int] = None,
               limit: Optional[int] = None,
               allow_sensitive: bool = False) -> "SearchResult":
        """Searches every session's messages (prompts, assistant text and
        tool calls, tool outputs, summaries) for the words of ``query``,
        whole words first, then substrings (pieces of paths, Chinese and
        Japanese). FTS5 syntax is used when the query has some and it
        parses; anything else is plain words. Filters: session_id,
        branch_id (that branch's path), role, type, since/until (ts, ms),
        limit (default 20). An event whose visibility is sensitive,
        private or secret is a hit only with allow_sensitive=True."""
        q = _text(query, "query")
        if not isinstance(allow_sensitive, bool):
            raise TypeError("search(): allow_sensitive must be a bool, not "
                            f"{allow_sensitive.__class__.__name__}")
        options: dict = {"allow_sensitive": True} if allow_sensitive else {}
        for key, value in (("session_id", session_id), ("branch_id", branch_id)):
            if value is not None:
                options[key] = _text(value, key).decode("utf-8")
        for key, value in (("role", role), ("type", type)):
            if value is not None:
                if not isinstance(value, str):
                    raise TypeError(f"search(): {key} must be a str, not "
                                    f"{value.__class__.__name__}")
                options[key] = value
        for key, value in (("since", since), ("until", until), ("limit", limit)):
            if value is not None:
                options[key] = _int64(value, key)
        data = _json(options, "search() options")
        return json.loads(self._out(_capi.ctxdb_search, q, len(q), data, len(data)))

    # ---- checks and replays ----

    def verify(self, session_id: Union[None, str, bytes] = None, *,
               artifacts: Optional[str] = None,
               anchor: Optional[Mapping] = None) -> VerifyReport:
        """Checks the hash chain of one session, or of all (None). artifacts:
        "quick" (the default for all: every stored chunk re-hashed, every
        artifact's chunk list checked), "full" (also every artifact's whole
        content decompressed and re-hashed against its id) or "none" (the
        default with a session). anchor: what anchor() returned earlier;
        the report's ``anchor`` says whether the file still extends it.
        ``ok`` is false when any check failed."""
        if artifacts is None and anchor is None:
            return json.loads(self._out(_capi.ctxdb_verify,
                                        *_opt_text(session_id, "session_id")))
        options: dict = {}
        if session_id is not None:
            options["session_id"] = _text(session_id, "session_id").decode("utf-8")
        if artifacts is not None:
            options["artifacts"] = artifacts
        if anchor is not None:
            options["anchor"] = anchor
        doc = _json(options, "verify() options")
        return json.loads(self._out(_capi.ctxdb_verify_with, doc, len(doc)))

    def anchor(self) -> Anchor:
        """A small digest of the file's whole history: the number of events,
        a Merkle root over their hashes in append order, and each session's
        last event, in the manner of a transparency log's signed tree head.
        Keep it outside the file; verify(anchor=...) later proves that the
        file still extends it (no event deleted, changed or reordered, no
        session gone, no commit lost)."""
        return json.loads(self._out(_capi.ctxdb_anchor, None, 0))

    def rebuild(self, check: bool = False, search: bool = False) -> RebuildReport:
        """Replays every event into the derived tables (sessions, ...) in
        one transaction; the log itself is not touched. check=True changes
        nothing and raises CheckFailed when a replayed table differs from
        the stored one. The session-search index (an index of the stored
        events) is brought up to date and kept, and listed in ``kept``;
        search=True re-derives it too. The report has a SHA-256 of each
        table before and after, and ``identical``."""
        for name, value in (("check", check), ("search", search)):
            if not isinstance(value, bool):
                raise TypeError(f"rebuild(): {name} must be a bool, "
                                f"not {type(value).__name__}")
        asked = {k: True for k, v in (("check", check), ("search", search)) if v}
        if not asked:
            return json.loads(self._out(_capi.ctxdb_rebuild, None, 0))
        options = _json(asked, "rebuild() options")
        return json.loads(self._out(_capi.ctxdb_rebuild, options, len(options)))

    def optimize(self) -> OptimizeReport:
        """Merges each full-text index (memories, session search) into one
        segment, in one transaction. Queries read every segment of an
        index, so after a bulk load of memories retrieval is faster merged;
        it rewrites every page of the indexes, so run it after bulk loads
        or as periodic maintenance. What the indexes hold does not change.
        A read-only handle raises ReadOnly."""
        return json.loads(self._out(_capi.ctxdb_optimize, None, 0))

    def import_ndjson(self, data: Any) -> ImportResult:
        """Imports stored events (the export stream) in one transaction.
        ``data`` is NDJSON text (str/bytes) or an iterable of events (dicts
        from export(), or JSON lines)."""
        text = _ndjson(data, "import_ndjson()")
        return json.loads(self._out(_capi.ctxdb_import, text, len(text)))

    def import_transcript(self, format: str, path: PathLike, *,
                          final: bool = True) -> TranscriptImportResult:
        """Imports another agent's session files: ``format`` is
        "claude-code", "codex" or "pi", ``path`` a session file or the
        agent's folder (~/.claude, ~/.codex, ~/.pi/agent, or one below).
        Each file is imported in one transaction and incrementally: a second
        call changes nothing, a file that grew adds its new records. A file
        changed in its middle is reported "changed" and not merged; a
        malformed line fails its file (rolled back, the error naming file
        and line) while the others go on: the report lists each file.
        ``final=False`` while an agent may still be writing (a message whose
        next part is not written yet waits). An unknown format raises
        InvalidInput, a missing path NotFound, a read-only handle ReadOnly."""
        if not isinstance(format, str):
            raise TypeError(f"import_transcript(): format must be a str, "
                            f"not {type(format).__name__}")
        if not isinstance(final, bool):
            raise TypeError(f"import_transcript(): final must be a bool, "
                            f"not {type(final).__name__}")
        options = _json({"format": format, "path": os.fsdecode(_path(path)), "final": final},
                        "import_transcript() options")
        return json.loads(self._out(_capi.ctxdb_transcript_import, options, len(options)))

    # ---- Memory (DESIGN §7) ----------------------------------------------------

    def write_memory(self, session_id: Union[str, bytes], memory: Optional[dict] = None,
                     **fields: Any) -> Memory:
        """Writes a memory (memory_write.schema.json) as a MemoryWritten event
        in the session: scope, content and source_refs are required, and
        every scope but "session" needs expires_at, ttl_ms or update_policy.
        Fields come as a dict or as keywords. Returns the memory."""
        sid = _text(session_id, "session_id")
        data = _json({**(memory or {}), **fields}, "write_memory() memory")
        return json.loads(self._out(_capi.ctxdb_memory_write, sid, len(sid), data, len(data)))

    def update_memory(self, memory_id: Union[str, bytes], update: Optional[dict] = None,
                      **fields: Any) -> Memory:
        """Supersedes a memory with a new version: the fields that change,
        with its source_refs. The old version stays, no longer valid."""
        mid = _text(memory_id, "memory_id")
        data = _json({**(update or {}), **fields}, "update_memory() update")
        return json.loads(self._out(_capi.ctxdb_memory_update, mid, len(mid), data, len(data)))

    def forget_memory(self, memory_id: Union[str, bytes], purge: bool = False,
                      reason: Optional[str] = None, **options: Any) -> MemoryForgetResult:
        """Forgets a memory: a tombstone (content gone from the projection
        and the index, the events stay), or with purge=True, its content
        removed from the log as well (verify stays green)."""
        if not isinstance(purge, bool):
            raise TypeError(f"purge must be a bool, not {type(purge).__name__}")
        if "mode" in options:  # it would override purge=, silently
            raise TypeError("forget_memory(): say purge=True or purge=False, not mode=")
        mid = _text(memory_id, "memory_id")
        opts = {"mode": "purge" if purge else "tombstone", **options}
        if reason is not None:
            opts["reason"] = reason
        data = _json(opts, "forget_memory() options")
        return json.loads(self._out(_capi.ctxdb_memory_forget, mid, len(mid), data, len(data)))

    def memory(self, memory_id: Union[str, bytes]) -> Memory:
        """A memory's current version (its last one once forgotten)."""
        mid = _text(memory_id, "memory_id")
        return json.loads(self._out(_capi.ctxdb_memory_get, mid, len(mid)))

    def memories(self, scope: Optional[str] = None, scope_id: Optional[str] = None,
                 kind: Optional[str] = None, all_versions: bool = False,
                 as_of: Optional[int] = None, limit: Optional[int] = None) -> List[Memory]:
        """The current memories, or every version (all_versions), or the
        versions valid at as_of (ms): what was believed then."""
        if not isinstance(all_versions, bool):
            raise TypeError("memories(): all_versions must be a bool, not "
                            f"{type(all_versions).__name__}")
        query = {k: v for k, v in (("scope", scope), ("scope_id", scope_id), ("kind", kind))
                 if v is not None}
        for key, value in (("as_of", as_of), ("limit", limit)):
            if value is not None:
                query[key] = _int64(value, key)
        if all_versions:
            query["all_versions"] = True
        data = _json(query, "memories() query")
        return json.loads(self._out(_capi.ctxdb_memory_list, data, len(data)))

    def retrieve_memories(self, query: Union[str, dict], scopes: Any = None,
                          **options: Any) -> MemoryRetrieval:
        """Retrieval (memory_query.schema.json): query text, the scopes to
        read as [{"scope", "id"}] or [("project", "p1"), ("global", None)],
        and options agent, now, budget, limit, allow_sensitive, match,
        record_usage. A query dict is passed as it is."""
        if isinstance(query, dict):
            doc = dict(query)
        else:
            doc = {"query": query, "scopes": [_scope_ref(s) for s in _scope_list(scopes)]}
        doc.update(options)
        data = _json(doc, "retrieve_memories() query")
        return json.loads(self._out(_capi.ctxdb_memory_retrieve, data, len(data)))

    def promote_memories(self, session_id: Union[str, bytes],
                         candidates: List[dict]) -> List[Memory]:
        """Writes memory candidates (e.g. a compaction plan's) in one
        transaction: all of them, or none."""
        sid = _text(session_id, "session_id")
        data = _json(candidates, "promote_memories() candidates")
        return json.loads(self._out(_capi.ctxdb_memory_promote, sid, len(sid), data, len(data)))
    # ---- Tokenizer ----

    def count_tokens(self, text: Union[str, bytes], encoding: str = "o200k_base",
                     specials: str = "disallow") -> int:
        """The exact number of tokens of text (tiktoken's count), with the
        rank files of this database's tokenizer_data_dir (else
        $CTXDB_TOKENIZER_DATA). specials: "disallow" (InvalidInput naming
        them), "allow" or "text". See ctxdb.count_tokens()."""
        conn = self._require_conn()
        with conn.lock:
            if conn.ptr is None:
                raise _closed()
            return _count_tokens(conn.ptr, text, encoding, specials)

    def encode_tokens(self, text: Union[str, bytes], encoding: str = "o200k_base",
                      specials: str = "disallow") -> List[int]:
        """The token ids of text, as tiktoken's encode gives them."""
        conn = self._require_conn()
        with conn.lock:
            if conn.ptr is None:
                raise _closed()
            return _encode_tokens(conn.ptr, text, encoding, specials)

    def version(self) -> str:
        """The library's version string, e.g. "0.1.0"."""
        return version()


def open(path: PathLike, **config: Any) -> Database:
    """Opens (creating if needed) a ctxdb file.

    config: durability="normal"|"full", busy_timeout_ms=int,
    read_only=bool, mmap=bool, checkpoint="background"|"inline",
    vfs="<a registered SQLite VFS>", and the other keys of schema/json/config.schema.json (None values are left out).
    """
    return Database(path, **config)


# ---- Tokenizer ----------------------------------------------------------------

_SPECIALS = {"disallow": _capi.SPECIALS_DISALLOW, "allow": _capi.SPECIALS_ALLOW,
             "text": _capi.SPECIALS_TEXT}


def _token_args(text: Any, encoding: Any, specials: Any) -> Tuple[bytes, bytes, int]:
    if specials not in _SPECIALS:
        raise ValueError(f"specials must be 'disallow', 'allow' or 'text', not {specials!r}")
    return _text(text, "text"), _text(encoding, "encoding"), _SPECIALS[specials]


def _count_tokens(ptr: Optional[int], text: Any, encoding: Any, specials: Any) -> int:
    t, enc, mode = _token_args(text, encoding, specials)
    n = c_int64(0)
    rc = _capi.ctxdb_tokens_count(ptr, enc, len(enc), t, len(t), mode, byref(n))
    if rc != _capi.OK:
        raise last_error(rc, ptr)
    return n.value


def _encode_tokens(ptr: Optional[int], text: Any, encoding: Any, specials: Any) -> List[int]:
    t, enc, mode = _token_args(text, encoding, specials)
    ids = POINTER(c_uint32)()
    n = c_size_t(0)
    rc = _capi.ctxdb_tokens_encode(ptr, enc, len(enc), t, len(t), mode, byref(ids), byref(n))
    if rc != _capi.OK:
        raise last_error(rc, ptr)
    try:
        return ids[:n.value]
    finally:
        _capi.ctxdb_free(ids)


def count_tokens(text: Union[str, bytes], encoding: str = "o200k_base",
                 specials: str = "disallow") -> int:
    """The exact number of tokens of text in an encoding ("o200k_base" or
    "cl100k_base"), identical to tiktoken's, without a database: the rank
    files are read from $CTXDB_TOKENIZER_DATA. specials: what the text of a
    special token is -- "disallow" (InvalidInput naming them; tiktoken's
    default), "allow" (its special id) or "text". bytes must be UTF-8
    (InvalidInput otherwise); a missing rank file is NotFound, a different
    one Corrupt."""
    return _count_tokens(None, text, encoding, specials)


def encode_tokens(text: Union[str, bytes], encoding: str = "o200k_base",
                  specials: str = "disallow") -> List[int]:
    """The token ids of text, identical to tiktoken's; see count_tokens()."""
    return _encode_tokens(None, text, encoding, specials)


def version() -> str:
    """The library's version string (ctxdb_version())."""
    return _capi.ctxdb_version().decode("ascii")


def version_number() -> int:
    """The library's CTXDB_VERSION_NUMBER."""
    return int(_capi.ctxdb_version_number())


def abi_version() -> int:
    """The library's CTXDB_ABI_VERSION."""
    return int(_capi.ctxdb_abi_version())


for _call in ("compile", "compact", "import_ndjson", "import_transcript", "verify", "rebuild",
              "optimize", "search", "retrieve_memories", "record_response"):
    setattr(Database, f"{_call}_async", _awaitable(_call))
del _call
