// The same outside program on the C++ wrapper (ctxdb.hpp).
#include <ctxdb/ctxdb.hpp>

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  try {
    auto db = ctxdb::Database::open(argv[1]);
    db.session_create(R"({"id":"s","payload":{"agent_id":"outside"}})");
    db.append("s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"hi"}})");
    std::printf("ctxdb %s: %s\n", ctxdb_version(), db.verify().c_str());
  } catch (const ctxdb::Error &e) {
    std::fprintf(stderr, "%s: %s\n", e.name(), e.what());
    return 1;
  }
  return 0;
}
