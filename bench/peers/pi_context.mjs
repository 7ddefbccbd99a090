#!/usr/bin/env node
// pi_context.mjs — the Pi coding agent as a peer of `ctxdb compile`.
//
// Reads a ctxdb NDJSON export (one stored event per line, as `ctxdb export`
// prints), converts the session into the JSONL session file Pi itself writes,
// then times Pi's own load and context path, as its AgentSession runs them:
//
//   open:    SessionManager.open(file)        read + JSON.parse + index
//   context: sessionManager.buildSessionContext()   leaf→root walk, compaction
//
// and prints ONE JSON line on stdout (see README.md). Diagnostics go to
// stderr. `--self-test` checks the conversion on an embedded sample.

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

import { SessionManager, convertToLlm } from "@mariozechner/pi-coding-agent";

const PEER = "pi-coding-agent";

function piVersion() {
  // The package's exports map hides package.json; find it from the entry.
  let dir = dirname(fileURLToPath(import.meta.resolve("@mariozechner/pi-coding-agent")));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (pkg.name === "@mariozechner/pi-coding-agent") return pkg.version;
    } catch {}
  }
  return "unknown";
}

// ---------------------------------------------------------------- conversion

// Stored events of one session, in seq order. With several sessions in the
// export, `sessionId` must name one.
export function readExport(text, sessionId) {
  const bySession = new Map();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const e = JSON.parse(line);
    if (!bySession.has(e.session_id)) bySession.set(e.session_id, []);
    bySession.get(e.session_id).push(e);
  }
  let events;
  if (sessionId) {
    events = bySession.get(sessionId);
    if (!events) throw new Error(`session ${sessionId} is not in the export`);
  } else if (bySession.size === 1) {
    events = [...bySession.values()][0];
  } else {
    throw new Error(`the export holds ${bySession.size} sessions; name one with --session`);
  }
  return events.sort((a, b) => a.seq - b.seq);
}

const iso = (ms) => new Date(ms).toISOString();

// Pi's entry ids are 8 hex chars; these are deterministic ones of that shape.
const piId = (n) => n.toString(16).padStart(8, "0");

function toolArguments(args) {
  if (args == null) return {};
  if (typeof args === "object") return args;
  try {
    const v = JSON.parse(args);
    if (v && typeof v === "object" && !Array.isArray(v)) return v;
  } catch {}
  return { input: args };
}

function stopReason(p, hasToolCall) {
  switch (p.stop_reason) {
    case "tool_use": case "toolUse": case "tool_calls": return "toolUse";
    case "max_tokens": case "length": return "length";
    case "error": return "error";
    case "aborted": return "aborted";
    case "end_turn": case "stop": return "stop";
    default: return hasToolCall ? "toolUse" : "stop";
  }
}

