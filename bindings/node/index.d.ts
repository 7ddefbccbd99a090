// Type declarations of the ctxdb Node binding (CommonJS: require('ctxdb')).

/** JSON values as the engine returns them (JSON.parse results). */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Event JSON text as bytes, passed to the engine unchanged. */
export type Bytes = Uint8Array; // Buffer too

/** The numbered status codes of the C ABI (ctxdb.h), as `err.errno` carries them. */
export declare const statuses: Readonly<{
  OK: 0;
  MISUSE: 1;
  INVALID_ARG: 2;
  INVALID_UTF8: 3;
  INVALID_JSON: 4;
  NOT_FOUND: 5;
  CONFLICT: 6;
  BUSY: 7;
  BUDGET: 8;
  CHECK_FAILED: 9;
  CORRUPT: 10;
  IO: 11;
  NOMEM: 12;
  SCHEMA: 13;
  READONLY: 14;
  INTERNAL: 15;
  NOTADB: 16;
}>;
export type Status = (typeof statuses)[keyof typeof statuses];

/** The statuses' names, as `err.code` carries them ("CTXDB_NOT_FOUND"). */
export declare const codes: Readonly<{
  OK: 'CTXDB_OK';
  MISUSE: 'CTXDB_MISUSE';
  INVALID_ARG: 'CTXDB_INVALID_ARG';
  INVALID_UTF8: 'CTXDB_INVALID_UTF8';
  INVALID_JSON: 'CTXDB_INVALID_JSON';
  NOT_FOUND: 'CTXDB_NOT_FOUND';
  CONFLICT: 'CTXDB_CONFLICT';
  BUSY: 'CTXDB_BUSY';
  BUDGET: 'CTXDB_BUDGET';
  CHECK_FAILED: 'CTXDB_CHECK_FAILED';
  CORRUPT: 'CTXDB_CORRUPT';
  IO: 'CTXDB_IO';
  NOMEM: 'CTXDB_NOMEM';
  SCHEMA: 'CTXDB_SCHEMA';
  READONLY: 'CTXDB_READONLY';
  INTERNAL: 'CTXDB_INTERNAL';
  NOTADB: 'CTXDB_NOTADB';
}>;
export type Code = (typeof codes)[keyof typeof codes];

/** The static name of a status number, e.g. "CTXDB_NOT_FOUND" (a name is given back). */
export declare function codeName(status: number | string): string;

/**
 * A failed ctxdb call. Test `code` (the status's name, compare with
 * `codes.*`) or `errno` (its number, `statuses.*`), never the message. Bad
 * arguments throw TypeError / RangeError instead; a string with a lone
 * UTF-16 surrogate is a CtxdbError CTXDB_INVALID_UTF8.
 */
export declare class CtxdbError extends Error {
  constructor(message: string, status: Status | Code, codeName?: string);
  readonly name: 'CtxdbError';
  /** The status's name, one of `codes`, e.g. "CTXDB_NOT_FOUND". */
  code: Code;
  /** The status's number in ctxdb.h, one of `statuses`. */
  errno: Status;
  /** The same as `code`. */
  codeName: Code;
}

export interface OpenConfig {
  /** "normal" (default) or "full" (an fsync per commit). */
  durability?: 'normal' | 'full';
  /** How long a write waits for the lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  busy_timeout_ms?: number;
  /** Open an existing file without writing. */
  readOnly?: boolean;
  read_only?: boolean;
  /** false: read with pread instead of a memory map (default true). */
  mmap?: boolean;
  /**
   * Where the WAL is checkpointed: "background" (a thread of the handle's
   * own; the default with durability "normal") or "inline" (inside the
   * commit; the default with "full").
   */
  checkpoint?: 'background' | 'inline';
  /**
   * A registered SQLite VFS every connection of the handle opens the file
   * through (encryption, custom storage); an unregistered name is
   * CTXDB_INVALID_ARG.
   */
  vfs?: string;
  /** Tokenizer: the directory of the rank files (else $CTXDB_TOKENIZER_DATA). */
  tokenizer_data_dir?: string;
}

// ---- Tokenizer

/** Options of countTokens / encodeTokens. */
export interface TokenOptions {
  /** "o200k_base" (default) or "cl100k_base". */
  encoding?: 'o200k_base' | 'cl100k_base';
  /**
   * What the text of a special token ("<|endoftext|>") is: "disallow"
   * (default, tiktoken's: a CtxdbError naming it), "allow" (its special id)
   * or "text" (ordinary text).
   */
  specials?: 'disallow' | 'allow' | 'text';
}

export interface CreateSessionOptions {
  /** The session id ("ses_..."); generated when absent. */
  id?: string;
  /** The agent that owns the session (agent_id works too). */
  agentId?: string;
  agent_id?: string;
  /** The actor of the SessionStarted event (default "host"). */
  actor?: string;
  /** More fields of the SessionStarted payload (returned as `meta`). */
  meta?: JsonObject;
}

export interface Session {
  id: string;
  agent_id: string;
  started_event_id: string;
  created_ts: number;
  last_ts: number;
  event_count: number;
  last_seq: number;
  /** A child session's parent session. */
  parent_session_id?: string;
  /** The parent's event that spawned this child session. */
  spawned_by_event_id?: string;
  meta: JsonObject;
  [key: string]: JsonValue | undefined;
}

/** An event to append. */
export interface EventInput {
  type: string;
  actor: string;
  payload: JsonObject;
  id?: string;
  parent_id?: string;
  /** Continue this branch (its id or a name unique in the session). */
  branch_id?: string;
  run_id?: string;
  /** Integer ms since the Unix epoch. */
  ts?: number;
  causality?: JsonValue;
  visibility?: JsonValue;
  [key: string]: JsonValue | undefined;
}

/** A stored event, as the engine returns it. */
/** Options of recordResponse (response_record_options.schema.json). */
export interface RecordResponseOptions {
  format: 'openai.chat' | 'openai.responses' | 'anthropic.messages' | 'gemini.generate_content';
  /** The response is the provider's stream events (chunks, for gemini). */
  stream?: boolean;
  branch_id?: string;
  parent_id?: string;
  /** Default "assistant". */
  actor?: string;
  run_id?: string;
  ts?: number;
  latency_ms?: number;
}

