#include "artifact/verify.hpp"

#include "error.hpp"

namespace ctxdb::artifact {

VerifyReport verify_artifacts(store::Store &, VerifyMode mode) {
  if (mode == VerifyMode::kNone) return {};
  throw Error(Code::kInternal, "artifact verification is not built yet");
}

} // namespace ctxdb::artifact
