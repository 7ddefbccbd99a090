// memory_db.hpp — the memory tests' database: session "s" with one prompt,
// evt_src, for memories to cite, and project memories of p1 written at a
// time of the tests' clock.
#pragma once

#include "engine.hpp"
#include "test_util.hpp"

#include <cstdint>
#include <string>

namespace ctxdb::test {

inline constexpr int64_t kDay = 86400000;
inline constexpr int64_t kT0 = 1700000000000; // the tests' clock: every event has a ts

struct MemoryDb {
  TempDir dir;
  std::string path = dir.file("m.ctxdb");
  Engine db{path, ""};
  MemoryDb() {
    db.session_create(R"({"id":"s","ts":)" + std::to_string(kT0) +
                      R"(,"payload":{"agent_id":"a"}})");
    db.append("s", R"({"id":"evt_src","type":"UserPromptSubmitted","actor":"user","ts":)" +
                       std::to_string(kT0) + R"(,"payload":{"text":"remember this"}})");
  }
  // A project memory of p1 (`more` adds fields), written at kT0 + `at`.
  std::string put(const std::string &id, const std::string &content, const std::string &more = "",
                  int64_t at = 0) {
    return db.memory_write("s",
                           R"({"memory_id":")" + id + R"(","scope":"project","scope_id":"p1",)" +
                               R"("kind":"fact","content":")" + content +
                               R"(","source_refs":["evt_src"],"update_policy":"manual","ts":)" +
                               std::to_string(kT0 + at) + more + "}");
  }
};

} // namespace ctxdb::test
