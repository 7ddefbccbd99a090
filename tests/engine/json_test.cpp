// The JSON layer: output escaping, canonical payloads and the schema subset.
#include "error.hpp"
#include "store/embedded_files.hpp"
#include "store/store.hpp"
#include "json/json_schema.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>

#include <cstdio>

namespace json_test {

using namespace ctxdb;

TEST_CASE("JsonWriter writes compact JSON and escapes only what it must") {
  json::JsonWriter w;
  w.begin_object()
      .field("s", std::string_view("a\"b\\c\n\x01é"))
      .field("n", int64_t{-42})
      .key("b")
      .boolean(true)
      .key("z")
      .null()
      .key("a")
      .begin_array()
      .value(int64_t{1})
      .raw("{\"x\":2}")
      .end_array()
      .end_object();
  CHECK(w.str() == "{\"s\":\"a\\\"b\\\\c\\n\\u0001é\",\"n\":-42,\"b\":true,"
                   "\"z\":null,\"a\":[1,{\"x\":2}]}");
}

TEST_CASE("canonical form is compact and a fixed point") {
  simdjson::dom::parser p;
  const char *inputs[] = {
      R"({ "a" : 1.50, "b": [ 1, 2e3, -0.0 ], "c": "\u00e9\n\"", "d": 18446744073709551615 })",
      R"({"nested":{"deep":[{"x":null,"y":true}]},"big":-9223372036854775808})",
      R"({"float":0.1,"tiny":5e-324,"exp":1e300})"};
  for (const char *in : inputs) {
    std::string once = json::canonical(json::parse(p, in, "t"));
    CHECK(once.find(' ') == std::string::npos);
    std::string twice = json::canonical(json::parse(p, once, "t"));
    CHECK(once == twice);
  }
}

TEST_CASE("parse names what failed") {
  simdjson::dom::parser p;
  CHECK_THROWS_WITH_AS(json::parse(p, "{\"a\":", "event"), doctest::Contains("event: invalid JSON"),
                       Error);
  CHECK_THROWS_WITH_AS(json::parse(p, "", "event"), "event: empty input", Error);
  try {
    json::parse(p, "\"\xff\"", "event");
    FAIL("invalid UTF-8 parsed");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kInvalidUtf8);
  }
}

// simdjson's DOM parser says only "Problem while parsing a number".
TEST_CASE("parse names the field of a number it cannot read") {
  simdjson::dom::parser p;
  const char *tail = ", not a number ctxdb reads: an integer must fit in 64 bits, a fraction or "
                     "exponent in a double)";
  for (auto [doc, where] : {
           std::pair{R"({"payload":{"n":123456789012345678901234}})",
                     "field 'payload.n' holds 123456789012345678901234"},
           std::pair{R"({"a":[1, {"b": -9223372036854775809 }]})",
                     "field 'a[1].b' holds -9223372036854775809"},
           std::pair{R"({"x":1e400})", "field 'x' holds 1e400"},
           std::pair{R"([0, 01])", "field '[1]' holds 01"},
           std::pair{"1e999", "the document holds 1e999"},
       }) {
    CAPTURE(doc);
    try {
      json::parse(p, doc, "event");
      FAIL("parsed");
    } catch (const Error &e) {
      CHECK(e.code() == Code::kInvalidJson);
      CHECK(std::string(e.what()) == "event: invalid JSON (" + std::string(where) + tail);
    }
  }
  // The largest integers still parse.
  CHECK_NOTHROW(json::parse(p, R"([18446744073709551615,-9223372036854775808,1e308])", "event"));
}

namespace {
Code validate(const json::Schema &s, const char *doc, std::string *message = nullptr) {
  simdjson::dom::parser p;
  try {
    s.validate(json::parse(p, doc, "t"), "payload");
    return Code::kOk;
  } catch (const Error &e) {
    if (message) *message = e.what();
    return e.code();
  }
}
} // namespace