export interface StoredEvent {
  id: string;
  session_id: string;
  seq: number;
  ts: number;
  type: string;
  actor: string;
  parent_id?: string;
  /** The branch it lies on (see Branch). */
  branch_id?: string;
  run_id?: string;
  causality?: JsonValue;
  visibility?: JsonValue;
  payload: JsonObject;
  payload_hash: string;
  prev_hash: string;
  hash: string;
  [key: string]: JsonValue | undefined;
}

export interface BatchResult {
  count: number;
  first_seq: number;
  last_seq: number;
  last_id: string;
}

/** What the artifact check of verify (or rebuild's check) found. */
export type ArtifactCheck = {
  ok: boolean;
  mode: 'quick' | 'full';
  artifacts: number;
  chunks: number;
  /** Stored bytes re-hashed. */
  bytes: number;
  first_broken?: {
    /** "<artifact no N>" for chunks no artifact owns. */
    artifact_id: string;
    /** The broken chunk's index; absent for a whole-artifact problem. */
    chunk?: number;
    problem: string;
  };
};

/**
 * A digest of the file's whole history (anchor()): keep it outside the
 * file and pass it to verify(null, {anchor}) later.
 */
export type Anchor = {
  format: 'ctxdb.anchor.v1';
  /** The events it covers: the first N in append order. */
  events: number;
  /** RFC 6962 Merkle root (hex SHA-256) over those events' hashes. */
  root: string;
  sessions: number;
  /** Each chain's last event, in session id order. */
  heads: { session_id: string; seq: number; hash: string }[];
};

export interface VerifyOptions {
  /**
   * quick (the default for all sessions) re-hashes every stored chunk;
   * full also every artifact's whole content; none (the default for one
   * session) skips the artifacts.
   */
  artifacts?: 'none' | 'quick' | 'full';
  /** An anchor as anchor() returned it: prove the file still extends it. */
  anchor?: Anchor;
}

export interface VerifyResult {
  /** False when the chain, the artifacts or the anchor check failed. */
  ok: boolean;
  sessions: number;
  events: number;
  first_broken?: {
    session_id: string;
    seq: number;
    event_id: string;
    problem: string;
    [key: string]: JsonValue;
  };
  purged?: { session_id: string; seq: number; event_id: string; purged_by: string }[];
  artifacts?: ArtifactCheck;
  anchor?: { ok: boolean; events: number; problem?: string };
  [key: string]: JsonValue | undefined;
}

export interface RebuildOptions {
  /**
   * Change nothing and fail with CHECK_FAILED when a replayed table differs
   * from the stored one (default false).
   */
  check?: boolean;
  /**
   * Re-derive the session-search index too (default false: it indexes the
   * stored events alone, so it is brought up to date and kept).
   */
  search?: boolean;
}

/** One derived table in a rebuild result. */
export interface TableChecksum {
  table: string;
  /** Rows after the rebuild. */
  rows: number;
  /** SHA-256 (hex) of the table's rows before the rebuild. */
  before: string;
  /** SHA-256 (hex) of the table's rows after the rebuild. */
  after: string;
  [key: string]: JsonValue;
}

/** One full-text index in an optimize result. */
export interface IndexMerge {
  /** memory_fts (memories), search_words or search_grams (session search). */
  index: string;
  segments_before: number;
  /** 1, or 0 for an empty index. */
  segments_after: number;
  /** Leaf pages of the merged index. */
  pages: number;
  [key: string]: JsonValue;
}

export interface OptimizeResult {
  indexes: IndexMerge[];
  [key: string]: JsonValue;
}

export interface RebuildResult {
  /** Events replayed. */
  events: number;
  /** Every derived table came out as it was. */
  identical: boolean;
  tables: TableChecksum[];
  /** Tables of the log's own indexes (session search) caught up and kept. */
  kept: string[];
  /** With check: the artifacts' quick check. */
  artifacts?: ArtifactCheck;
  [key: string]: JsonValue | undefined;
}

export interface ImportResult {
  imported: number;
  skipped: number;
}

export type TranscriptFormat = 'claude-code' | 'codex' | 'pi';

export interface TranscriptImportOptions {
  /** false while an agent may still be writing: a message whose next part is not written yet waits (default true). */
  final?: boolean;
}

/** One session file in a transcript import report. */
export interface TranscriptFile {
  /** Its absolute path, as its events' provenance records it. */
  file: string;
  /** The file's own session ("" when it failed before it was known). */
  session_id: string;
  status: 'imported' | 'unchanged' | 'failed' | 'changed';
  /** Events appended by this pass. */
  events: number;
  /** Lines read past those imported before. */
  lines: number;
  /** Record types the reader does not know (kept as custom events), with their counts. */
  unknown: Record<string, number>;
  /** failed, changed: why, naming the file and the line. */
  error?: string;
  /** The branch of the source's active leaf, when it is not the session's main. */
  active_branch_id?: string;
}

export interface TranscriptImportResult {
  format: TranscriptFormat;
  /** One per session file, in path order. */
  sessions: TranscriptFile[];
  imported: number;
  unchanged: number;
  changed: number;
  failed: number;
}

/** A branch of a session's tree. */
export interface Branch {
  /** The id of the event that opened it (SessionStarted for main). */
  id: string;
  session_id: string;
  kind: 'main' | 'fork' | 'subagent' | 'what_if';
  /** "main" for main; a fork's name when it was given one. */
  name?: string;
  /** Absent for main. */
  parent_branch_id?: string;
  /** The event it forked from, on the parent branch's path. */
  fork_event_id?: string;
  fork_seq?: number;
  first_seq: number;
  /** Its last event. */
  leaf_event_id: string;
  leaf_seq: number;
  /** Events on the branch itself, not counting its ancestors'. */
  event_count: number;
  [key: string]: JsonValue | undefined;
}

