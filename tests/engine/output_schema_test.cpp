// Every JSON the engine returns matches the schema that documents it in
// schema/json/, so the schemas cannot drift from what hosts receive.
#include "engine.hpp"
#include "store/store.hpp"
#include "test_util.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>

using namespace ctxdb;

namespace {
void matches(const std::string &json, const char *schema) {
  INFO(schema << ": " << json);
  simdjson::dom::parser p;
  CHECK_NOTHROW(store::embedded_schema(std::string("json/") + schema)
                    .validate(json::parse(p, json, "output"), ""));
}
} // namespace

TEST_CASE("outputs match their schemas") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  std::string session = db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  matches(session, "session.schema.json");
  matches(db.append("s", R"({"type":"Note","actor":"a","payload":{},"run_id":"r"})"),
          "stored_event.schema.json");
  matches(db.append_batch("s", R"({"type":"Note","actor":"a","payload":{}})"),
          "batch_result.schema.json");
  matches(db.append_batch("s", ""), "batch_result.schema.json");
  matches(db.verify(std::nullopt), "verify_report.schema.json");
  matches(db.rebuild(""), "rebuild_report.schema.json");
  int64_t cursor = 0;
  std::string exported;
  for (const auto &row : db.events_page(std::nullopt, cursor, -1, 100)) exported += row + "\n";
  Engine copy(dir.file("b.ctxdb"), "");
  matches(copy.import(exported), "import_result.schema.json");
}
