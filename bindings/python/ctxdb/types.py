"""The main JSON shapes returned by ctxdb, as TypedDicts (plain dicts at run
time). The JSON Schemas in schema/json/ are the reference; the engine may
add fields, which then simply appear in the dicts."""
from __future__ import annotations

from typing import Any, Dict, List, TypedDict, Union

JSONValue = Any
JSONObject = Dict[str, Any]


class _EventOptional(TypedDict, total=False):
    parent_id: str
    run_id: str
    causality: Union[JSONObject, List[Any]]
    visibility: Union[str, JSONObject]


class Event(_EventOptional):
    """A stored event (ctxdb_event_get)."""
    id: str
    session_id: str
    seq: int
    ts: int  # ms since the Unix epoch
    type: str
    actor: str
    payload: JSONObject
    payload_hash: str  # 64 lowercase hex digits
    prev_hash: str
    hash: str


class EventInput(TypedDict, total=False):
    """An event as a host appends it; type, actor and payload are required."""
    type: str
    actor: str
    payload: JSONObject
    id: str
    session_id: str
    parent_id: str
    run_id: str
    ts: int
    causality: Union[JSONObject, List[Any]]
    visibility: Union[str, JSONObject]


class SessionInput(TypedDict, total=False):
    """The dict form of create_session; payload (with agent_id) is required."""
    id: str
    actor: str
    ts: int
    payload: JSONObject


class Session(TypedDict):
    """A session (ctxdb_session_get)."""
    id: str
    agent_id: str
    started_event_id: str
    created_ts: int
    last_ts: int
    event_count: int
    last_seq: int
    meta: JSONObject  # the SessionStarted payload


class BatchResult(TypedDict):
    """What append_many did (ctxdb_append_batch)."""
    count: int
    first_seq: int
    last_seq: int
    last_id: str


class BrokenLink(TypedDict):
    """The first broken event a verify found."""
    session_id: str
    seq: int
    event_id: str  # "" when the problem is a missing tail
    problem: str


class _VerifyOptional(TypedDict, total=False):
    first_broken: BrokenLink


class VerifyReport(_VerifyOptional):
    """What verify found (ctxdb_verify)."""
    ok: bool
    sessions: int
    events: int


class TableChecksum(TypedDict):
    """One derived table in a rebuild report."""
    table: str
    rows: int  # rows after the rebuild
    before: str  # SHA-256 of the table's rows before (64 lowercase hex digits)
    after: str  # ... and after the rebuild


class RebuildReport(TypedDict):
    """What rebuild did (ctxdb_rebuild)."""
    events: int  # events replayed
    identical: bool  # every derived table came out as it was
    tables: List[TableChecksum]


class ImportResult(TypedDict):
    """What import_ndjson did (ctxdb_import)."""
    imported: int
    skipped: int
