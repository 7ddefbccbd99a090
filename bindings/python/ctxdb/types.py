"""The main JSON shapes returned by ctxdb, as TypedDicts (plain dicts at run
time). The JSON Schemas in schema/json/ are the reference; the engine may
add fields, which then simply appear in the dicts."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict, Union

JSONValue = Any
JSONObject = Dict[str, Any]


class _EventOptional(TypedDict, total=False):
    parent_id: str
    branch_id: str  # the branch it lies on (see Branch)
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
    branch_id: str  # continue this branch (its id or unique name)
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


class _SessionOptional(TypedDict, total=False):
    parent_session_id: str  # a child session's parent
    spawned_by_event_id: str  # the parent's event that spawned it


class Session(_SessionOptional):
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


class PurgedPayload(TypedDict):
    """A payload a privacy purge removed, still chained by its hash."""
    session_id: str
    seq: int
    event_id: str
    purged_by: str  # the MemoryDeleted event that removed it


class _BrokenArtifactOptional(TypedDict, total=False):
    chunk: int  # absent for a whole-artifact problem


class BrokenArtifact(_BrokenArtifactOptional):
    """The first broken artifact an artifact check found."""
    artifact_id: str  # "<artifact no N>" for chunks no artifact owns
    problem: str


class _ArtifactCheckOptional(TypedDict, total=False):
    first_broken: BrokenArtifact


class ArtifactCheck(_ArtifactCheckOptional):
    """What the artifact check of verify (or rebuild's check) found."""
    ok: bool
    mode: str  # "quick" or "full"
    artifacts: int
    chunks: int
    bytes: int  # stored bytes re-hashed


class _AnchorCheckOptional(TypedDict, total=False):
    problem: str


class AnchorCheck(_AnchorCheckOptional):
    """Whether the file still extends an anchor."""
    ok: bool
    events: int  # the events the anchor covers


class _VerifyOptional(TypedDict, total=False):
    first_broken: BrokenLink
    purged: List[PurgedPayload]
    artifacts: ArtifactCheck
    anchor: AnchorCheck


class VerifyReport(_VerifyOptional):
    """What verify found (ctxdb_verify_with): ok is false when the chain,
    the artifacts or the anchor check failed."""
    ok: bool
    sessions: int
    events: int


class AnchorHead(TypedDict):
    """A chain's last event, as an anchor records it."""
    session_id: str
    seq: int
    hash: str  # 64 lowercase hex digits


class Anchor(TypedDict):
    """A digest of the file's whole history (ctxdb_anchor): keep it outside
    the file, and pass it to verify(anchor=...) later."""
    format: str  # "ctxdb.anchor.v1"
    events: int
    root: str  # RFC 6962 Merkle root over the events' hashes in append order
    sessions: int
    heads: List[AnchorHead]


class TableChecksum(TypedDict):
    """One derived table in a rebuild report."""
    table: str
    rows: int  # rows after the rebuild
    before: str  # SHA-256 of the table's rows before (64 lowercase hex digits)
    after: str  # ... and after the rebuild


class _RebuildOptional(TypedDict, total=False):
    artifacts: ArtifactCheck  # with check: the artifacts' quick check


class RebuildReport(_RebuildOptional):
    """What rebuild did (ctxdb_rebuild)."""
    events: int  # events replayed
    identical: bool  # every derived table came out as it was
    tables: List[TableChecksum]
    kept: List[str]  # the log's own indexes (session search), caught up and kept


class IndexMerge(TypedDict):
    """One full-text index in an optimize report."""
    index: str  # memory_fts, search_words or search_grams
    segments_before: int
    segments_after: int  # 1, or 0 for an empty index
    pages: int  # leaf pages of the merged index


class OptimizeReport(TypedDict):
    """What optimize did (ctxdb_optimize)."""
    indexes: List[IndexMerge]


class ImportResult(TypedDict):
    """What import_ndjson did (ctxdb_import)."""
    imported: int
    skipped: int


class _TranscriptFileOptional(TypedDict, total=False):
    error: str  # failed, changed: why, naming the file and the line
    active_branch_id: str  # the source's active leaf's branch, when it is not main


class TranscriptFile(_TranscriptFileOptional):
    """One session file in a transcript import report."""
    file: str  # its absolute path, as its events' provenance records it
    session_id: str  # the file's own session ("" when it failed before it was known)
    status: str  # "imported" | "unchanged" | "failed" | "changed"
    events: int  # events appended by this pass
    lines: int  # lines read past those imported before
    unknown: Dict[str, int]  # record types the reader does not know, kept as custom events


class TranscriptImportResult(TypedDict):
    """What import_transcript did (ctxdb_transcript_import)."""
    format: str  # "claude-code" | "codex" | "pi"
    sessions: List[TranscriptFile]  # one per session file, in path order
    imported: int
    unchanged: int
    changed: int
    failed: int


class _BranchOptional(TypedDict, total=False):
    name: str  # "main" for main; a fork's name when it was given one
    parent_branch_id: str  # absent for main
    fork_event_id: str  # the event it forked from
    fork_seq: int


class Branch(_BranchOptional):
    """A branch of a session's tree (fork(), branches())."""
    id: str  # the id of the event that opened it (SessionStarted for main)
    session_id: str
    kind: str  # "main", "fork", "subagent" or "what_if"
    first_seq: int
    leaf_event_id: str  # its last event
    leaf_seq: int
    event_count: int  # events on the branch itself, not its ancestors'


class Children(TypedDict):
    """What follows an event (children())."""
    event_id: str
    events: List[Event]  # the next on its branch, then each fork's first
    sessions: List[Session]  # the child sessions it spawned


# ---- views of a branch -------------------------------------------------------

class MessageBlock(TypedDict, total=False):
    """One typed block of a message; which fields it has depends on type."""
    type: str  # "text", "tool_call", "tool_result", "thinking", "summary", ...
    text: str
    id: str  # tool_call: the call id
    name: str
    args: Union[JSONObject, str]
    tool_call_id: str  # tool_result: the call it answers
    status: str  # tool_result: "success", "error" or "cancelled"
    error: str
    artifact_id: str
    summary: JSONObject  # summary: a structured summary
    first_kept_event_id: str
    kind: str  # context: "instructions" or "context"
    source: str  # context: what it was (agents_md, environment_context, ...)


class Message(TypedDict):
    """A message on a branch's path (messages())."""
    event_id: str  # the message-bearing event
    seq: int
    ts: int
    branch_id: str  # the branch its event is on
    role: str  # "user", "assistant", "tool", "summary" or "context"
    tokens: int  # counted once, at append
    token_counter: str  # e.g. "approx-v2"
    blocks: List[MessageBlock]


class ToolCallResult(TypedDict):
    """The result of a tool call on the branch read."""
    event_id: str  # the ToolCallFinished, ToolCallFailed or ToolCallCancelled
    seq: int
    branch_id: str
    artifact_id: Optional[str]
    error: Optional[str]
    duration_ms: Optional[int]
    exit_code: Optional[int]


class ToolCall(TypedDict):
    """A tool call as seen from a branch (tool_calls())."""
    call_id: str
    name: Optional[str]
    args: Union[JSONObject, str, None]
    event_id: str  # the AssistantMessageCreated that made it
    seq: int
    branch_id: str
    status: str  # "pending", "success", "error" or "cancelled"
    result: Optional[ToolCallResult]  # None while pending


class FileReadRef(TypedDict):
    """The last FileRead of a file."""
    event_id: str
    seq: int
    branch_id: str


class FileWriteRef(TypedDict):
    """The last FileWritten or DiffApplied of a file."""
    event_id: str
    seq: int
    branch_id: str
    op: str  # "write" or "diff"


class FileChange(TypedDict):
    """One write or diff of a file."""
    event_id: str
    seq: int
    op: str  # "write" or "diff"
    change_summary: Optional[str]
    artifact_id: Optional[str]


class FileInfo(TypedDict):
    """A file touched on a branch's path (files())."""
    path: str
    last_read: Optional[FileReadRef]
    last_write: Optional[FileWriteRef]
    reads: int
    writes: int  # FileWritten and DiffApplied events
    changes: List[FileChange]


# ---- state and stats -----------------------------------------------------------

class Sourced(TypedDict):
    """A text and the event it came from."""
    text: str
    event_id: str


class Goal(TypedDict):
    user_goal: Optional[Sourced]  # the last set_goal, else the first prompt
    request: Optional[Sourced]  # the latest user prompt
    current_task: Optional[Sourced]  # the last set_task
    acceptance_criteria: List[Sourced]


class PlanStep(TypedDict):
    text: str
    status: str  # "pending", "in_progress", "done", "skipped" or "blocked"


class Plan(TypedDict):
    steps: List[PlanStep]
    current_step: Optional[int]
    status: str  # "none", "active", "blocked" or "done"
    event_id: Optional[str]


class Constraints(TypedDict):
    hard: List[Sourced]
    soft: List[Sourced]
    preferences: List[Sourced]


class Fact(TypedDict):
    content: str
    confidence: float  # 0..1
    source_refs: List[str]
    event_id: str  # the StateUpdated that added it


class Decision(TypedDict):
    decision: str
    rationale: Optional[str]
    alternatives: Optional[List[Any]]
    evidence_refs: List[str]
    event_id: str  # the DecisionRecorded


class Question(TypedDict):
    id: str
    text: str
    event_id: str  # the event that opened it


class ResolvedQuestion(Question):
    answer: Optional[str]
    resolved_event_id: str


class StateFile(TypedDict):
    path: str
    event_id: str  # the latest event about the file
    count: int
    change_summary: Optional[str]
    artifact_id: Optional[str]


class StateFiles(TypedDict):
    read: List[StateFile]
    modified: List[StateFile]


class PendingCall(TypedDict):
    id: str
    name: str
    event_id: str
    status: str  # "requested" or "running"
    approval: Optional[str]  # "requested", "granted", "denied" or None


class CallResult(TypedDict):
    id: str
    name: str
    event_id: str
    is_error: bool
    exit_code: Optional[int]
    artifact_id: Optional[str]
    error: Optional[str]
    retryable: bool


class ToolState(TypedDict):
    pending: List[PendingCall]
    last_results: List[CallResult]  # the latest 8, oldest first
    failed: List[CallResult]  # failed and not since finished


class AgentState(TypedDict):
    """The agent's working state on one branch (DESIGN §2)."""
    goal: Goal
    plan: Plan
    constraints: Constraints
    facts: List[Fact]
    decisions: List[Decision]
    open_questions: List[Question]
    resolved_questions: List[ResolvedQuestion]
    files: StateFiles
    tool_state: ToolState
    last_compaction_id: Optional[str]


class State(TypedDict):
    """The state right after event_id (seq) on branch_id (state())."""
    session_id: str
    branch_id: str
    seq: int
    event_id: str
    state: AgentState


class Stats(TypedDict):
    """One session's stats, or every session's totals (stats()); see
    schema/json/stats.schema.json for the nested objects."""
    session_id: Optional[str]  # None for the totals
    sessions: int
    events: int
    messages: Dict[str, int]  # user, assistant
    tokens: JSONObject  # counted {counter, user, assistant, tool, summary, context, total}, usage
    tools: JSONObject  # calls, results, errors, failures, cancelled, duration_ms
    latency_ms: JSONObject  # count, total, max, mean
    approvals: Dict[str, int]  # requested, granted, denied
    compactions: JSONObject  # completed, failed, tokens_before, tokens_after, ratio
    context: Dict[str, int]  # builds, used_tokens
    errors: int


class ArtifactRef(TypedDict):
    event_id: str
    role: str
    session_id: Optional[str]  # None while the event is not in the log


class Artifact(TypedDict):
    """A stored artifact (put_artifact(), artifact(), artifacts());
    schema/json/artifact.schema.json."""
    id: str  # "art_" + hex SHA-256 of the content
    raw_size: int
    stored_size: int
    chunk_size: int
    chunk_count: int
    line_count: int
    kind: str  # file, diff, tool_output, command_log, image, dataset, url_snapshot, other
    mime: Optional[str]
    name: Optional[str]
    created_ts: int
    refs: List[ArtifactRef]


class ArtifactPreview(TypedDict):
    """artifact_preview(): the text shown and what was left out."""
    id: str
    text: str
    omitted_lines: int
    omitted_bytes: int


class ArtifactLine(TypedDict):
    line: int
    text: str


class ArtifactMatch(TypedDict):
    line: int  # 1-based
    offset: int  # of the line's first byte
    column: int  # byte offset of the match in the line
    length: int
    text: str
    before: List[ArtifactLine]
    after: List[ArtifactLine]


class ArtifactSearch(TypedDict):
    """artifact_search(): matching lines with context; truncated when
    max_matches stopped the search."""
    id: str
    matches: List[ArtifactMatch]
    truncated: bool


# ---- the context compiler ------------------------------------------------------

class Instruction(TypedDict, total=False):
    kind: str  # "system" | "developer" | "project"; required
    text: str  # required
    id: str


class ToolSpec(TypedDict, total=False):
    name: str  # required
    description: str
    parameters: JSONObject  # a JSON Schema of the arguments


class CompileRequest(TypedDict, total=False):
    """A compile request (compile_request.schema.json); session_id and
    max_tokens are required."""
    session_id: str
    max_tokens: int
    reserved_output_tokens: int
    branch_id: str  # an id or a name unique in the session; not with leaf_event_id
    leaf_event_id: str
    request: Optional[str]
    # Results of last-turn calls the host has and has not appended:
    # [{"tool_call_id", "output"?, "is_error"?, "error"?, "name"?}]
    tool_results: List[JSONObject]
    continuation: bool  # the model continues its own finished answer
    # The model the bundle is for: its stats calibration, when providers
    # read more tokens than compiles counted, shrinks the budget.
    model: str
    instructions: List[Instruction]
    tools: List[ToolSpec]
    # redact, builtin_redaction, allow_sensitive, shares, prune,
    # interrupted_calls ("close" | "drop")
    policy: JSONObject
    # "canonical" | "openai.chat" | "openai.responses" | "anthropic.messages"
    # | "gemini.generate_content" | "ai.sdk"
    format: str
    record: bool


class BundleBudget(TypedDict):
    max_tokens: int
    reserved_output_tokens: int
    available: int
    used: int
    free: int


class BundleSource(TypedDict):
    type: str  # "event" | "artifact" | "compaction" | "request" | "state"
    id: str


class _BundleSegmentOptional(TypedDict, total=False):
    turn: int  # message segments: 0 is the newest turn


class BundleSegment(_BundleSegmentOptional):
    id: str
    kind: str
    priority: int  # 0..3 (DESIGN §5)
    role: str  # system | developer | user | assistant | tool | context
    content: List[JSONObject]
    tokens: int
    reason: str
    sources: List[BundleSource]
    hash: str


class _BundleExclusionOptional(TypedDict, total=False):
    tokens: int


class BundleExclusion(_BundleExclusionOptional):
    id: str
    kind: str
    priority: int
    reason: str
    sources: List[BundleSource]


class BundleRedaction(TypedDict):
    segment_id: str
    rule: str
    count: int


class Bundle(TypedDict):
    """compile() in format "canonical" (bundle.schema.json)."""
    format: str
    session_id: str
    branch_id: str
    leaf_event_id: Optional[str]
    token_counter: str
    budget: BundleBudget
    tokens_by_kind: Dict[str, int]
    stable_prefix_tokens: int
    segments: List[BundleSegment]
    excluded: List[BundleExclusion]
    redactions: List[BundleRedaction]
    hash: str
# ---- Search ----

class SearchHit(TypedDict):
    """One message found by search()."""
    session_id: str
    branch_id: str  # the branch the event is on
    event_id: str
    seq: int
    ts: int
    type: str
    role: str  # user | assistant | tool | summary | context
    match: str  # words | substring | scan
    rank: float  # bm25 of the index that matched: lower is better; 0 for a scan
    snippet: str  # the match between « and », … where cut


class SearchResult(TypedDict):
    """search(): whole-word hits first, then substring hits, then scanned."""
    query: str
    syntax: str  # "plain" (words, each required) or "fts" (FTS5 syntax)
    hits: List[SearchHit]
# ---- Memory (memory.schema.json, memory_retrieval.schema.json) ----------------

class Memory(TypedDict):
    memory_id: str
    version: int
    scope: str
    scope_id: str
    kind: str
    content: Optional[str]
    source_refs: List[str]
    keywords: List[str]
    readers: Optional[List[str]]
    confidence: float
    priority: int
    sensitive: bool
    expires_at: Optional[int]
    update_policy: Optional[str]
    valid_from: int
    valid_to: Optional[int]
    ended_by: Optional[str]
    event_id: str
    session_id: str
    status: str
    use_count: int
    last_used: Optional[int]


class RetrievedMemory(TypedDict):
    memory_id: str
    version: int
    scope: str
    scope_id: str
    kind: str
    content: str
    source_refs: List[str]
    event_id: str
    tokens: int
    score: float
    text: float
    priority: float
    confidence: float
    recency: float
    valid_from: int
    expires_at: Optional[int]
    sensitive: bool


class ExcludedMemory(TypedDict):
    memory_id: str
    tokens: int
    score: float
    reason: str


class MemoryRetrieval(TypedDict):
    now: int
    budget: Optional[int]
    used_tokens: int
    counter: str
    fts_query: str
    fell_back: bool
    memories: List[RetrievedMemory]
    excluded: List[ExcludedMemory]


class MemoryForgetResult(TypedDict):
    memory_id: str
    mode: str
    event_id: str
    purged_event_ids: List[str]
