// verify.hpp — the artifact half of verify: every stored chunk and every
// artifact checked against the hashes that name them.
//
// "quick" re-hashes every chunk's stored bytes; "full" also decompresses
// each chunk and re-hashes every artifact's whole content against its id.
#pragma once

#include "store/store.hpp"

#include <cstdint>
#include <string>

namespace ctxdb::artifact {

enum class VerifyMode { kNone, kQuick, kFull };

struct VerifyReport {
  bool ok = true;
  VerifyMode mode = VerifyMode::kNone;
  int64_t artifacts = 0;
  int64_t chunks = 0;
  int64_t bytes = 0; // bytes hashed
  // The first broken artifact or chunk, when !ok.
  std::string artifact_id; // empty for a chunk no artifact names
  std::string chunk;       // the chunk's hash (hex), empty for a whole-artifact problem
  std::string problem;
};

// Reads inside one read transaction: a consistent snapshot of the file.
VerifyReport verify_artifacts(store::Store &store, VerifyMode mode);

} // namespace ctxdb::artifact
