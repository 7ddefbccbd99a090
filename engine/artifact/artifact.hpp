// artifact.hpp — what an artifact is to its callers: its kind, the
// metadata a put carries, and what listing and info report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::artifact {

enum class Kind { kFile, kDiff, kToolOutput, kCommandLog, kImage, kDataset, kUrlSnapshot, kOther };

std::string_view kind_name(Kind k);
// Throws kInvalidArg naming the kinds there are.
Kind parse_kind(std::string_view name);

// What a put records beside the bytes. kind, mime and name describe the
// content the first time it is stored; event_id (when not empty) adds a
// reference from that event, with role, on every put.
struct Meta {
  Kind kind = Kind::kOther;
  std::string mime;
  std::string name;
  std::string event_id;
  std::string role = "output";
  // When the artifact was first stored (ms): an import keeps the source's;
  // otherwise the put's own time.
  std::optional<int64_t> created_ts;
};

struct Ref {
  std::string event_id;
  std::string role;
  std::string session_id; // empty while the event is not (yet) in the log
};

struct Info {
  std::string id;
  int64_t raw_size = 0;
  int64_t stored_size = 0;
  int64_t chunk_size = 0;
  int64_t chunk_count = 0;
  int64_t line_count = 0;
  Kind kind = Kind::kOther;
  std::string mime;
  std::string name;
  int64_t created_ts = 0;
  std::vector<Ref> refs;
};

inline constexpr std::string_view kIdPrefix = "art_";

// The id the bytes are stored under: kIdPrefix + their hex SHA-256.
std::string content_id(std::string_view bytes);

// Whether `id` has the form of an artifact id (kIdPrefix and 64 lowercase
// hex digits); an event id may start with kIdPrefix too.
bool is_content_id(std::string_view id);

} // namespace ctxdb::artifact