export interface ForkOptions {
  /** Default "fork". */
  kind?: 'fork' | 'subagent' | 'what_if';
  /** A name to find the branch by. */
  name?: string;
  /** The branch's id (its BranchCreated event's); generated when absent. */
  id?: string;
  /** The actor of the BranchCreated event (default "host"). */
  actor?: string;
  /** Integer ms since the Unix epoch. */
  ts?: number;
}

export interface BranchPathOptions {
  /** The branch's id or a name unique in the session (default: main). */
  branch?: string | null;
  /** Yield the engine's JSON text instead of objects. */
  raw?: boolean;
}

/** What follows an event. */
export interface Children {
  event_id: string;
  /** The next event on its branch, then the first event of each fork there. */
  events: StoredEvent[];
  /** The child sessions it spawned. */
  sessions: Session[];
}

export interface BranchViewOptions {
  /** The branch's id or a name unique in the session (default: main). */
  branch?: string | null;
}

/** One typed block of a message; its fields depend on its type. */
export interface MessageBlock {
  type: 'text' | 'tool_call' | 'tool_result' | 'thinking' | 'image' | 'file_ref'
    | 'artifact_ref' | 'summary' | 'context';
  text?: string;
  /** tool_call: the call id. */
  id?: string;
  name?: string;
  args?: JsonObject | string;
  /** tool_result: the call it answers. */
  tool_call_id?: string;
  status?: 'success' | 'error' | 'cancelled';
  error?: string;
  artifact_id?: string;
  /** summary: a structured summary. */
  summary?: JsonObject;
  first_kept_event_id?: string;
  /** context: standing instructions, or context at its place in the conversation. */
  kind?: 'instructions' | 'context';
  /** context: what it was (agents_md, environment_context, …). */
  source?: string;
  [key: string]: JsonValue | undefined;
}

/** A message on a branch's path. */
export interface Message {
  /** The message-bearing event. */
  event_id: string;
  seq: number;
  ts: number;
  /** The branch its event is on (an ancestor's before a fork). */
  branch_id: string;
  role: 'user' | 'assistant' | 'tool' | 'summary' | 'context';
  /** Counted once, at append. */
  tokens: number;
  token_counter: string;
  blocks: MessageBlock[];
}

/** The result of a tool call on the branch read. */
export interface ToolCallResult {
  /** The ToolCallFinished, ToolCallFailed or ToolCallCancelled. */
  event_id: string;
  seq: number;
  branch_id: string;
  artifact_id: string | null;
  error: string | null;
  duration_ms: number | null;
  exit_code: number | null;
}

/** A tool call as seen from a branch. */
export interface ToolCall {
  call_id: string;
  name: string | null;
  args: JsonObject | string | null;
  /** The AssistantMessageCreated that made it. */
  event_id: string;
  seq: number;
  branch_id: string;
  /** Pending until a result is on the branch's path. */
  status: 'pending' | 'success' | 'error' | 'cancelled';
  result: ToolCallResult | null;
}

/** One write or diff of a file. */
export interface FileChange {
  event_id: string;
  seq: number;
  op: 'write' | 'diff';
  change_summary: string | null;
  artifact_id: string | null;
}

/** A file touched on a branch's path. */
export interface FileInfo {
  path: string;
  last_read: { event_id: string; seq: number; branch_id: string } | null;
  last_write: { event_id: string; seq: number; branch_id: string; op: 'write' | 'diff' } | null;
  reads: number;
  /** FileWritten and DiffApplied events. */
  writes: number;
  changes: FileChange[];
}

export interface StateOptions {
  /** A branch id or a name unique in the session (default: main). */
  branch?: string | null;
  /** An event id of the session: the state right after it, on its branch. */
  at?: string | null;
}

/** A text and the event it came from. */
export interface Sourced {
  text: string;
  event_id: string;
}

export interface StateFile {
  path: string;
  /** The latest event about the file. */
  event_id: string;
  count: number;
  change_summary: string | null;
  artifact_id: string | null;
}

export interface CallResult {
  id: string;
  name: string;
  event_id: string;
  is_error: boolean;
  exit_code: number | null;
  artifact_id: string | null;
  error: string | null;
  retryable: boolean;
}

/** The agent's working state on one branch. */
export interface AgentState {
  goal: {
    /** The last set_goal, else the first user prompt. */
    user_goal: Sourced | null;
    /** The latest user prompt. */
    request: Sourced | null;
    /** The last set_task. */
    current_task: Sourced | null;
    acceptance_criteria: Sourced[];
  };
  plan: {
    steps: Array<{ text: string; status: 'pending' | 'in_progress' | 'done' | 'skipped' | 'blocked' }>;
    current_step: number | null;
    status: 'none' | 'active' | 'blocked' | 'done';
    event_id: string | null;
  };
  constraints: { hard: Sourced[]; soft: Sourced[]; preferences: Sourced[] };
  facts: Array<{ content: string; confidence: number; source_refs: string[]; event_id: string }>;
  decisions: Array<{
    decision: string;
    rationale: string | null;
    alternatives: JsonValue[] | null;
    evidence_refs: string[];
    event_id: string;
  }>;
  open_questions: Array<{ id: string; text: string; event_id: string }>;
  resolved_questions: Array<{
    id: string;
    text: string;
    event_id: string;
    answer: string | null;
    resolved_event_id: string;
  }>;
  files: { read: StateFile[]; modified: StateFile[] };
  tool_state: {
    pending: Array<{
      id: string;
      name: string;
      event_id: string;
      status: 'requested' | 'running';
      approval: 'requested' | 'granted' | 'denied' | null;
    }>;
    /** The latest 8 results, oldest first. */
    last_results: CallResult[];
    /** Failed calls not since finished. */
    failed: CallResult[];
  };
  last_compaction_id: string | null;
}

/** The state right after event_id (seq) on branch_id. */
export interface State {
  session_id: string;
  branch_id: string;
  seq: number;
  event_id: string;
  state: AgentState;
}