TEST_CASE("the schema subset: required, type, enum, pattern, bounds, items") {
  json::Schema s = json::Schema::parse(R"({
    "type": "object", "required": ["name"], "additionalProperties": false,
    "properties": {
      "name": {"type": "string", "minLength": 2, "maxLength": 4},
      "mode": {"type": "string", "enum": ["a", "b"]},
      "id": {"type": "string", "pattern": "^[a-z]+$"},
      "n": {"type": "integer", "minimum": 0, "maximum": 10},
      "tags": {"type": "array", "items": {"type": "string"}},
      "either": {"type": ["string", "null"]}
    }})",
                                       "test");
  std::string msg;
  CHECK(validate(s, R"({"name":"ab"})") == Code::kOk);
  CHECK(validate(s, R"({"name":"éé"})") == Code::kOk); // code points, not bytes
  CHECK(validate(s, R"({})", &msg) == Code::kInvalidArg);
  CHECK(msg == "missing required field 'payload.name'");
  CHECK(validate(s, R"({"name":3})", &msg) == Code::kInvalidArg);
  CHECK(msg == "field 'payload.name' must be a string, not integer");
  CHECK(validate(s, R"({"name":"a"})") == Code::kInvalidArg);
  CHECK(validate(s, R"({"name":"abcde"})") == Code::kInvalidArg);
  CHECK(validate(s, R"({"name":"ab","mode":"c"})", &msg) == Code::kInvalidArg);
  CHECK(msg.find("must be one of a, b") != std::string::npos);
  CHECK(validate(s, R"({"name":"ab","id":"AB"})") == Code::kInvalidArg);
  CHECK(validate(s, R"({"name":"ab","n":11})") == Code::kInvalidArg);
  CHECK(validate(s, R"({"name":"ab","n":1.5})") == Code::kInvalidArg);
  CHECK(validate(s, R"({"name":"ab","tags":["x",2]})", &msg) == Code::kInvalidArg);
  CHECK(msg == "field 'payload.tags[1]' must be a string, not integer");
  CHECK(validate(s, R"({"name":"ab","either":null})") == Code::kOk);
  CHECK(validate(s, R"({"name":"ab","extra":1})", &msg) == Code::kInvalidArg);
  CHECK(msg.find("unknown field 'payload.extra'") == 0);
  CHECK(validate(s, R"([1])", &msg) == Code::kInvalidArg);
}

TEST_CASE("a malformed schema is an internal error, not bad input") {
  CHECK_THROWS_AS(json::Schema::parse("{\"type\":\"strnig\"}", "bad"), Error);
  CHECK_THROWS_AS(json::Schema::parse("not json", "bad"), Error);
}

// The message of the error parsing `schema` throws, or "" when it parses.
std::string schema_error(const char *schema) {
  try {
    json::Schema::parse(schema, "t");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kInternal);
    return e.what();
  }
  return "";
}

TEST_CASE("a schema keyword the subset does not enforce is refused, not ignored") {
  // Ignored, exclusiveMinimum would let 0 through a rule meant to stop it.
  CHECK(schema_error(R"({"type":"integer","exclusiveMinimum":0})") ==
        "schema t: unsupported keyword 'exclusiveMinimum'");
  CHECK(schema_error(R"({"properties":{"a":{"type":"string","format":"date-time"}}})") ==
        "schema t: unsupported keyword 'format'");
  CHECK(schema_error(R"({"items":{"oneOf":[{"type":"string"}]}})") ==
        "schema t: unsupported keyword 'oneOf'");
  // Annotations constrain nothing and are accepted.
  CHECK(schema_error(R"({"$schema":"x","$id":"y","$comment":"c","title":"t","description":"d",
                         "examples":[1],"default":1,"type":"integer"})") == "");
}

TEST_CASE("every schema the library ships parses under the subset") {
  int schemas = 0;
  for (const store::EmbeddedFile &f : store::embedded_files()) {
    if (!f.path.ends_with(".schema.json")) continue;
    CAPTURE(f.path);
    CHECK_NOTHROW(store::embedded_schema(f.path));
    ++schemas;
  }
  CHECK(schemas > 40);
}

TEST_CASE("append_quoted escapes the same at every position in long strings") {
  // A bytewise reference, to check the 8-bytes-at-a-time scan against.
  auto reference = [](std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"')
        out += "\\\"";
      else if (c == '\\')
        out += "\\\\";
      else if (c == '\n')
        out += "\\n";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\t')
        out += "\\t";
      else if (c == '\b')
        out += "\\b";
      else if (c == '\f')
        out += "\\f";
      else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else
        out.push_back(char(c));
    }
    return out + "\"";
  };
  const char specials[] = {'"', '\\', '\n', '\x01', '\x1f', '\t'};
  for (size_t len = 0; len < 40; ++len) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (char sp : specials) {
        std::string s(len, 'a');
        s[pos] = sp;
        if (len > 3) s[len - 2] = '\xc3', s[len - 1] = '\xa9'; // UTF-8 passes through
        std::string got;
        json::append_quoted(got, s);
        REQUIRE(got == reference(s));
      }
    }
  }
}

