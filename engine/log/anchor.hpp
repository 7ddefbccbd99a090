// anchor.hpp — a small digest of the whole file's history that a host
// keeps outside the file, and the proof that the file still extends it.
//
// In the manner of a transparency log's signed tree head: a Merkle root
// over every event's hash in the global append order, the count it
// covers, and each chain's head. A file extends an anchor when its first
// `events` events (in append order) have that root and every named head
// is still in its chain at that seq with that hash.
#pragma once

#include "store/store.hpp"

#include <simdjson.h>

#include <cstdint>
#include <string>

namespace ctxdb::log {

// The anchor object (ctxdb_anchor in ctxdb.h); options as
// anchor_options.schema.json, already validated.
std::string anchor_json(store::Store &store, simdjson::dom::element options);

struct AnchorCheck {
  bool ok = true;
  int64_t events = 0; // the events the anchor covers
  std::string problem;
};

// Checks that the file extends `anchor` (an object as anchor_json wrote
// it). A malformed anchor is Error kInvalidArg naming the field.
AnchorCheck check_anchor(store::Store &store, simdjson::dom::element anchor);

} // namespace ctxdb::log
