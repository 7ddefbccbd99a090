#include "provider/answer.hpp"

#include "error.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb::provider {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

void write_block(json::JsonWriter &w, const Block &b, const char *family) {
  w.begin_object();
  switch (b.kind) {
  case Block::kText: w.field("type", "text").field("text", b.text); break;
  case Block::kRefusal: w.field("type", "refusal").field("text", b.text); break;
  case Block::kToolCall:
    w.field("type", "tool_call").field("id", b.id).field("name", b.name).raw_field("args", b.args);
    break;
  case Block::kImage:
    w.field("type", "image").field("data", b.data).field("mime_type", b.mime_type);
    break;
  case Block::kRedactedThinking:
    w.field("type", "thinking").key("redacted").boolean(true).field("data", b.data);
    break;
  case Block::kThinking:
    w.field("type", "thinking").field("text", b.text);
    if (!b.id.empty() || b.encrypted_content) {
      // A Responses reasoning item: replayed with its summary, by id, or by
      // its encrypted_content alone (Codex's rollouts keep no reasoning id).
      if (!b.id.empty()) w.field("id", b.id);
      w.key("summary").begin_array();
      for (const std::string &s : b.summary) w.value(s);
      w.end_array();
    }
    if (b.encrypted_content) w.field("encrypted_content", *b.encrypted_content);
    break;
  }
  if (b.signature) w.field("signature", *b.signature);
  if (b.tagged || b.kind == Block::kThinking || b.kind == Block::kRedactedThinking)
    w.field("provider", family);
  w.end_object();
}

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

} // namespace

std::string write_payload(const Answer &a) {
  json::JsonWriter w(256 + a.blocks.size() * 128);
  w.begin_object().key("content").begin_array();
  for (const Block &b : a.blocks) {
    // An empty text (a stream's block that never got a delta) says nothing.
    bool empty = (b.kind == Block::kText || b.kind == Block::kRefusal) && b.text.empty();
    if (!empty || b.signature) write_block(w, b, a.family);
  }
  w.end_array();
  if (!a.model.empty()) w.field("model", a.model);
  if (a.stop_reason) w.field("stop_reason", *a.stop_reason);
  if (a.usage) {
    const Usage &u = *a.usage;
    w.key("usage")
        .begin_object()
        .field("input_tokens", u.input)
        .field("cache_read_tokens", u.cache_read)
        .field("cache_write_tokens", u.cache_write)
        .field("output_tokens", u.output)
        .field("reasoning_tokens", u.reasoning)
        .raw_field("provider_usage", u.provider)
        .end_object();
  }
  w.field("provider", a.family).field("response_id", a.response_id);
  w.end_object();
  return w.take();
}

std::string join_path(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  std::string s(path);
  s += '.';
  s += key;
  return s;
}

std::string index_path(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

void missing(std::string_view what, std::string_view path) {
  throw Error(Code::kInvalidArg, std::string(what) + ": " + std::string(path) + " is missing");
}

void wrong_type(std::string_view what, std::string_view path, const char *type) {
  throw Error(Code::kInvalidArg, std::string(what) + ": " + std::string(path) + " must be " + type);
}

std::optional<element> field(element o, std::string_view key) {
  element v;
  if (o.at_key(key).get(v) || v.is_null()) return std::nullopt;
  return v;
}

simdjson::dom::element need_object(std::string_view what, element o, std::string_view key,
                                   std::string_view path) {
  auto v = field(o, key);
  if (!v) missing(what, join_path(path, key));
  if (!v->is_object()) wrong_type(what, join_path(path, key), "an object");
  return *v;
}

simdjson::dom::array need_array(std::string_view what, element o, std::string_view key,
                                std::string_view path) {
  auto a = opt_array(what, o, key, path);
  if (!a) missing(what, join_path(path, key));
  return *a;
}

std::optional<simdjson::dom::array> opt_array(std::string_view what, element o,
                                              std::string_view key, std::string_view path) {
  auto v = field(o, key);
  if (!v) return std::nullopt;
  if (!v->is_array()) wrong_type(what, join_path(path, key), "an array");
  return v->get_array().value();
}

std::string_view need_string(std::string_view what, element o, std::string_view key,
                             std::string_view path) {
  auto s = opt_string(what, o, key, path);
  if (!s) missing(what, join_path(path, key));
  return *s;
}

std::optional<std::string_view> opt_string(std::string_view what, element o, std::string_view key,
                                           std::string_view path) {
  auto v = field(o, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(what, join_path(path, key), "a string");
  return v->get_string().value();
}

int64_t count(std::string_view what, element o, std::string_view key, std::string_view path) {
  auto v = field(o, key);
  if (!v) return 0;
  int64_t n;
  if (v->get_int64().get(n) || n < 0) wrong_type(what, join_path(path, key), "an integer >= 0");
  return n;
}

bool opt_bool(std::string_view what, element o, std::string_view key, std::string_view path) {
  auto v = field(o, key);
  if (!v) return false;
  bool b;
  if (v->get_bool().get(b)) wrong_type(what, join_path(path, key), "a boolean");
  return b;
}

std::string arguments_json(std::string_view arguments) {
  simdjson::dom::parser parser;
  element doc;
  if (!parser.parse(arguments).get(doc) && doc.is_object()) return json::canonical(doc);
  std::string s;
  json::append_quoted(s, arguments);
  return s;
}

int64_t minus_cached(std::string_view what, int64_t input, int64_t cached, std::string_view path) {
  if (cached > input)
    throw Error(Code::kInvalidArg, std::string(what) + ": " + std::string(path) +
                                       " counts more cached tokens than input tokens");
  return input - cached;
}

Usage openai_usage(std::string_view what, element u, std::string_view input_key,
                   std::string_view output_key) {
  Usage r;
  std::string in_details = std::string(input_key) + "_details";
  std::string out_details = std::string(output_key) + "_details";
  int64_t input = count(what, u, input_key, "usage");
  if (auto d = field(u, in_details))
    r.cache_read = count(what, *d, "cached_tokens", join_path("usage", in_details));
  r.input = minus_cached(what, input, r.cache_read,
                         join_path(join_path("usage", in_details), "cached_tokens"));
  r.output = count(what, u, output_key, "usage");
  if (auto d = field(u, out_details))
    r.reasoning = count(what, *d, "reasoning_tokens", join_path("usage", out_details));
  r.provider = json::canonical(u);
  return r;
}

void for_each_event(std::string_view what, std::string_view ndjson,
                    const std::function<void(element, int64_t)> &fn) {
  simdjson::dom::parser parser;
  int64_t line_no = 0;
  while (!ndjson.empty()) {
    size_t nl = ndjson.find('\n');
    std::string_view line = trim(ndjson.substr(0, nl));
    ndjson = nl == std::string_view::npos ? std::string_view{} : ndjson.substr(nl + 1);
    ++line_no;
    if (line.starts_with("data:")) line = trim(line.substr(5));
    if (line.empty() || line == "[DONE]" || line.starts_with("event:") || line.starts_with(":"))
      continue;
    std::string where = std::string(what) + " line " + std::to_string(line_no);
    element doc = json::parse(parser, line, where);
    if (!doc.is_object())
      throw Error(Code::kInvalidArg, where + ": an event must be a JSON object");
    fn(doc, line_no);
  }
}

} // namespace ctxdb::provider