export interface Span {
  count: number;
  total: number;
  max: number;
  mean: number | null;
}

/** A stored artifact (schema/json/artifact.schema.json). */
export interface Artifact {
  /** 'art_' + the hex SHA-256 of the content. */
  id: string;
  raw_size: number;
  stored_size: number;
  chunk_size: number;
  chunk_count: number;
  line_count: number;
  kind: ArtifactKind;
  mime: string | null;
  name: string | null;
  created_ts: number;
  refs: { event_id: string; role: string; session_id: string | null }[];
}

export type ArtifactKind =
  | 'file' | 'diff' | 'tool_output' | 'command_log' | 'image' | 'dataset' | 'url_snapshot'
  | 'other';

export interface PutArtifactOptions {
  kind?: ArtifactKind;
  mime?: string;
  name?: string;
  /** The event that refers to the artifact. */
  eventId?: string;
  /** What the artifact is to the event (default 'output'). */
  role?: string;
}

export type MemoryScope = 'global' | 'user' | 'org' | 'workspace' | 'project' | 'session';
export type MemoryKind =
  | 'preference'
  | 'fact'
  | 'instruction'
  | 'skill'
  | 'artifact_summary'
  | 'decision';

export interface MemoryInput {
  scope: MemoryScope;
  content: string;
  source_refs: string[];
  scope_id?: string;
  kind?: MemoryKind;
  memory_id?: string;
  confidence?: number;
  priority?: number;
  keywords?: string[];
  readers?: string[];
  sensitive?: boolean;
  expires_at?: number;
  ttl_ms?: number;
  update_policy?: string;
  actor?: string;
  ts?: number;
}

export interface Memory {
  memory_id: string;
  version: number;
  scope: MemoryScope;
  scope_id: string;
  kind: MemoryKind;
  content: string | null;
  source_refs: string[];
  keywords: string[];
  readers: string[] | null;
  confidence: number;
  priority: number;
  sensitive: boolean;
  expires_at: number | null;
  update_policy: string | null;
  valid_from: number;
  valid_to: number | null;
  ended_by: string | null;
  event_id: string;
  session_id: string;
  status: 'current' | 'superseded' | 'forgotten';
  use_count: number;
  last_used: number | null;
}

export interface MemoryListQuery {
  scope?: MemoryScope;
  scope_id?: string;
  kind?: MemoryKind;
  all_versions?: boolean;
  as_of?: number;
  limit?: number;
}

export interface MemoryQuery {
  query?: string;
  scopes: { scope: MemoryScope; id?: string }[];
  agent?: string;
  now?: number;
  budget?: number;
  limit?: number;
  allow_sensitive?: boolean;
  match?: 'any' | 'all' | 'fts';
  record_usage?: boolean;
}

export interface RetrievedMemory {
  memory_id: string;
  version: number;
  scope: MemoryScope;
  scope_id: string;
  kind: MemoryKind;
  content: string;
  source_refs: string[];
  event_id: string;
  tokens: number;
  score: number;
  text: number;
  priority: number;
  confidence: number;
  recency: number;
  valid_from: number;
  expires_at: number | null;
  sensitive: boolean;
}

export interface MemoryRetrieval {
  now: number;
  budget: number | null;
  used_tokens: number;
  counter: string;
  fts_query: string;
  fell_back: boolean;
  memories: RetrievedMemory[];
  excluded: { memory_id: string; tokens: number; score: number; reason: 'budget' }[];
}

export interface MemoryForgetResult {
  memory_id: string;
  mode: 'tombstone' | 'purge';
  event_id: string;
  purged_event_ids: string[];
}

export interface ArtifactPreviewOptions {
  mode?: 'head' | 'tail' | 'head_tail';
  lines?: number;
  bytes?: number;
}

export interface ArtifactPreview {
  id: string;
  text: string;
  omitted_lines: number;
  omitted_bytes: number;
}

export interface ArtifactSearchOptions {
  before?: number;
  after?: number;
  maxMatches?: number;
  ignoreCase?: boolean;
}

export interface ArtifactMatch {
  line: number;
  offset: number;
  column: number;
  length: number;
  text: string;
  before: { line: number; text: string }[];
  after: { line: number; text: string }[];
}

export interface ArtifactSearch {
  id: string;
  matches: ArtifactMatch[];
  truncated: boolean;
}

// ---- Search ----

export interface SearchOptions {
  /** Only this session's messages. */
  sessionId?: string;
  /** Only the messages on this branch's path (a name needs sessionId). */
  branchId?: string;
  role?: 'user' | 'assistant' | 'tool' | 'summary' | 'context';
  /** Only events of this type. */
  type?: string;
  /** ts >= since (ms since the Unix epoch). */
  since?: number;
  /** ts <= until (ms since the Unix epoch). */
  until?: number;
  /** 1..1000; default 20. */
  limit?: number;
  /** Events whose visibility is sensitive, private or secret may be hits; default false. */
  allowSensitive?: boolean;
}

export interface SearchHit {
  session_id: string;
  /** The branch the event is on. */
  branch_id: string;
  event_id: string;
  seq: number;
  ts: number;
  type: string;
  role: 'user' | 'assistant' | 'tool' | 'summary' | 'context';
  /** Which step found it: whole words, substrings (trigrams), or a scan. */
  match: 'words' | 'substring' | 'scan';
  /** bm25 of the index that matched: lower is better; 0 for a scan. */
  rank: number;
  /** The text around the match, the match between « and ». */
  snippet: string;
}

export interface SearchResult {
  query: string;
  /** 'fts': taken as FTS5 syntax; 'plain': words, each required. */
  syntax: 'fts' | 'plain';
  hits: SearchHit[];
}

