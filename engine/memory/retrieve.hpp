// retrieve.hpp — memory retrieval (DESIGN §7): the memories a query finds
// in the scopes it names, readable by its agent, valid and unexpired at its
// `now`, ranked and fitted to a token budget.
//
// Candidates: the matches in memory_fts (bm25 over content and keywords,
// keywords weighed twice) of the requested scopes that pass the filters
// (readers, sensitivity, validity and expiry); the kCandidates best by bm25
// are ranked by the blend below. A query with no words ranks every memory
// of the scopes by the blend without its text part (the best kCandidates
// by priority, then recency).
//
// How (bench/memory.cpp): each scope owns a range of memory_fts rowids
// (scope_rows.hpp), so FTS5 scores the matches of the requested scopes
// only, one query per scope. Each match is joined to its memory_rank row
// (schema 12: a compact copy of what the filters and the blend read, with
// the row's length for bm25), so the query itself drops the matches the
// filters exclude and returns the rest ready to blend; the matches are
// merged by bm25 and blended only while one not yet blended could still
// outrank the best one blended, its bound being its text part with every
// other part at 1. Only the memories taken are read in full. bm25 is
// ctxdb_bm25 (bm25.hpp): the same scores, with the table's statistics
// counted once for all the scopes (and kept on the connection for later
// retrievals until memory_fts changes). All of it reads one snapshot (the
// caller's transaction, or one of its own).
//
// The blend (every part in [0, 1]):
//
//   score = 0.55·text + 0.15·priority + 0.15·confidence + 0.15·recency
//   text     = s / (1 + s), s = -bm25 (bm25 is <= 0; 0 without a query)
//   priority = priority / 100
//   recency  = 0.5 ^ (age / 30 days), age = now - valid_from (the current
//              version's event ts), 0 when the version is newer than now
//
// Ties go to the smaller memory id. The ranked memories are taken in order
// while they fit the budget (one that does not fit is excluded with reason
// "budget" and the next is tried) until `limit` are included. Usage is not
// part of the score: a retrieval is a function of the log and `now` alone.
//
// Query text: plain words by default (search_text.hpp), never an error.
#pragma once

#include "store/store.hpp"
#include "token/counter.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::memory {

inline constexpr int64_t kCandidates = 200;

struct ScopeRef {
  std::string scope;
  std::string id; // empty for global
};

enum class Match { kAny, kAll, kFts };

struct Retrieved;

struct Query {
  std::string text;
  Match match = Match::kAny;
  std::vector<ScopeRef> scopes;
  std::optional<std::string> agent; // none: only memories without readers
  int64_t now = 0;                  // ms
  std::optional<int64_t> budget;    // tokens; none: no limit
  int64_t limit = 20;
  bool allow_sensitive = false;
  bool record_usage = true; // for Engine::memory_retrieve; retrieve() never writes
  // What a memory costs against `budget`, in tokens; none: its content's
  // (Retrieved::tokens). The compiler counts the segment a memory becomes,
  // header and framing included, so what it is given fits its share.
  std::function<int64_t(const Retrieved &)> cost;
};

struct Retrieved {
  std::string memory_id;
  int64_t version = 0;
  std::string scope, scope_id, kind, content;
  std::vector<std::string> source_refs;
  std::string event_id; // the event that wrote this version
  double score = 0, text = 0, priority = 0, confidence = 0, recency = 0;
  int64_t tokens = 0; // of content, by the counter given
  int64_t valid_from = 0;
  std::optional<int64_t> expires_at;
  bool sensitive = false;
};

struct Excluded {
  std::string memory_id;
  int64_t tokens = 0;
  double score = 0;
  std::string reason; // "budget"
};

struct Retrieval {
  std::vector<Retrieved> included; // best first
  std::vector<Excluded> excluded;
  int64_t used_tokens = 0;
  std::string fts_query;  // the MATCH expression run ("" without words)
  bool fell_back = false; // a Match::kFts query that was not valid FTS5 syntax
  // Query words whose rows in the whole index were counted for bm25 (0:
  // the connection kept every count from an earlier retrieval: bm25.hpp).
  int64_t phrases_counted = 0;
};

// Reads only: run it inside the caller's read transaction if it has one.
Retrieval retrieve(store::Store &store, const Query &q, const token::Counter &counter);

// Counts the included memories as used at `now` (memory_usage), in a
// write transaction of its own.
void record_usage(store::Store &store, const Retrieval &r, int64_t now);

// A query from memory_query.schema.json JSON; now defaults to the clock.
Query parse_query(std::string_view json);

// memory_retrieval.schema.json.
std::string to_json(const Retrieval &r, const Query &q, std::string_view counter_name);

} // namespace ctxdb::memory
