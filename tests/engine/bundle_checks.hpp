// bundle_checks.hpp — a compiled bundle read back, and the invariants every
// bundle keeps (DESIGN §11: 1 and 12, and the budget), for the tests of the
// compiler and of what feeds it (compaction).
#pragma once

#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace ctxdb::test {

// A bundle read back: segments and exclusions as parsed JSON.
struct Bundle {
  std::string json;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  explicit Bundle(std::string j) : json(std::move(j)) { doc = parser.parse(json).value(); }
  simdjson::dom::array segments() { return doc["segments"].get_array().value(); }
  std::vector<std::string> ids() {
    std::vector<std::string> out;
    for (auto s : segments()) out.emplace_back(s["id"].get_string().value());
    return out;
  }
  std::vector<std::string> excluded_ids() {
    std::vector<std::string> out;
    for (auto s : doc["excluded"].get_array()) out.emplace_back(s["id"].get_string().value());
    return out;
  }
  int64_t used() { return doc["budget"]["used"].get_int64().value(); }
  bool has(const std::string &id) {
    auto all = ids();
    return std::find(all.begin(), all.end(), id) != all.end();
  }
  std::string reason_of_excluded(const std::string &id) {
    for (auto s : doc["excluded"].get_array())
      if (s["id"].get_string().value() == id) return std::string(s["reason"].get_string().value());
    return "";
  }
};

// DESIGN §11 invariants 1 and 12 and the budget, on any bundle: every tool
// result follows its call, every call with a result on the path has it in
// the bundle (no pair split), every segment is explained and sourced, and
// the segments sum to what the budget says.
inline void check_bundle(Bundle &b, const std::set<std::string> &answered_calls) {
  std::set<std::string> calls, results;
  int64_t sum = 0;
  for (auto s : b.segments()) {
    sum += s["tokens"].get_int64().value();
    CHECK(!s["reason"].get_string().value().empty());
    CHECK(s["sources"].get_array().size() > 0);
    for (auto block : s["content"].get_array()) {
      std::string_view type = block["type"].get_string().value();
      if (type == "tool_call") calls.insert(std::string(block["id"].get_string().value()));
      if (type == "tool_result") {
        std::string id(block["tool_call_id"].get_string().value());
        INFO("result " << id << " in " << b.json);
        CHECK(calls.count(id) == 1); // its call came before it
        results.insert(id);
      }
    }
  }
  for (const std::string &c : calls)
    if (answered_calls.count(c)) {
      INFO("call " << c << " without its result in " << b.json);
      CHECK(results.count(c) == 1);
    }
  CHECK(sum == b.used());
  CHECK(b.used() <= b.doc["budget"]["available"].get_int64().value());
}

} // namespace ctxdb::test