/** One session's stats, or (session_id null) every session's totals. */
export interface Stats {
  session_id: string | null;
  sessions: number;
  events: number;
  messages: { user: number; assistant: number };
  tokens: {
    counted: {
      counter: string;
      user: number;
      assistant: number;
      tool: number;
      summary: number;
      /** ContextAdded, both kinds. */
      context: number;
      total: number;
    };
    /** One meaning whatever the provider: input is uncached; output includes reasoning. */
    usage: {
      input: number;
      output: number;
      cache_read: number;
      cache_write: number;
      reasoning: number;
    };
  };
  /** Under the session's price table (SessionStarted payload "pricing"). */
  cost: { nano_usd: number; priced_messages: number; usd: number | null };
  tools: { calls: number; results: number; errors: number; failures: number; cancelled: number; duration_ms: Span };
  latency_ms: Span;
  approvals: { requested: number; granted: number; denied: number };
  compactions: {
    completed: number;
    failed: number;
    tokens_before: number;
    tokens_after: number;
    ratio: number | null;
  };
  context: { builds: number; used_tokens: number };
  errors: number;
  /** Database-wide, per model: providers' reported input / the recorded compiles' counts. */
  calibration: Array<{
    model: string;
    samples: number;
    estimated_tokens: number;
    reported_tokens: number;
    ratio: number | null;
  }>;
}

// ---- the context compiler ----------------------------------------------------

export type BundleFormat =
  | 'canonical'
  | 'openai.chat'
  | 'openai.responses'
  | 'anthropic.messages'
  | 'gemini.generate_content'
  | 'ai.sdk';

/** A compile request (compile_request.schema.json). */
export interface CompileRequest {
  session_id: string;
  /** The model's context window. */
  max_tokens: number;
  /** Kept free for the answer (default 0). */
  reserved_output_tokens?: number;
  /** A branch id or a name unique in the session (default main); not with leaf_event_id. */
  branch_id?: string;
  /** Compile as if this event were the leaf. */
  leaf_event_id?: string;
  /** The current request, when it is not yet in the log. */
  request?: string | null;
  /**
   * Results of calls of the last turn the host has and has not appended:
   * a call with no result there fails the compile (CONFLICT) otherwise.
   */
  tool_results?: Array<{
    tool_call_id: string;
    output?: string;
    is_error?: boolean;
    error?: string;
    name?: string;
  }>;
  /** The model continues its own finished answer (else a branch ending on one is CONFLICT). */
  continuation?: boolean;
  /** The model the bundle is for: its stats calibration, when providers read more tokens than compiles counted, shrinks the budget (budget.calibration). */
  model?: string;
  instructions?: Array<{ kind: 'system' | 'developer' | 'project'; text: string; id?: string }>;
  tools?: Array<{ name: string; description?: string; parameters?: JsonObject }>;
  policy?: {
    redact?: Array<{ name: string; pattern: string; replacement?: string }>;
    builtin_redaction?: boolean;
    allow_sensitive?: boolean;
    shares?: { tail?: number; memories?: number; artifacts?: number };
    prune?: { keep_recent_turns?: number; min_tokens?: number; preview_bytes?: number };
    /** A call the conversation moved on from: a synthetic cancelled result (close, default) or left out with its call (drop). */
    interrupted_calls?: 'close' | 'drop';
  };
  /** What compile returns (default canonical). */
  format?: BundleFormat;
  /** Append a ContextBuilt event at the branch's leaf. */
  record?: boolean;
}

export interface BundleSource {
  type: 'event' | 'artifact' | 'compaction' | 'request' | 'state';
  id: string;
}

export interface BundleSegment {
  /**
   * Stable across compiles: instructions:<id>, tools, summary, goal, ..., msg:<event id>,
   * cancelled:<call id> (a synthetic cancelled result), result:<call id> (from tool_results).
   */
  id: string;
  kind: string;
  /** 0 never dropped, 1 tail shrinks by whole turns, 2 by score, 3 first. */
  priority: 0 | 1 | 2 | 3;
  /** context: neither instructions nor anyone speaking; before the conversation standing, after it the latest turn's. */
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'context';
  content: JsonObject[];
  tokens: number;
  reason: string;
  sources: BundleSource[];
  /** Message segments: the turn, 0 being the newest. */
  turn?: number;
  hash: string;
}

export interface BundleExclusion {
  id: string;
  kind: string;
  priority: number;
  /** Absent for history that was never read. */
  tokens?: number;
  reason: string;
  sources: BundleSource[];
}

/** A canonical bundle (bundle.schema.json). */
export interface Bundle {
  format: 'canonical';
  session_id: string;
  branch_id: string;
  leaf_event_id: string | null;
  token_counter: string;
  budget: {
    max_tokens: number;
    reserved_output_tokens: number;
    available: number;
    used: number;
    free: number;
  };
  tokens_by_kind: { [kind: string]: number };
  stable_prefix_tokens: number;
  segments: BundleSegment[];
  excluded: BundleExclusion[];
  redactions: Array<{ segment_id: string; rule: string; count: number }>;
  hash: string;
}

/** A host token counter: the tokens of `text`, a non-negative integer. */
export type TokenCounter = (text: string) => number;

export interface EventsOptions {
  /** First seq (default 1). */
  fromSeq?: number;
  /** Last seq (default: no upper bound). */
  toSeq?: number;
  /** Yield the engine's JSON text instead of objects. */
  raw?: boolean;
}

/**
 * A streaming iterator over stored events: rows come from the engine page
 * by page as you iterate. The cursor is freed at the end, on break /
 * return(), on close(), or at garbage collection.
 */
export declare class EventIterator<T = StoredEvent>
  implements IterableIterator<T>, AsyncIterable<T> {
  private constructor();
  next(): IteratorResult<T, undefined>;
  return(value?: unknown): IteratorResult<T, undefined>;
  /** Frees the cursor now; next() then reports the end. */
  close(): void;
  [Symbol.iterator](): EventIterator<T>;
  /** The same rows for `for await`; breaking out frees the cursor. */
  [Symbol.asyncIterator](): AsyncIterableIterator<T>;
}

/**
 * A streaming artifact put (Database.artifactWriter): write() pieces, then
 * commit() for the artifact, or abort(). Nothing is stored unless it
 * commits; collected uncommitted, it aborts. While it is open, other calls
 * on its Database throw CtxdbError MISUSE.
 */