function usage(u = {}) {
  const input = u.input_tokens ?? 0, output = u.output_tokens ?? 0;
  const cacheRead = u.cache_read_tokens ?? 0, cacheWrite = u.cache_write_tokens ?? 0;
  return {
    input, output, cacheRead, cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

// Assistant content blocks → Pi's (text | thinking | toolCall). Pi's
// assistant content has no image or reference blocks: a reference becomes
// the text a model would see, an image is left out.
function assistantContent(blocks, toolNames) {
  const out = [];
  for (const b of blocks) {
    switch (b.type) {
      case "text":
        out.push({ type: "text", text: b.text ?? "" });
        break;
      case "thinking": {
        const t = { type: "thinking", thinking: b.text ?? b.thinking ?? "" };
        if (typeof b.signature === "string") t.thinkingSignature = b.signature;
        out.push(t);
        break;
      }
      case "tool_call":
        toolNames.set(b.id, b.name);
        out.push({ type: "toolCall", id: b.id, name: b.name, arguments: toolArguments(b.args) });
        break;
      case "file_ref":
      case "artifact_ref":
        out.push({ type: "text", text: `[${b.type} ${b.path ?? b.id ?? b.artifact_id ?? ""}]` });
        break;
      default:
        break; // image: no place for it in a Pi assistant message
    }
  }
  return out;
}

function toolResultText(p) {
  const parts = [];
  if (p.output) parts.push(p.output);
  if (p.error) parts.push(p.error);
  if (parts.length === 0 && p.artifact_id) parts.push(`[artifact ${p.artifact_id}]`);
  return parts.join("\n");
}

// The Pi entry body (without id/parentId/timestamp) of one event; null to
// skip it. `others`: "custom" keeps every non-message event as a Pi custom
// entry (stored and walked, never sent to the model); "skip" drops it.
function entryBody(e, toolNames, others) {
  const p = e.payload ?? {};
  switch (e.type) {
    case "UserPromptSubmitted":
      return { type: "message",
               message: { role: "user", content: [{ type: "text", text: p.text ?? "" }], timestamp: e.ts } };
    case "AssistantMessageCreated": {
      const content = assistantContent(p.content ?? [], toolNames);
      return { type: "message",
               message: { role: "assistant", content, api: "ctxdb-export", provider: "ctxdb",
                          model: p.model ?? "unknown", usage: usage(p.usage),
                          stopReason: stopReason(p, content.some((c) => c.type === "toolCall")),
                          timestamp: e.ts } };
    }
    case "ToolCallFinished":
    case "ToolCallFailed":
      return { type: "message",
               message: { role: "toolResult", toolCallId: p.tool_call_id,
                          toolName: p.name ?? toolNames.get(p.tool_call_id) ?? "unknown",
                          content: [{ type: "text", text: toolResultText(p) }],
                          isError: e.type === "ToolCallFailed" || p.is_error === true,
                          timestamp: e.ts } };
    case "CompactionCompleted":
      return { type: "compaction",
               summary: typeof p.summary === "string" ? p.summary : JSON.stringify(p.summary),
               firstKeptEntryId: null, // resolved once every entry has its id
               tokensBefore: p.tokens_before ?? 0 };
    default:
      return others === "custom" ? { type: "custom", customType: `ctxdb:${e.type}`, data: p } : null;
  }
}

// A Pi session file (JSONL text) for the events; `idOf` maps each ctxdb
// event id to its Pi entry id (for a skipped event: its nearest converted
// ancestor's, or null).
export function convert(events, { others = "custom" } = {}) {
  const started = events.find((e) => e.type === "SessionStarted");
  const header = {
    type: "session", version: 3, id: events[0]?.session_id ?? "ses",
    timestamp: iso(events[0]?.ts ?? 0), cwd: started?.payload?.cwd ?? "/",
  };
  const idOf = new Map(); // ctxdb id → Pi id of itself or nearest converted ancestor
  const converted = new Set(); // ctxdb ids that became an entry
  const parentOf = new Map(); // ctxdb id → ctxdb parent id
  const toolNames = new Map();
  const entries = [];
  const compactions = [];
  let n = 0;
  for (const e of events) {
    parentOf.set(e.id, e.parent_id ?? null);
    const parent = e.parent_id ? idOf.get(e.parent_id) ?? null : null;
    const body = entryBody(e, toolNames, others);
    if (!body) {
      idOf.set(e.id, parent);
      continue;
    }
    // Pi's own key order for the fields every entry has, then the body's.
    const ordered = Object.assign({ type: body.type, id: piId(++n), parentId: parent,
                                    timestamp: iso(e.ts) }, body);
    idOf.set(e.id, ordered.id);
    converted.add(e.id);
    entries.push(ordered);
    if (e.type === "CompactionCompleted") compactions.push([ordered, e]);
  }
  // firstKeptEntryId: the entry of first_kept_event_id or, when that event
  // was skipped, the first converted event after it on the compaction's path.
  for (const [entry, e] of compactions) {
    const target = e.payload.first_kept_event_id;
    let kept = null;
    for (let id = parentOf.get(e.id); id; id = parentOf.get(id)) {
      if (converted.has(id)) kept = id;
      if (id === target) break;
    }
    entry.firstKeptEntryId = converted.has(target) ? idOf.get(target) : kept ? idOf.get(kept) : target;
  }
  const text = [header, ...entries].map((x) => JSON.stringify(x)).join("\n") + "\n";
  return { text, entries: entries.length, idOf };
}

// ---------------------------------------------------------------- timing

function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  const pos = (sorted.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const r = (x) => Math.round(x * 1000) / 1000;
  return { median: r(percentile(s, 0.5)), p10: r(percentile(s, 0.1)), p90: r(percentile(s, 0.9)) };
}

const nsToMs = (a, b) => Number(b - a) / 1e6;

// One open + context on the file; leafPiId (optional) moves the leaf first,
// as Pi does when the user navigates its session tree.
function once(file, leafPiId) {
  const t0 = process.hrtime.bigint();
  const sm = SessionManager.open(file, dirname(file));
  const t1 = process.hrtime.bigint();
  if (leafPiId) sm.branch(leafPiId);
  const ctx = sm.buildSessionContext();
  const t2 = process.hrtime.bigint();
  const llm = convertToLlm(ctx.messages);
  const t3 = process.hrtime.bigint();
  return { open: nsToMs(t0, t1), context: nsToMs(t1, t2), toLlm: nsToMs(t2, t3),
           entries: sm.getEntries().length, messages: ctx.messages.length, llmMessages: llm.length };
}

export function measure(file, { runs = 10, warmups = 2, leafPiId = null } = {}) {
  for (let i = 0; i < warmups; i++) once(file, leafPiId);
  const open = [], context = [], total = [], toLlm = [];
  let last;
  for (let i = 0; i < runs; i++) {
    last = once(file, leafPiId);
    open.push(last.open);
    context.push(last.context);
    total.push(last.open + last.context);
    toLlm.push(last.toLlm);
  }
  return { last, open, context, total, toLlm };
}

// ---------------------------------------------------------------- self-test

// A small session as `ctxdb export` prints it (hashes cut short: the
// converter reads none of them). Turn 1 is summarized by the compaction,
// which keeps turn 2 on (first_kept = e6). e14 forks off e9.
const h = "0".repeat(64);
const SAMPLE = [
  ["e1", null, "SessionStarted", { agent_id: "coder", cwd: "/repo" }],
  ["e2", "e1", "UserPromptSubmitted", { text: "fix the login bug" }],
  ["e3", "e2", "AssistantMessageCreated", { content: [
      { type: "thinking", text: "look at the test first" },
      { type: "text", text: "Running the tests." },
      { type: "tool_call", id: "c1", name: "bash", args: { cmd: "pytest" } }],
    model: "m1", usage: { input_tokens: 100, output_tokens: 10 } }],
  ["e4", "e3", "ToolCallStarted", { tool_call_id: "c1" }],
  ["e5", "e4", "ToolCallFinished", { tool_call_id: "c1", output: "1 failed" }],
  ["e6", "e5", "UserPromptSubmitted", { text: "now the email case" }],
  ["e7", "e6", "AssistantMessageCreated", { content: [
      { type: "tool_call", id: "c2", name: "read", args: "{\"path\":\"a.py\"}" },
      { type: "tool_call", id: "c3", name: "bash", args: { cmd: "false" } }], model: "m1" }],
  ["e8", "e7", "ToolCallFinished", { tool_call_id: "c2", output: "def login(): ..." }],
  ["e9", "e8", "ToolCallFailed", { tool_call_id: "c3", error: "exit 1" }],
  ["e10", "e9", "FileWritten", { path: "a.py", change_summary: "casefold" }],
  ["e11", "e10", "CompactionCompleted", { summary: "Turn 1: ran pytest, 1 failed.",
      first_kept_event_id: "e6", tokens_before: 5000 }],
  ["e12", "e11", "StateUpdated", { ops: [{ op: "set_task", text: "email" }] }],
  ["e13", "e12", "AssistantMessageCreated", { content: [{ type: "text", text: "Done." }], model: "m1",
      stop_reason: "end_turn" }],
  ["e14", "e9", "BranchCreated", { fork_event_id: "e9", kind: "what_if", name: "alt" }],
  ["e15", "e14", "UserPromptSubmitted", { text: "what if we try another way" }],
].map(([id, parent, type, payload], i) => ({
  id, session_id: "ses_t", seq: i + 1, ts: 1700000000000 + i, type, actor: "host",
  ...(parent ? { parent_id: parent } : {}), payload, payload_hash: h, prev_hash: h, hash: h,
}));

function shape(messages) {
  return messages.map((m) => {
    switch (m.role) {
      case "user": return `user:${m.content[0].text}`;
      case "assistant": return `assistant:${m.content.map((c) => c.type === "toolCall" ? `toolCall(${c.id},${c.name},${JSON.stringify(c.arguments)})` : c.type).join("+")}`;
      case "toolResult": return `toolResult:${m.toolCallId}:${m.toolName}:${m.isError ? "error" : "ok"}:${m.content[0].text}`;
      case "compactionSummary": return `summary:${m.summary}:${m.tokensBefore}`;
      default: return m.role;
    }
  });
}

function selfTest() {
  const dir = mkdtempSync(join(tmpdir(), "pi-peer-test-"));
  try {
    const events = readExport(SAMPLE.map((e) => JSON.stringify(e)).join("\n") + "\n");
    const mainLeaf = [
      "summary:Turn 1: ran pytest, 1 failed.:5000",
      "user:now the email case",
      'assistant:toolCall(c2,read,{"path":"a.py"})+toolCall(c3,bash,{"cmd":"false"})',
      "toolResult:c2:read:ok:def login(): ...",
      "toolResult:c3:bash:error:exit 1",
      "assistant:text",
    ];
    const forkLeaf = [
      "user:fix the login bug",
      'assistant:thinking+text+toolCall(c1,bash,{"cmd":"pytest"})',
      "toolResult:c1:bash:ok:1 failed",
      "user:now the email case",
      'assistant:toolCall(c2,read,{"path":"a.py"})+toolCall(c3,bash,{"cmd":"false"})',
      "toolResult:c2:read:ok:def login(): ...",
      "toolResult:c3:bash:error:exit 1",
      "user:what if we try another way",
    ];
    for (const others of ["custom", "skip"]) {
      const { text, entries, idOf } = convert(events, { others });
      assert.equal(entries, others === "custom" ? 15 : 10, `entries (${others})`);
      const file = join(dir, `${others}.jsonl`);
      writeFileSync(file, text);
      const sm = SessionManager.open(file, dir);
      assert.equal(sm.getHeader().cwd, "/repo");
      // The file's last entry is Pi's default leaf: the fork's prompt.
      assert.deepEqual(shape(sm.buildSessionContext().messages), forkLeaf, `fork leaf (${others})`);
      sm.branch(idOf.get("e13"));
      const ctx = sm.buildSessionContext();
      assert.deepEqual(shape(ctx.messages), mainLeaf, `main leaf (${others})`);
      assert.deepEqual(ctx.model, { provider: "ctxdb", modelId: "m1" });
      assert.equal(ctx.messages[ctx.messages.length - 1].stopReason, "stop");
      assert.equal(ctx.messages[2].stopReason, "toolUse");
      // Pi's own conversion for the provider accepts every message.
      assert.equal(convertToLlm(ctx.messages).length, mainLeaf.length);
      // The file was only read: no migration rewrote it.
      assert.equal(readFileSync(file, "utf8"), text);
      const m = measure(file, { runs: 3, warmups: 1, leafPiId: idOf.get("e13") });
      assert.equal(m.last.messages, mainLeaf.length);
    }
    console.error("pi_context self-test: ok (custom and skip; main and fork leaves)");
    console.log(JSON.stringify({ peer: PEER, version: piVersion(), self_test: "ok" }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- main

const USAGE = `usage: node pi_context.mjs --events EXPORT.ndjson [--runs N] [--warmups N]
                          [--session ID] [--leaf EVENT_ID] [--others custom|skip]
                          [--keep FILE]
       node pi_context.mjs --self-test`;

function parseArgs(argv) {
  const o = { runs: 10, warmups: 2, others: "custom" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value\n${USAGE}`);
      return argv[++i];
    };
    switch (a) {
      case "--events": o.events = next(); break;
      case "--runs": o.runs = Number(next()); break;
      case "--warmups": o.warmups = Number(next()); break;
      case "--session": o.session = next(); break;
      case "--leaf": o.leaf = next(); break;
      case "--others": o.others = next(); break;
      case "--keep": o.keep = next(); break;
      case "--self-test": o.selfTest = true; break;
      case "-h": case "--help": console.log(USAGE); process.exit(0);
      default: throw new Error(`unknown argument ${a}\n${USAGE}`);
    }
  }
  if (o.selfTest) return o;
  if (!o.events) throw new Error(`--events is required\n${USAGE}`);
  if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error("--runs must be an integer >= 1");
  if (!Number.isInteger(o.warmups) || o.warmups < 0) throw new Error("--warmups must be an integer >= 0");
  if (o.others !== "custom" && o.others !== "skip") throw new Error("--others is custom or skip");
  return o;
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.selfTest) return selfTest();
  const events = readExport(readFileSync(o.events, "utf8"), o.session);
  const t0 = process.hrtime.bigint();
  const { text, entries, idOf } = convert(events, { others: o.others });
  const convertMs = nsToMs(t0, process.hrtime.bigint());
  let leafPiId = null;
  if (o.leaf) {
    if (!idOf.has(o.leaf)) throw new Error(`--leaf ${o.leaf} is not an event of the session`);
    leafPiId = idOf.get(o.leaf);
    if (!leafPiId) throw new Error(`--leaf ${o.leaf} has no converted entry on its path`);
  }
  const dir = mkdtempSync(join(tmpdir(), "pi-peer-"));
  try {
    // A name of the shape Pi gives its own session files.
    const file = join(dir, `${iso(events[0]?.ts ?? 0).replace(/[:.]/g, "-")}_${events[0]?.session_id}.jsonl`);
    writeFileSync(file, text);
    if (o.keep) writeFileSync(o.keep, text);
    const m = measure(file, { runs: o.runs, warmups: o.warmups, leafPiId });
    console.log(JSON.stringify({
      peer: PEER, version: piVersion(), node: process.version,
      events: events.length, entries, others: o.others,
      leaf: o.leaf ?? events[events.length - 1]?.id ?? null,
      messages_in_context: m.last.messages,
      file_bytes: statSync(file).size, runs: o.runs, warmups: o.warmups,
      open_ms: summary(m.open), context_ms: summary(m.context), total_ms: summary(m.total),
      to_llm_ms: summary(m.toLlm), convert_ms: Math.round(convertMs * 1000) / 1000,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  console.error(`pi_context: ${err.message}`);
  process.exit(1);
}
