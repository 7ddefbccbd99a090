#include "log/event.hpp"

#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb::log {

namespace {
// The fields every form of an event shares, in their fixed order.
void header_fields(json::JsonWriter &w, const Event &e) {
  w.field("id", e.id)
      .field("session_id", e.session_id)
      .field("seq", e.seq)
      .field("ts", e.ts)
      .field("type", e.type)
      .field("actor", e.actor);
  if (e.parent_id) w.field("parent_id", *e.parent_id);
  if (e.run_id) w.field("run_id", *e.run_id);
  if (e.causality) w.raw_field("causality", *e.causality);
  if (e.visibility) w.raw_field("visibility", *e.visibility);
}
} // namespace

std::string to_json(const Event &e) {
  json::JsonWriter w;
  w.begin_object();
  header_fields(w, e);
  if (!e.branch_id.empty()) w.field("branch_id", e.branch_id);
  w.raw_field("payload", e.payload)
      .field("payload_hash", util::to_hex(e.payload_hash))
      .field("prev_hash", util::to_hex(e.prev_hash))
      .field("hash", util::to_hex(e.hash))
      .end_object();
  return w.take();
}

std::string canonical_header(const Event &e) {
  json::JsonWriter w;
  w.begin_object().field("v", int64_t{1});
  header_fields(w, e);
  w.end_object();
  return w.take();
}

util::Digest chain_hash(const Event &e) {
  thread_local util::Sha256 hasher;
  return hasher.update(e.prev_hash).update(canonical_header(e)).update(e.payload_hash).finish();
}

bool is_sensitive(simdjson::dom::parser &parser, std::string_view visibility) {
  if (visibility.empty()) return false;
  simdjson::dom::element v = json::parse(parser, visibility, "visibility");
  std::string_view level;
  if (v.get(level) && v["level"].get(level)) {
    bool flag = false;
    return !v["sensitive"].get(flag) && flag;
  }
  return level == "sensitive" || level == "private" || level == "secret";
}

} // namespace ctxdb::log
