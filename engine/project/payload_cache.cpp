#include "project/payload_cache.hpp"

#include "json/parse.hpp"

namespace ctxdb::project {

simdjson::dom::element PayloadCache::get(const log::Event &e) {
  if (e.pos == pos_ && e.pos != 0) return doc_;
  pos_ = -1; // a failed parse must not leave the previous event cached
  // Most payload strings have room for simdjson's padding: then it parses
  // them in place instead of copying each one.
  bool padded = e.payload.capacity() - e.payload.size() >= simdjson::SIMDJSON_PADDING;
  if (parser_.parse(e.payload.data(), e.payload.size(), !padded).get(doc_))
    doc_ = json::parse(parser_, e.payload, e.type + " event '" + e.id + "' payload"); // throws
  pos_ = e.pos;
  return doc_;
}

} // namespace ctxdb::project
