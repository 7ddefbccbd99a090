// transcript.hpp — other agents' session files read as ctxdb events
// (engine/transcript/). Each format's reader (claude_code.cpp, codex.cpp,
// pi.cpp) turns the bytes of one source file into drafts: the sessions the
// file holds and their events, in append order, as ctxdb_append takes them.
// The importer (importer.cpp) appends them, one transaction per file, and
// keeps what each file has given so far.
//
// A reader is a pure function of the bytes and the options: the same file
// gives the same drafts with the same ids, which is what makes an import
// idempotent and a grown file import only its new lines.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::transcript {

enum class Format { kClaudeCode, kCodex, kPi };

// "claude-code", "codex", "pi"; nullopt for another name.
std::optional<Format> format_named(std::string_view name);
std::string_view format_name(Format f);

// A session the file holds: the file's own first, then its subagents.
struct DraftSession {
  std::string id;                // the ctxdb session id, derived from the source's
  std::string create_json;       // session_create.schema.json: id, event_id, actor, ts, payload
  std::string parent_session_id; // "" or the ctxdb id of the session that spawned it
};

// One event for one of those sessions.
struct Draft {
  std::string session_id; // a DraftSession's id
  std::string event_json; // event.schema.json; its payload carries "provenance"
  int64_t first_line = 0; // the source lines it came from (1-based)
  int64_t last_line = 0;
};

struct Parsed {
  std::vector<DraftSession> sessions;
  std::vector<Draft> events;
  // Whole lines read. A last line with no newline that is not a complete
  // JSON value (a writer mid-line) is not consumed: it waits for the next pass.
  int64_t lines_consumed = 0;
  int64_t bytes_consumed = 0;
  // Source record types with no core meaning, kept as custom events, by count.
  std::map<std::string, int64_t> unknown;
};

struct ParseOptions {
  std::string file; // the path recorded in provenance
  // Lines 1..resume_after_line were imported by an earlier pass: no draft
  // may group lines on both sides of it (a message still growing then is
  // two events), and the importer drops the drafts that end at or before it.
  int64_t resume_after_line = 0;
  // false while following a live file: a trailing group that may still
  // grow (an assistant message whose next block has not been written) is
  // held back and not consumed.
  bool final = true;
};

// Throws Error(kInvalidArg) "<file>:<line>: <what>" for a malformed line
// (kInvalidJson / kInvalidUtf8 for text that is not JSON / not UTF-8, with
// the same prefix).
Parsed parse_claude_code(std::string_view bytes, const ParseOptions &options);
Parsed parse_codex(std::string_view bytes, const ParseOptions &options);
Parsed parse_pi(std::string_view bytes, const ParseOptions &options);

} // namespace ctxdb::transcript
