// What every transcript reader shares: JSONL lines and a torn last line,
// errors naming file:line, ids made valid, provenance, event JSON.
#include "error.hpp"
#include "test_util.hpp"
#include "transcript/reader_common.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>

namespace transcript_reader_common_test {

using namespace ctxdb;
using namespace ctxdb::transcript;
using test::code_of;
using test::message_of;

TEST_CASE("lines: blank lines skipped but numbered, CRLF trimmed, last line kept when complete") {
  Lines l = split_lines("{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}");
  REQUIRE(l.lines.size() == 3);
  CHECK(l.lines[0].text == "{\"a\":1}");
  CHECK(l.lines[0].number == 1);
  CHECK(l.lines[0].end == 9);
  CHECK(l.lines[1].number == 4);
  CHECK(l.lines[2].text == "{\"c\":3}");
  CHECK(l.lines[2].number == 5);
  CHECK(l.consumed_lines == 5);
  CHECK(l.consumed_bytes == 28);
}

TEST_CASE("lines: a torn last line is not consumed") {
  std::string bytes = "{\"a\":1}\n{\"b\":";
  Lines l = split_lines(bytes);
  REQUIRE(l.lines.size() == 1);
  CHECK(l.consumed_lines == 1);
  CHECK(l.consumed_bytes == 8);
  // A malformed line with its newline is consumed: the reader reports it.
  l = split_lines("{\"a\":1}\n{\"b\":\n");
  CHECK(l.lines.size() == 2);
  CHECK(l.consumed_bytes == 14);
  CHECK(split_lines("").consumed_lines == 0);
}

TEST_CASE("parse_line names file and line") {
  simdjson::dom::parser p;
  Lines l = split_lines("{\"a\":1}\nnot json\n[1]\n");
  CHECK(parse_line(p, "s.jsonl", l.lines[0])["a"].get_int64().value() == 1);
  CHECK(code_of([&] { parse_line(p, "s.jsonl", l.lines[1]); }) == Code::kInvalidJson);
  CHECK(message_of([&] { parse_line(p, "s.jsonl", l.lines[1]); }).rfind("s.jsonl:2: ", 0) == 0);
  CHECK(code_of([&] { parse_line(p, "s.jsonl", l.lines[2]); }) == Code::kInvalidArg);
  CHECK(message_of([&] { parse_line(p, "s.jsonl", l.lines[2]); }) ==
        "s.jsonl:3: a record must be a JSON object, not array");
}

TEST_CASE("ids: other characters become _, long ids stay distinct and within 128") {
  CHECK(sanitize_id("a b/c:d.e-f_9") == "a_b_c:d.e-f_9");
  CHECK(sanitize_id("") == "_");
  std::string a(200, 'x'), b(200, 'x');
  b[150] = 'y';
  CHECK(sanitize_id(a).size() == 128);
  CHECK(sanitize_id(a) != sanitize_id(b));
  CHECK(sanitize_id(std::string(128, 'z')) == std::string(128, 'z'));
}

TEST_CASE("provenance and event JSON") {
  Provenance p{"pi", "s.jsonl", 3, 5, "ab12"};
  CHECK(with_provenance("{}", Provenance{"pi", "f", 1, 0, ""}) ==
        R"({"provenance":{"format":"pi","file":"f","line":1}})");
  CHECK(event_json({"e1", "UserPromptSubmitted", "user", 7, "e0"}, R"({"text":"hi"})", p) ==
        R"({"id":"e1","type":"UserPromptSubmitted","actor":"user","ts":7,"parent_id":"e0",)"
        R"("payload":{"text":"hi","provenance":{"format":"pi","file":"s.jsonl","line":3,)"
        R"("last_line":5,"record_id":"ab12"}}})");
  CHECK(session_create_json("pi-1", "pi-1-start", "pi", std::nullopt, R"({"agent_id":"pi"})",
                            Provenance{"pi", "f", 1, 0, ""}) ==
        R"({"id":"pi-1","event_id":"pi-1-start","actor":"pi","payload":{"agent_id":"pi",)"
        R"("provenance":{"format":"pi","file":"f","line":1}}})");
  simdjson::dom::parser parser;
  auto rec = parser.parse(std::string(R"({"type":"model change","x":[1,2]})"));
  CHECK(custom_event_json("e2", "pi", "model change", std::nullopt, "", rec.value(),
                          Provenance{"pi", "f", 2, 0, ""}) ==
        R"({"id":"e2","type":"pi.model_change","actor":"pi","payload":{"record":)"
        R"({"type":"model change","x":[1,2]},"provenance":{"format":"pi","file":"f","line":2}}})");
}

TEST_CASE("ISO 8601 times") {
  CHECK(iso8601_ms("1970-01-01T00:00:00Z") == 0);
  CHECK(iso8601_ms("2025-01-02T03:04:05.678Z") == 1735787045678);
  CHECK(iso8601_ms("2025-01-02T04:04:05.678+01:00") == 1735787045678);
  CHECK(iso8601_ms("2025-01-02T03:04:05.678123Z") == 1735787045678);
  CHECK(iso8601_ms("2025-01-02") == std::nullopt);
  CHECK(iso8601_ms("2025-13-02T03:04:05Z") == std::nullopt);
  CHECK(iso8601_ms("2025-01-02T03:04:05Zjunk") == std::nullopt);
}

} // namespace transcript_reader_common_test
