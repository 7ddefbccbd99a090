// verify.hpp — the artifact half of verify: every stored chunk and every
// artifact checked against the hashes that name them.
//
// "quick" re-hashes every chunk's stored bytes against its SHA-256 (a
// chunk written before schema 10 hashes its raw bytes, so it is decoded
// too) and checks each artifact's chunk list against its row: no chunk
// missing, sizes adding up, no chunk without its artifact. "full" also
// decompresses every chunk and re-hashes every artifact's whole content
// against its id, and recounts its lines: what a reader would get back.
#pragma once

#include "store/store.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace ctxdb::artifact {

enum class VerifyMode { kNone, kQuick, kFull };

std::string_view mode_name(VerifyMode m);
// "none", "quick" or "full" (the schema has checked it).
VerifyMode parse_mode(std::string_view name);

struct VerifyReport {
  bool ok = true;
  VerifyMode mode = VerifyMode::kNone;
  int64_t artifacts = 0;
  int64_t chunks = 0;
  int64_t bytes = 0; // stored bytes hashed
  // The first broken artifact, when !ok.
  std::string artifact_id; // "<artifact no N>" for chunks no artifact owns
  int64_t chunk = -1;      // the chunk's index, -1 for a whole-artifact problem
  std::string problem;
};

// Reads inside one read transaction: a consistent snapshot of the file.
VerifyReport verify_artifacts(store::Store &store, VerifyMode mode);

} // namespace ctxdb::artifact
