#include "log/anchor.hpp"

#include "error.hpp"

namespace ctxdb::log {

std::string anchor_json(store::Store &, simdjson::dom::element) {
  throw Error(Code::kInternal, "anchors are not built yet");
}

AnchorCheck check_anchor(store::Store &, simdjson::dom::element) {
  throw Error(Code::kInternal, "anchors are not built yet");
}

} // namespace ctxdb::log
