// reader_common.hpp — what every transcript reader (claude_code.cpp,
// codex.cpp, pi.cpp) does the same way: JSONL lines with a torn last line
// left for the next pass, errors that name file:line, ids made valid for
// ctxdb, the provenance object every draft carries, and the event JSON
// around a payload.
#pragma once

#include "json/json_writer.hpp"

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::transcript {

// One line of a JSONL file, without its newline (nor a "\r" before it).
struct Line {
  std::string_view text;
  int64_t number = 0; // 1-based
  int64_t end = 0;    // byte offset just past the line and its newline
};

struct Lines {
  std::vector<Line> lines; // blank lines left out (their numbers are skipped)
  int64_t consumed_lines = 0;
  int64_t consumed_bytes = 0;
};

// The file's whole lines. A last line with no newline counts only when it
// parses as a complete JSON value; otherwise a writer is mid-line and it
// is not consumed (Parsed.lines_consumed / bytes_consumed stop before it).
Lines split_lines(std::string_view bytes);

// "<file>:<line>"
std::string where(std::string_view file, int64_t line);
// Throws Error(kInvalidArg) "<file>:<line>: <what>".
[[noreturn]] void line_error(std::string_view file, int64_t line, std::string_view what);
// The line parsed; kInvalidJson / kInvalidUtf8 "<file>:<line>: …" when it
// is not JSON, kInvalidArg when it is not an object. The element lives
// until the parser's next parse.
simdjson::dom::element parse_line(simdjson::dom::parser &parser, std::string_view file,
                                  const Line &line);

// An id valid for ctxdb (^[A-Za-z0-9_.:-]{1,128}$): any other character
// becomes "_"; an id longer than 128 keeps its first 111 characters, "-"
// and 16 hex digits of its SHA-256, so long ids stay distinct.
std::string sanitize_id(std::string_view raw);

// payload.provenance: where a draft came from.
struct Provenance {
  std::string_view format;    // "claude-code", "codex", "pi"
  std::string_view file;      // ParseOptions.file
  int64_t line = 0;           // first line
  int64_t last_line = 0;      // written when > line
  std::string_view record_id; // the source's own id, written when not empty
};

// The payload object (compact JSON "{…}") with "provenance" added last.
std::string with_provenance(std::string_view payload_object, const Provenance &p);

struct EventHead {
  std::string id;
  std::string type;
  std::string actor;
  std::optional<int64_t> ts; // ms since the epoch; absent: the engine's clock
  std::string parent_id;     // "" for none
};

// event.schema.json: {"id","type","actor","ts"?,"parent_id"?,"payload"}
// with the provenance added to the payload.
std::string event_json(const EventHead &h, std::string_view payload_object, const Provenance &p);

// session_create.schema.json: {"id","event_id","actor","ts"?,"payload"},
// the payload (SessionStarted's) with the provenance added.
std::string session_create_json(std::string_view session_id, std::string_view event_id,
                                std::string_view actor, std::optional<int64_t> ts,
                                std::string_view payload_object, const Provenance &p);

// "<format>.<record type>", valid as an event type (other characters "_").
std::string custom_type(std::string_view format, std::string_view record_type);
// A record with no core meaning, kept as it was: type custom_type(format,
// record_type), actor format, payload {"record": <record>, "provenance"}.
std::string custom_event_json(std::string_view id, std::string_view format,
                              std::string_view record_type, std::optional<int64_t> ts,
                              std::string_view parent_id, simdjson::dom::element record,
                              const Provenance &p);

// An image block as a prompt, a context event or a tool result carries it
// inline: the engine stores its base64 `data` as an artifact on append.
void write_image_block(json::JsonWriter &w, std::string_view base64, std::string_view mime_type);

// An ISO 8601 / RFC 3339 time ("2025-01-02T03:04:05.678Z", "+01:00"
// offsets) in ms since the epoch; nullopt for anything else.
std::optional<int64_t> iso8601_ms(std::string_view s);

} // namespace ctxdb::transcript
