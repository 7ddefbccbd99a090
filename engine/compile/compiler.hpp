// compiler.hpp — the context compiler (DESIGN §5): from the log and its
// projections, the smallest sufficient input for a model's next call,
// within a token budget, every segment explained.
//
// Passes: collect (instructions, tools, the latest compaction's summary,
// the state, the conversation after the compaction's cut, newest first) →
// redact (every string of every segment, as it is collected) → rank (the
// priority tiers of DESIGN §5) → fit (P0 whole or kBudget; P1 summary,
// plan and files, then the recent turns newest first, whole or split at a
// closed tool pair; P2 decisions, facts and retrieved memories; P3 older turns with their tool
// outputs pruned to previews) → order (instructions, tools, the summary,
// the conversation oldest first ending on the request, then the latest
// turn's context: consecutive compiles share the whole previous
// conversation as their prefix) → explain (reasons, sources, what was left
// out and why, tokens per kind, the prefix shared with the last bundle).
//
// Every tool call leaves closed (compile::History): a call the
// conversation moved on from gets a synthetic cancelled result or, by
// policy, leaves with its call; a call still running in the last turn is
// kConflict unless the request gives its result; a branch ending on a
// finished answer is kConflict unless the request has a new request, tool
// results, or asks for a continuation.
//
// A compile only reads: it sees one snapshot of the file and changes no
// table. Its cost follows what it considers — the turns that fit and one
// more — not the length of the session.
#pragma once

#include "artifact/artifact_store.hpp"
#include "compile/request.hpp"
#include "log/event_log.hpp"
#include "memory/retrieve.hpp"
#include "project/compactions.hpp"
#include "project/context_builds.hpp"
#include "project/state.hpp"
#include "store/store.hpp"
#include "token/counter.hpp"

#include <string>

namespace ctxdb::compile {

// What a compile reads: the projections of one open database.
struct Sources {
  store::Store &store;
  log::EventLog &log;
  project::State &state;
  project::Compactions &compactions;
  project::ContextBuilds &builds;
  const token::Counter &counter;
  // Where images are read for their size (their first bytes); without one
  // an image counts as the most any provider charges.
  artifact::ArtifactStore *artifacts = nullptr;
};

struct Compiled {
  std::string bundle; // canonical bundle JSON (bundle.schema.json)
  std::string branch_id;
  std::string leaf_event_id;
  // The ContextBuilt payload recording this bundle: its hash, tokens and
  // segment ids and hashes, never the text. Empty unless the request
  // says record.
  std::string record_payload;
  // The memories retrieved (those in the bundle count as used: the caller
  // records it after the compile, outside its read snapshot).
  memory::Retrieval memories;
  int64_t memories_now = 0;
};

// A compaction's summary as the text a bundle carries: a plain string as
// is; a structured summary (compaction_summary.schema.json) section by
// section with titles, a bullet per item; other fields generically.
std::string summary_text(simdjson::dom::element summary);

// Compiles a parsed request. kNotFound for an unknown session, branch or
// leaf event; kBudget when the never-dropped material alone exceeds the
// available tokens (the message gives both sizes); kConflict for a call of
// the last turn without a result, or an end with nothing to answer (each
// message names the call or the event); kInvalidArg for a tool result that
// answers no call waiting in the last turn.
Compiled compile(Sources &sources, const Request &request);

} // namespace ctxdb::compile
