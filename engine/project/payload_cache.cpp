#include "project/payload_cache.hpp"

#include "json/parse.hpp"

namespace ctxdb::project {

simdjson::dom::element PayloadCache::get(const log::Event &e) {
  if (e.parsed_payload) return *e.parsed_payload; // appended: the log parsed it
  if (valid_ && parsed_ == e.payload) return doc_;
  valid_ = false;
  doc_ = json::parse_payload(parser_, e.payload, e.id);
  parsed_ = e.payload;
  valid_ = true;
  return doc_;
}

std::string_view string_field(simdjson::dom::element obj, const char *key) {
  std::string_view s;
  if (obj[key].get(s)) return {};
  return s;
}

void bind_field(SQLite::Statement &q, int index, simdjson::dom::element obj, const char *key) {
  simdjson::dom::element v;
  if (obj[key].get(v))
    q.bind(index); // NULL
  else if (v.is_string())
    store::bind_text(q, index, v.get_string().value());
  else
    q.bind(index, v.get_int64().value());
}

} // namespace ctxdb::project
