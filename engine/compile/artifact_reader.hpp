// artifact_reader.hpp — how the adapters reach an image's bytes: the bundle
// holds only artifact ids (no pixels), and an adapter that emits an image
// in its provider's native shape reads the artifact through this.
#pragma once

#include <string>
#include <string_view>

namespace ctxdb::compile {

class ArtifactReader {
public:
  virtual ~ArtifactReader() = default;
  // The artifact's whole bytes. Throws ctxdb::Error kNotFound naming an id
  // that is not stored (kInvalidArg for one that cannot be an id).
  virtual std::string read(std::string_view artifact_id) const = 0;
};

} // namespace ctxdb::compile