export declare class ArtifactWriter {
  private constructor();
  /** Appends a string (as UTF-8) or bytes. */
  write(data: string | Bytes): this;
  /** Stores what was written; returns the artifact and closes the writer. */
  commit(): Artifact;
  /** Drops what was written; closes the writer (a no-op once closed). */
  abort(): void;
  /** True once committed or aborted. */
  readonly closed: boolean;
  /** The artifact, once committed. */
  artifact: Artifact | undefined;
}

// ---- Compaction ----

/** compaction_policy.schema.json; every field optional. */
export interface CompactionPolicy {
  branch_id?: string;
  context_window?: number;
  reserve_tokens?: number;
  soft_threshold?: number;
  keep_recent_tokens?: number;
  min_reclaim_tokens?: number;
  summary_tokens?: number;
  timeout_ms?: number;
  preview_min_tokens?: number;
  preview_bytes?: number;
}

/** compaction_advice.schema.json. */
export interface CompactionAdvice {
  session_id: string;
  branch_id: string;
  leaf_event_id: string;
  context_tokens: number;
  estimated_tokens: number;
  anchor: { event_id: string; usage_tokens: number; tokens_after: number } | null;
  context_window: number;
  reserve_tokens: number;
  soft_limit: number;
  hard_limit: number;
  level: 'ok' | 'soft' | 'hard';
  reclaimable_tokens: number;
  net_benefit_tokens: number;
  summary_cost_tokens: number;
  cache_invalidated_tokens: number;
  should_compact: boolean;
  reason: string;
  [key: string]: unknown;
}

/** compaction_plan.schema.json: what a summarizer receives. */
export interface CompactionPlan {
  session_id: string;
  branch_id: string;
  leaf_event_id: string;
  status: 'ready' | 'nothing_to_compact';
  cut: { first_kept_event_id: string | null; first_kept_seq: number; kind: string };
  range: {
    from_seq: number;
    to_seq: number;
    from_event_id: string;
    to_event_id: string;
    events: number;
    messages: number;
  };
  tokens: { before: number; previous_summary: number; range: number; kept: number; after_estimate: number };
  previous_compaction: { event_id: string; summary: unknown } | null;
  obligations: {
    current_task: { text: string; event_id: string } | null;
    files_read: { path: string; event_id: string }[];
    files_modified: { path: string; event_id: string; change_summary?: string }[];
    tool_errors: { tool_call_id: string; name: string; error: string; event_id: string }[];
    decisions: { decision: string; rationale?: string; event_id: string }[];
    open_questions: { id: string; text: string; event_id: string }[];
  };
  memory_candidates: { kind: string; content: string; confidence?: number; source_refs: string[] }[];
  pending_calls_kept: string[];
  transcript: string;
  [key: string]: unknown;
}

/** compaction_summary.schema.json (the hard checks need goal.current_task, next_steps and a source ref). */
export interface CompactionSummary {
  goal: { user_goal?: string; current_task?: string; acceptance_criteria?: string[] };
  next_steps: string[];
  provenance: { source_event_ids?: string[]; summarizer?: { name?: string; version?: string }; [key: string]: unknown };
  [key: string]: unknown;
}

/** compaction_result.schema.json. */
export interface CompactionResult {
  status: 'compacted' | 'nothing_to_compact';
  session_id: string;
  branch_id: string;
  tokens_before: number;
  event_id?: string;
  first_kept_event_id?: string;
  tokens_after?: number;
  ratio?: number;
  checks?: { name: string; ok: boolean; detail?: string; missing?: string[] }[];
  summary?: CompactionSummary;
  summarizer?: { name: string; version: string };
  reason?: string;
  [key: string]: unknown;
}

/** compactions.schema.json, one item. */
export interface Compaction {
  event_id: string;
  seq: number;
  branch_id: string;
  first_kept_event_id: string;
  first_kept_seq: number;
  range: Record<string, unknown> | null;
  tokens_before: number | null;
  tokens_after: number | null;
  ratio: number | null;
  checks: { name: string; ok: boolean }[];
  summarizer: { name: string; version: string } | null;
}

/** branch_summary.schema.json. */
export interface BranchSummary {
  event_id: string;
  branch_id: string;
  from_leaf_event_id: string;
  common_ancestor_event_id: string;
  range: Record<string, unknown>;
  summary: CompactionSummary;
  text: string;
}

export interface CompactOptions {
  policy?: CompactionPolicy;
  /** Called synchronously with the plan; returns the summary (object or JSON text). */
  summarizer?: ((plan: CompactionPlan) => CompactionSummary | string) | null;
}

