#include "compile/segment.hpp"

#include "util/sha256.hpp"

namespace ctxdb::compile {

std::string text_content(std::string_view text) {
  json::JsonWriter w;
  w.begin_array().begin_object().field("type", "text").field("text", text).end_object().end_array();
  return w.take();
}

void write_sources(json::JsonWriter &w, const std::vector<Source> &sources) {
  w.key("sources").begin_array();
  for (const Source &s : sources)
    w.begin_object().field("type", s.type).field("id", s.id).end_object();
  w.end_array();
}

void seal(Segment &s) {
  // One hasher per thread: a compile seals hundreds of small segments, and
  // an OpenSSL context per segment cost as much as hashing it.
  thread_local util::Sha256 h;
  thread_local std::string head;
  head.assign(s.role).append(1, '\n'); // one update for both
  h.update(head).update(s.content);
  s.hash = util::to_hex("sha256:", h.finish());
}

void write_segment(json::JsonWriter &w, const Segment &s) {
  w.begin_object()
      .field("id", s.id)
      .field("kind", s.kind)
      .field("priority", int64_t(s.priority))
      .field("role", s.role)
      .raw_field("content", s.content)
      .field("tokens", s.tokens)
      .field("reason", s.reason);
  write_sources(w, s.sources);
  if (s.turn >= 0) w.field("turn", s.turn);
  w.field("hash", s.hash).end_object();
}

void write_excluded(json::JsonWriter &w, const Excluded &x) {
  w.begin_object().field("id", x.id).field("kind", x.kind).field("priority", int64_t(x.priority));
  if (x.tokens) w.field("tokens", *x.tokens);
  w.field("reason", x.reason);
  write_sources(w, x.sources);
  w.end_object();
}

} // namespace ctxdb::compile
