#include "project/payload_cache.hpp"

#include "json/parse.hpp"

namespace ctxdb::project {

simdjson::dom::element PayloadCache::get(const log::Event &e) {
  if (e.pos != pos_ || e.pos == 0) {
    pos_ = -1; // a failed parse must not leave the previous event cached
    doc_ = json::parse(parser_, e.payload, e.type + " event '" + e.id + "' payload");
    pos_ = e.pos;
  }
  return doc_;
}

} // namespace ctxdb::project