/** A connection to one ctxdb database file. */
export declare class Database {
  /** Opens (creating if needed) the database file at `path`. */
  constructor(path: string, config?: OpenConfig);
  /** The path the database was opened with. */
  readonly path: string;
  /** True once close() was called. */
  readonly closed: boolean;
  /**
   * Closes the handle and frees its iterators; idempotent. Async calls in
   * flight finish first. Any later call is a CtxdbError MISUSE.
   */
  close(): void;
  /** Creates a session (CONFLICT when the id exists). */
  createSession(options: CreateSessionOptions): Session;
  /** A session by id (NOT_FOUND when unknown). */
  session(sessionId: string): Session;
  /** Every session, oldest first. */
  sessions(): Session[];
  /** Appends one event (an object, or its JSON text as a string or bytes). */
  append(sessionId: string, event: EventInput | string | Bytes): StoredEvent;
  /**
   * Records a provider's answer (a complete response object or its JSON
   * text; with `stream: true`, its events as an array or NDJSON text) as the
   * AssistantMessageCreated it means, and returns the stored event. The
   * same response recorded again returns the stored event; other content
   * under its id is CONFLICT; a missing field is INVALID_ARG naming it.
   */
  recordResponse(
    sessionId: string,
    response: JsonObject | Array<JsonObject | string | Bytes> | string | Bytes,
    options: RecordResponseOptions,
  ): StoredEvent;
  /** recordResponse, run off the main thread. */
  recordResponseAsync(
    sessionId: string,
    response: JsonObject | Array<JsonObject | string | Bytes> | string | Bytes,
    options: RecordResponseOptions,
  ): Promise<StoredEvent>;
  /**
   * Appends events in one transaction: all or nothing; an error message
   * names the line (line N is events[N-1]).
   */
  appendMany(sessionId: string, events: Array<EventInput | string | Bytes>): BatchResult;
  /** appendMany off the main thread. */
  appendManyAsync(
    sessionId: string,
    events: Array<EventInput | string | Bytes>,
  ): Promise<BatchResult>;
  /** A stored event by id (NOT_FOUND when unknown). */
  event(eventId: string): StoredEvent;
  /** One session's events with fromSeq <= seq <= toSeq, in seq order. */
  events(sessionId: string, options: EventsOptions & { raw: true }): EventIterator<string>;
  events(sessionId: string, options?: EventsOptions): EventIterator<StoredEvent>;
  /** Every event of every session in append order (the export stream). */
  export(options: { raw: true }): EventIterator<string>;
  export(options?: { raw?: boolean }): EventIterator<StoredEvent>;
  /**
   * The export stream as NDJSON text: the events (of every session, or of
   * sessionId), then the artifacts they refer to, checked by hash on import.
   */
  exportNdjson(sessionId?: string | null): string;
  /** Forks a branch at an event of the session; returns the new branch. */
  fork(sessionId: string, eventId: string, options?: ForkOptions): Branch;
  /** The session's branches, main first (NOT_FOUND for an unknown session). */
  branches(sessionId: string): Branch[];
  /**
   * The events on a branch's path, root to leaf (default: main). An
   * unknown session or branch throws NOT_FOUND at the call.
   */
  branchPath(sessionId: string, options: BranchPathOptions & { raw: true }): EventIterator<string>;
  branchPath(sessionId: string, options?: BranchPathOptions): EventIterator<StoredEvent>;
  /** What follows an event (NOT_FOUND when unknown). */
  children(eventId: string): Children;
  /** The messages of a branch's path (default: main). */
  messages(sessionId: string, options?: BranchViewOptions): Message[];
  /** The tool calls of a branch, with status and result as seen from it. */
  toolCalls(sessionId: string, options?: BranchViewOptions): ToolCall[];
  /** The files a branch touched: last read, last write, every change. */
  files(sessionId: string, options?: BranchViewOptions): FileInfo[];
  /** The agent state of a branch (default: main), or right after an event (at). */
  state(sessionId: string, options?: StateOptions): State;
  /** One session's stats, or every session's totals. */
  stats(sessionId?: string | null): Stats;
  /** Stores bytes (a string as UTF-8) as an artifact; the same bytes are stored once. */
  putArtifact(data: string | Bytes, options?: PutArtifactOptions): Artifact;
  /** A streaming put, for content too large to hold in memory. */
  artifactWriter(options?: PutArtifactOptions): ArtifactWriter;
  /** The bytes [offset, offset+length) of an artifact (length -1: to the end). */
  readArtifact(id: string, options?: { offset?: number; length?: number }): Bytes; // a Buffer
  /** One artifact (NOT_FOUND when unknown). */
  artifact(id: string): Artifact;
  /** Every artifact, or those the session's events refer to. */
  artifacts(sessionId?: string | null): Artifact[];
  /** Lines first .. first+count-1, 1-based (count -1: to the end). */
  artifactLines(id: string, options?: { first?: number; count?: number }): string;
  /** The head, the tail, or both around a marker of what was left out. */
  artifactPreview(id: string, options?: ArtifactPreviewOptions): ArtifactPreview;
  /** grep in an artifact: matching lines (PCRE2) with context. */
  artifactSearch(id: string, pattern: string, options?: ArtifactSearchOptions): ArtifactSearch;
  /**
   * Searches every session's messages: whole words first, then substrings
   * (paths, identifiers, Chinese, Japanese). FTS5 syntax when the query
   * has some and it parses; anything else is plain words.
   */
  search(query: string, options?: SearchOptions): SearchResult;
  /** Writes a memory (a MemoryWritten event in the session); returns it. */
  writeMemory(sessionId: string, memory: MemoryInput): Memory;
  /** Supersedes a memory with a new version (the fields that change, with source_refs). */
  updateMemory(memoryId: string, update: Partial<MemoryInput> & { source_refs: string[] }): Memory;
  /** Forgets a memory: a tombstone, or with purge its content removed from the log too. */
  forgetMemory(
    memoryId: string,
    options?: { purge?: boolean; reason?: string; sessionId?: string; actor?: string; ts?: number },
  ): MemoryForgetResult;
  /** A memory: its current version, or its last one once forgotten. */
  memory(memoryId: string): Memory;
  /** The current memories, every version, or those valid at as_of. */
  memories(query?: MemoryListQuery): Memory[];
  /** Retrieval: FTS5 over content and keywords, filtered, ranked, fitted to a budget. */
  retrieveMemories(query: MemoryQuery): MemoryRetrieval;
  /** Writes memory candidates in one transaction: all of them, or none. */
  promoteMemories(sessionId: string, candidates: MemoryInput[]): Memory[];
  /** Checks the hash chain of one session, or of all (and the artifacts). */
  verify(sessionId?: string | null, options?: VerifyOptions): VerifyResult;
  /** verify off the main thread. */
  verifyAsync(sessionId?: string | null, options?: VerifyOptions): Promise<VerifyResult>;
  /** A digest of the whole history to keep outside the file. */
  anchor(): Anchor;
  /**
   * Replays every event into the derived tables (sessions, ...) in one
   * transaction; the log is not touched. With {check: true} any difference
   * is a CtxdbError CHECK_FAILED and nothing changes.
   */
  rebuild(options?: RebuildOptions): RebuildResult;
  /** rebuild off the main thread. */
  rebuildAsync(options?: RebuildOptions): Promise<RebuildResult>;
  /**
   * Merges each full-text index (memories, session search) into one
   * segment, in one transaction: after a bulk load of memories, retrieval
   * is faster merged. It rewrites every page of the indexes; what they hold
   * does not change.
   */
  optimize(): OptimizeResult;
  /** optimize off the main thread. */
  optimizeAsync(): Promise<OptimizeResult>;
  /** Imports NDJSON of stored events (the export stream) in one transaction. */
  importNdjson(ndjson: string | Bytes): ImportResult;
  /** importNdjson off the main thread. */
  importNdjsonAsync(ndjson: string | Bytes): Promise<ImportResult>;
  /**
   * Imports another agent's session files: a file, or its folder
   * (~/.claude, ~/.codex, ~/.pi/agent, or one below). One transaction per
   * file, incremental; the report lists each file. INVALID_ARG for an
   * unknown format, NOT_FOUND for a missing path, READONLY for a read-only
   * handle.
   */
  importTranscript(
    format: TranscriptFormat,
    path: string,
    options?: TranscriptImportOptions,
  ): TranscriptImportResult;
  /** importTranscript off the main thread. */
  importTranscriptAsync(
    format: TranscriptFormat,
    path: string,
    options?: TranscriptImportOptions,
  ): Promise<TranscriptImportResult>;
  /**
   * Compiles the context for a model's next call: the bundle (format
   * canonical) or the provider's request JSON. {raw: true}: the JSON text.
   * BUDGET when what is never dropped exceeds the budget; CONFLICT when a
   * call of the last turn has no result (give it in tool_results) or the
   * branch ends on the assistant's finished answer with no request (give
   * request, or continuation: true).
   */
  compile(request: CompileRequest & { format?: 'canonical' } | string | Bytes): Bundle;
  compile(request: CompileRequest | string | Bytes, options: { raw: true }): string;
  compile(request: CompileRequest | string | Bytes, options?: { raw?: boolean }): JsonObject;
  /**
   * compile off the main thread. Rejects with MISUSE while a JS token
   * counter is set (it could only be called from the worker thread).
   */
  compileAsync(request: CompileRequest & { format?: 'canonical' } | string | Bytes): Promise<Bundle>;
  compileAsync(request: CompileRequest | string | Bytes, options: { raw: true }): Promise<string>;
  compileAsync(request: CompileRequest | string | Bytes, options?: { raw?: boolean }): Promise<JsonObject>;
  /** A canonical bundle in a provider's format. {raw: true}: the JSON text. */
  bundleConvert(bundle: Bundle | string | Bytes, format: BundleFormat, options: { raw: true }): string;
  bundleConvert(bundle: Bundle | string | Bytes, format: BundleFormat, options?: { raw?: boolean }): JsonObject;
  /**
   * fn replaces the built-in token estimator for this database (counts at
   * append, compiles, memory retrieval and compaction); null restores it. fn runs synchronously and must
   * not use this database; a throw fails the call that needed the count
   * (CtxdbError INTERNAL, the thrown error as `cause`). While it is set,
   * appendManyAsync, importNdjsonAsync, rebuildAsync, compileAsync and compactAsync
   * reject with MISUSE.
   */
  setTokenCounter(name: string, fn: TokenCounter): void;
  setTokenCounter(name: string | null, fn: null): void;
  /** Whether to compact: size, limits, net benefit (cached counts only). */
  shouldCompact(sessionId: string, policy?: CompactionPolicy): CompactionAdvice;
  /** The compaction plan: cut, range, obligations, transcript. Writes nothing. */
  planCompaction(sessionId: string, policy?: CompactionPolicy): CompactionPlan;
  /** Checks a summary for a plan and commits it (CHECK_FAILED names failed checks). */
  commitCompaction(
    sessionId: string,
    plan: CompactionPlan | string,
    summary: CompactionSummary | string,
  ): CompactionResult;
  /** plan -> summarize (yours, or the built-in one) -> check -> commit. Synchronous. */
  compact(sessionId: string, options?: CompactOptions): CompactionResult;
  /** compact with the built-in summarizer, off the main thread (no summarizer option). */
  compactAsync(sessionId: string, options?: { policy?: CompactionPolicy }): Promise<CompactionResult>;
  /** Summarizes the path abandoned at fromLeaf and appends it at toEvent. */
  summarizeBranch(sessionId: string, fromLeaf: string, toEvent: string): BranchSummary;
  /** The compactions on a branch's path, oldest first. */
  compactions(sessionId: string, options?: BranchViewOptions): Compaction[];
  /** The library's version string. */
  /**
   * Tokenizer: the exact number of tokens of text (identical to tiktoken's),
   * with this database's tokenizer_data_dir. Invalid UTF-8 bytes are a
   * CtxdbError (CTXDB_INVALID_UTF8); a missing rank file CTXDB_NOT_FOUND, a
   * different one CTXDB_CORRUPT.
   */
  countTokens(text: string | Bytes, options?: TokenOptions): number;
  /** Tokenizer: the token ids of text. */
  encodeTokens(text: string | Bytes, options?: TokenOptions): Uint32Array;
  version(): string;
  /** The library's ABI version. */
  abiVersion(): number;
}

/** Opens (creating if needed) the database file at `path`. */
export declare function open(path: string, config?: OpenConfig): Database;
/** The ABI version this binding needs (1). */
export declare const ABI_VERSION: number;
/** The library's version string, e.g. "0.1.0". */
export declare function version(): string;
/** The library's version number (MAJOR * 1000000 + MINOR * 1000 + PATCH). */
export declare function versionNumber(): number;
/** The library's ABI version (ctxdb_abi_version()). */
export declare function abiVersion(): number;

/** Tokenizer: exact token counts without a database ($CTXDB_TOKENIZER_DATA). */
export declare function countTokens(text: string | Bytes, options?: TokenOptions): number;
/** Tokenizer: token ids without a database ($CTXDB_TOKENIZER_DATA). */
export declare function encodeTokens(text: string | Bytes, options?: TokenOptions): Uint32Array;
