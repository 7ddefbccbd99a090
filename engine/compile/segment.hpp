// segment.hpp — the pieces of a bundle (schema/json/bundle.schema.json): a
// segment the model sees, a candidate left out, and how both are written.
#pragma once

#include "json/json_writer.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ctxdb::compile {

// Where a segment came from: type is event | artifact | compaction |
// request | state.
struct Source {
  const char *type;
  std::string id;
};

struct Segment {
  std::string id; // stable across compiles, so prefixes can be compared
  const char *kind = "";
  int priority = 0; // DESIGN §5: 0 never dropped … 3 dropped first
  const char *role = "user";
  std::string content; // a JSON array of typed blocks
  int64_t tokens = 0;
  std::string reason;
  std::vector<Source> sources;
  int64_t turn = -1; // message segments: 0 is the newest turn
  std::string hash;  // sha256:<hex> of role and content, set when written
};

struct Excluded {
  std::string id;
  const char *kind = "";
  int priority = 0;
  std::optional<int64_t> tokens; // unknown for history never read
  std::string reason;
  std::vector<Source> sources;
};

struct RedactionNote {
  std::string segment_id;
  std::string rule;
  int64_t count = 0;
};

// One block [{"type":"text","text":…}] as a content array.
std::string text_content(std::string_view text);

void write_sources(json::JsonWriter &w, const std::vector<Source> &sources);
// Sets s.hash from its role and content.
void seal(Segment &s);
void write_segment(json::JsonWriter &w, const Segment &s);
void write_excluded(json::JsonWriter &w, const Excluded &x);

} // namespace ctxdb::compile