TEST_CASE("the writer's output is UTF-8: each invalid sequence is one U+FFFD") {
  const std::string bad = "\xEF\xBF\xBD"; // U+FFFD
  // Valid UTF-8 passes through, whatever its length.
  for (std::string ok : {"h\xC3\xA9llo", "\xE6\x95\xB0\xE6\x8D\xAE", "\xF0\x9F\x98\x80"}) {
    std::string got;
    json::append_quoted(got, ok);
    CHECK(got == "\"" + ok + "\"");
  }
  // The maximal invalid parts, as Python's and JavaScript's decoders
  // replace them (Unicode's "substitution of maximal subparts").
  std::pair<std::string, std::string> cases[] = {
      {"a\xFF!", "a" + bad + "!"},                 // not a lead byte
      {"\xC3", bad},                               // cut short at the end
      {"\xE6\x95x", bad + "x"},                    // a 3-byte lead and one continuation
      {"\xF0\x9F\x98", bad},                       // a 4-byte character cut short
      {"\xC0\xAF", bad + bad},                     // overlong: C0 is never a lead
      {"\xED\xA0\x80", bad + bad + bad},           // a surrogate (U+D800)
      {"\xF4\x90\x80\x80", bad + bad + bad + bad}, // above U+10FFFF
      {"\x80\x80", bad + bad},                     // continuations alone
  };
  for (const auto &[in, want] : cases) {
    CAPTURE(in);
    CHECK(json::valid_utf8(in) == want);
    std::string got;
    json::append_quoted(got, in);
    CHECK(got == "\"" + want + "\"");
  }
  // At every position of a long string (the 16- and 8-byte scans), with an
  // escape beside it.
  for (size_t len = 1; len < 40; ++len)
    for (size_t pos = 0; pos < len; ++pos) {
      std::string s(len, 'a');
      s[pos] = '\xFF';
      if (pos + 1 < len) s[pos + 1] = '"';
      std::string got;
      json::append_quoted(got, s);
      REQUIRE(simdjson::validate_utf8(got.data(), got.size()));
      std::string want = "\"" + std::string(pos, 'a') + bad;
      if (pos + 1 < len) want += "\\\"" + std::string(len - pos - 2, 'a');
      REQUIRE(got == want + "\"");
    }
  // Keys, values and raw JSON (a stored payload) alike.
  json::JsonWriter w;
  w.begin_object()
      .field("id\xFF", "evt_\xC3")
      .raw_field("payload", "{\"text\":\"x\xE6\x95\"}")
      .end_object();
  CHECK(w.str() ==
        "{\"id" + bad + "\":\"evt_" + bad + "\",\"payload\":{\"text\":\"x" + bad + "\"}}");
  simdjson::dom::parser parser;
  CHECK_NOTHROW(json::parse(parser, w.str(), "output"));
}

TEST_CASE("input nests at most kMaxInputDepth levels; stored payloads are read as stored") {
  simdjson::dom::parser parser;
  auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK_NOTHROW(json::parse(parser, nested(json::kMaxInputDepth), "event"));
  try {
    json::parse(parser, nested(json::kMaxInputDepth + 1), "event");
    FAIL("parsed");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kInvalidArg);
    CHECK(std::string(e.what()).find("256") != std::string::npos);
    CHECK(std::string(e.what()).starts_with("event:"));
  }
  // The limit stays when the parser grows for a larger document.
  std::string big = "[" + std::string(100000, ' ') + nested(json::kMaxInputDepth) + "]";
  CHECK_THROWS_AS(json::parse(parser, big, "event"), Error);
  // A payload that does not parse is damage, named by its event.
  simdjson::dom::parser other;
  try {
    json::parse_payload(other, "{\"text\":", "evt_7");
    FAIL("parsed");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kCorrupt);
    CHECK(std::string(e.what()).find("evt_7") != std::string::npos);
  }
}

} // namespace json_test
