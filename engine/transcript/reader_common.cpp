#include "transcript/reader_common.hpp"

#include "error.hpp"
#include "util/sha256.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <cstring>

namespace ctxdb::transcript {

namespace {

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

bool complete_json(std::string_view s) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  return !parser.parse(s.data(), s.size()).get(e);
}

bool id_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == ':' || c == '-';
}

constexpr size_t kMaxId = 128;

// Civil date to days since 1970-01-01 (Howard Hinnant's algorithm).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// n digits at s[pos]; -1 when they are not all digits.
int64_t digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

} // namespace

Lines split_lines(std::string_view bytes) {
  Lines out;
  size_t pos = 0;
  int64_t number = 0;
  while (pos < bytes.size()) {
    size_t nl = bytes.find('\n', pos);
    bool torn_candidate = nl == std::string_view::npos;
    size_t stop = torn_candidate ? bytes.size() : nl;
    std::string_view text = bytes.substr(pos, stop - pos);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (torn_candidate && !blank(text) && !complete_json(text)) break;
    ++number;
    size_t end = torn_candidate ? bytes.size() : nl + 1;
    if (!blank(text)) out.lines.push_back({text, number, static_cast<int64_t>(end)});
    out.consumed_lines = number;
    out.consumed_bytes = static_cast<int64_t>(end);
    pos = end;
  }
  return out;
}

std::string where(std::string_view file, int64_t line) {
  return std::string(file) + ":" + std::to_string(line);
}

void line_error(std::string_view file, int64_t line, std::string_view what) {
  throw Error(Code::kInvalidArg, where(file, line) + ": " + std::string(what));
}

simdjson::dom::element parse_line(simdjson::dom::parser &parser, std::string_view file,
                                  const Line &line) {
  simdjson::dom::element e = json::parse(parser, line.text, where(file, line.number));
  if (!e.is_object())
    line_error(file, line.number,
               std::string("a record must be a JSON object, not ") + json::type_name(e));
  return e;
}

std::string sanitize_id(std::string_view raw) {
  if (raw.empty()) return "_";
  std::string out(raw);
  for (char &c : out)
    if (!id_char(c)) c = '_';
  if (out.size() <= kMaxId) return out;
  std::string hash = util::to_hex(util::sha256(raw)).substr(0, 16);
  return out.substr(0, kMaxId - 1 - hash.size()) + "-" + hash;
}

namespace {

// Appends the payload object with "provenance" added as its last field:
// one copy of the payload, however large.
void append_with_provenance(std::string &out, std::string_view payload_object,
                            const Provenance &p) {
  // payload_object is compact JSON from a writer: "{…}" with no trailing space.
  if (payload_object.size() < 2 || payload_object.front() != '{' || payload_object.back() != '}')
    throw Error(Code::kInternal, "a draft's payload is not a JSON object");
  json::JsonWriter w(128 + p.file.size() + p.record_id.size());
  w.begin_object().field("format", p.format).field("file", p.file).field("line", p.line);
  if (p.last_line > p.line) w.field("last_line", p.last_line);
  if (!p.record_id.empty()) w.field("record_id", p.record_id);
  w.end_object();
  out.reserve(out.size() + payload_object.size() + w.str().size() + 16);
  out.append(payload_object.substr(0, payload_object.size() - 1));
  if (payload_object.size() > 2) out += ',';
  out += "\"provenance\":";
  out += w.str();
  out += '}';
}

} // namespace

std::string with_provenance(std::string_view payload_object, const Provenance &p) {
  std::string out;
  append_with_provenance(out, payload_object, p);
  return out;
}

std::string event_json(const EventHead &h, std::string_view payload_object, const Provenance &p) {
  json::JsonWriter w(payload_object.size() + 256);
  w.begin_object();
  if (!h.id.empty()) w.field("id", h.id);
  w.field("type", h.type).field("actor", h.actor);
  if (h.ts) w.field("ts", *h.ts);
  if (!h.parent_id.empty()) w.field("parent_id", h.parent_id);
  w.key("payload");
  std::string out = w.take(); // the object stays open: the payload and "}" follow
  append_with_provenance(out, payload_object, p);
  out += '}';
  return out;
}

std::string session_create_json(std::string_view session_id, std::string_view event_id,
                                std::string_view actor, std::optional<int64_t> ts,
                                std::string_view payload_object, const Provenance &p) {
  json::JsonWriter w(payload_object.size() + 256);
  w.begin_object().field("id", session_id).field("event_id", event_id).field("actor", actor);
  if (ts) w.field("ts", *ts);
  w.key("payload");
  std::string out = w.take();
  append_with_provenance(out, payload_object, p);
  out += '}';
  return out;
}

std::string custom_type(std::string_view format, std::string_view record_type) {
  std::string t = std::string(format) + "." + std::string(record_type);
  for (char &c : t)
    if (!id_char(c)) c = '_';
  return t.size() <= kMaxId ? t : t.substr(0, kMaxId);
}

std::string custom_event_json(std::string_view id, std::string_view format,
                              std::string_view record_type, std::optional<int64_t> ts,
                              std::string_view parent_id, simdjson::dom::element record,
                              const Provenance &p) {
  json::JsonWriter w;
  w.begin_object().key("record").element(record).end_object();
  EventHead h{std::string(id), custom_type(format, record_type), std::string(format), ts,
              std::string(parent_id)};
  return event_json(h, w.str(), p);
}

void write_image_block(json::JsonWriter &w, std::string_view base64, std::string_view mime_type) {
  w.begin_object()
      .field("type", "image")
      .field("data", base64)
      .field("mime_type", mime_type)
      .end_object();
}

std::optional<int64_t> iso8601_ms(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS
  int64_t y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
  int64_t h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (s.size() < 19 || y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
      mi > 59 || sec < 0 || sec > 60 || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  size_t pos = 19;
  int64_t ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100;
    size_t first = pos;
    for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos) {
      ms += (s[pos] - '0') * scale;
      scale /= 10;
    }
    if (pos == first) return std::nullopt;
  }
  int64_t offset_min = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int64_t oh = digits(s, pos + 1, 2), om = digits(s, pos + 4, 2);
    if (oh < 0 || om < 0 || pos + 3 >= s.size() || s[pos + 3] != ':') return std::nullopt;
    offset_min = (oh * 60 + om) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  }
  if (pos != s.size()) return std::nullopt;
  int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset_min * 60;
  if (secs < 0) return std::nullopt;
  return secs * 1000 + ms;
}

} // namespace ctxdb::transcript
