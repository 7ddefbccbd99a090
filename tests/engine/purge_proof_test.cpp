// A removed payload must be proven by the log: a purge in its own chain,
// after it, that names it with its payload hash (memory/purger.hpp). Each
// forgery here is what an attacker with write access to the file does,
// with raw SQL, and verify must catch it.
#include "log/event.hpp"
#include "memory_db.hpp"
#include "test_util.hpp"
#include "util/sha256.hpp"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace purge_proof_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

// The id of the event at `seq` of session `session_id`.
std::string id_at(Engine &db, const std::string &session_id, int64_t seq) {
  int64_t cursor = seq - 1;
  return field(db.events_page(std::string_view(session_id), cursor, seq, 1).at(0), "id");
}

// Appends an event by raw SQL, chained as the engine would chain it: the
// attacker knows the hash function. Returns its id.
std::string forge_event(const std::string &path, const std::string &session_id,
                        const std::string &type, const std::string &payload) {
  sqlite3 *db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt *q = nullptr;
  REQUIRE(sqlite3_prepare_v2(db,
                             "SELECT session_no,last_seq,last_hash,last_ts,"
                             "(SELECT MAX(pos) FROM events) FROM chains WHERE session_id=?",
                             -1, &q, nullptr) == SQLITE_OK);
  sqlite3_bind_text(q, 1, session_id.c_str(), -1, SQLITE_TRANSIENT);
  REQUIRE(sqlite3_step(q) == SQLITE_ROW);
  log::Event e;
  e.id = "evt_forged_" + std::to_string(sqlite3_column_int64(q, 1) + 1);
  e.session_id = session_id;
  int64_t session_no = sqlite3_column_int64(q, 0);
  e.seq = sqlite3_column_int64(q, 1) + 1;
  std::memcpy(e.prev_hash.data(), sqlite3_column_blob(q, 2), e.prev_hash.size());
  e.ts = sqlite3_column_int64(q, 3);
  int64_t pos = sqlite3_column_int64(q, 4) + 1;
  sqlite3_finalize(q);
  e.type = type;
  e.actor = "host";
  e.payload = payload;
  e.payload_hash = util::sha256(payload);
  e.hash = log::chain_hash(e);
  REQUIRE(sqlite3_prepare_v2(db,
                             "INSERT INTO events(pos,id,session_no,seq,ts,type,actor,payload,"
                             "payload_hash,prev_hash,hash) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                             -1, &q, nullptr) == SQLITE_OK);
  sqlite3_bind_int64(q, 1, pos);
  sqlite3_bind_text(q, 2, e.id.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(q, 3, session_no);
  sqlite3_bind_int64(q, 4, e.seq);
  sqlite3_bind_int64(q, 5, e.ts);
  sqlite3_bind_text(q, 6, e.type.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(q, 7, e.actor.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(q, 8, e.payload.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_blob(q, 9, e.payload_hash.data(), int(e.payload_hash.size()), SQLITE_TRANSIENT);
  sqlite3_bind_blob(q, 10, e.prev_hash.data(), int(e.prev_hash.size()), SQLITE_TRANSIENT);
  sqlite3_bind_blob(q, 11, e.hash.data(), int(e.hash.size()), SQLITE_TRANSIENT);
  REQUIRE(sqlite3_step(q) == SQLITE_DONE);
  sqlite3_finalize(q);
  REQUIRE(sqlite3_prepare_v2(db, "UPDATE chains SET last_seq=?,last_hash=? WHERE session_no=?", -1,
                             &q, nullptr) == SQLITE_OK);
  sqlite3_bind_int64(q, 1, e.seq);
  sqlite3_bind_blob(q, 2, e.hash.data(), int(e.hash.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(q, 3, session_no);
  REQUIRE(sqlite3_step(q) == SQLITE_DONE);
  sqlite3_finalize(q);
  sqlite3_close(db);
  return e.id;
}

// The hex payload hash of an event, as export gives it.
std::string payload_hash(Engine &db, const std::string &id) {
  return field(db.event_get(id), "payload_hash");
}

// The payload of a purge that proves `ids` with the given hashes.
std::string purge_payload(const std::string &memory_id, const std::vector<std::string> &ids,
                          const std::vector<std::string> &hashes) {
  std::string listed, proofs;
  for (size_t i = 0; i < ids.size(); ++i) {
    listed += (i ? ",\"" : "\"") + ids[i] + "\"";
    proofs += std::string(i ? "," : "") + R"({"event_id":")" + ids[i] + R"(","payload_hash":")" +
              hashes[i] + R"("})";
  }
  return R"({"memory_id":")" + memory_id + R"(","mode":"purge","purged_event_ids":[)" + listed +
         R"(],"purged":[)" + proofs + "]}";
}

// verify's first_broken, as "event_id: problem"; empty when verify passes.
std::string broken(Engine &db) {
  std::string v = db.verify(std::nullopt);
  if (field(v, "ok") == "true") return "";
  std::string b = field(v, "first_broken");
  return field(b, "event_id") + ": " + field(b, "problem");
}

bool has(const std::string &text, const std::string &part) {
  INFO(text);
  return text.find(part) != std::string::npos;
}

// Session s of MemoryDb, filled to seq 12: memory m1 written at seq 10
// and an AssistantMessageCreated at seq 12.
struct ChatDb : MemoryDb {
  ChatDb() {
    for (int seq = 3; seq <= 12; ++seq) {
      if (seq == 10)
        put("m1", "the vault code is 2718");
      else if (seq % 2)
        db.append("s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"q)" +
                           std::to_string(seq) + R"("}})");
      else
        db.append("s", R"({"type":"AssistantMessageCreated","actor":"assistant","payload":)"
                       R"({"content":[{"type":"text","text":"a)" +
                           std::to_string(seq) + R"("}]}})");
    }
  }
};

} // namespace

TEST_CASE("purge proof: a purges row naming an AssistantMessageCreated fails verify") {
  ChatDb m;
  std::string ten = id_at(m.db, "s", 10), twelve = id_at(m.db, "s", 12);
  REQUIRE(broken(m.db) == "");
  // The trigger lets this through: it trusts the purges row.
  raw_sql(m.path, "INSERT INTO purges VALUES('" + ten + "','" + twelve +
                      "'); UPDATE events SET payload=NULL WHERE seq=10;");
  std::string b = broken(m.db);
  CHECK(has(b, ten + ": "));
  CHECK(has(b, "a AssistantMessageCreated, which cannot purge"));
  CHECK(field(m.db.verify(std::string_view("s")), "ok") == "false");
}

TEST_CASE("purge proof: only a Memory event's payload can be removed") {
  ChatDb m;
  // A user prompt, "purged" by a properly chained purge that lists it
  // with its true hash: no purge removes a prompt.
  std::string prompt = id_at(m.db, "s", 9);
  std::string p = forge_event(m.path, "s", "MemoryDeleted",
                              purge_payload("m1", {prompt}, {payload_hash(m.db, prompt)}));
  raw_sql(m.path, "INSERT INTO purges VALUES('" + prompt + "','" + p +
                      "'); UPDATE events SET payload=NULL WHERE id='" + prompt + "';");
  CHECK(has(broken(m.db), prompt + ": payload was removed, but a UserPromptSubmitted payload"));
}

TEST_CASE("purge proof: every other forged removal fails verify, naming the event and why") {
  ChatDb m;
  std::string target = id_at(m.db, "s", 10); // m1's MemoryWritten
  std::string hash = payload_hash(m.db, target);
  // Each forgery on a fresh copy of the file.
  TempDir scratch;
  int n = 0;
  auto forged = [&](const std::function<void(const std::string &)> &tamper) {
    std::string copy = scratch.file("f" + std::to_string(n++) + ".ctxdb");
    raw_sql(m.path, "VACUUM INTO '" + copy + "'");
    tamper(copy);
    Engine db(copy, "");
    return broken(db);
  };
  auto remove_target = [&](const std::string &path, const std::string &purged_by) {
    raw_sql(path, "INSERT INTO purges VALUES('" + target + "','" + purged_by +
                      "'); UPDATE events SET payload=NULL WHERE id='" + target + "';");
  };

  SUBCASE("no purge record, the trigger dropped") {
    CHECK(has(forged([&](const std::string &path) {
                raw_sql(path, "DROP TRIGGER events_no_update;"
                              "UPDATE events SET payload=NULL WHERE id='" +
                                  target + "';");
              }),
              target + ": payload was removed, and no purge record"));
  }
  SUBCASE("a purge record naming no event") {
    CHECK(has(forged([&](const std::string &path) { remove_target(path, "evt_nowhere"); }),
              target + ": payload was removed; its purge record names 'evt_nowhere', which is no "
                       "event"));
  }
  SUBCASE("a purge record naming a tombstone") {
    m.put("m2", "another fact");
    std::string tomb = field(m.db.memory_forget("m2", ""), "event_id");
    CHECK(has(forged([&](const std::string &path) { remove_target(path, tomb); }),
              "purged by '" + tomb + "', a MemoryDeleted that is not a purge"));
  }
  SUBCASE("a real purge of another session's chain") {
    m.db.session_create(R"({"id":"t","payload":{"agent_id":"a"}})");
    m.db.memory_write("t",
                      R"({"memory_id":"m3","scope":"project","scope_id":"p1",)"
                      R"("content":"in t","source_refs":["evt_src"],"update_policy":"manual"})");
    std::string other = field(m.db.memory_forget("m3", R"({"mode":"purge"})"), "event_id");
    CHECK(has(forged([&](const std::string &path) { remove_target(path, other); }),
              target + ": payload was removed, purged by '" + other + "' of another session"));
  }
  SUBCASE("a real purge of the same chain that does not list it") {
    m.put("m2", "another fact");
    std::string p = field(m.db.memory_forget("m2", R"({"mode":"purge"})"), "event_id");
    CHECK(has(forged([&](const std::string &path) { remove_target(path, p); }),
              "purged by '" + p + "', which does not list it"));
  }
  SUBCASE("a real purge that comes before it") {
    m.put("m2", "another fact");
    std::string p = field(m.db.memory_forget("m2", R"({"mode":"purge"})"), "event_id");
    m.put("m4", "written after the purge");
    std::string later = field(m.db.memory_get("m4"), "event_id");
    CHECK(has(forged([&](const std::string &path) {
                raw_sql(path, "INSERT INTO purges VALUES('" + later + "','" + p +
                                  "'); UPDATE events SET payload=NULL WHERE id='" + later + "';");
              }),
              later + ": payload was removed, purged by '" + p + "', which comes before it"));
  }
  SUBCASE("a forged purge, properly chained, with another payload hash") {
    std::string wrong(64, 'a');
    CHECK(has(forged([&](const std::string &path) {
                std::string p =
                    forge_event(path, "s", "MemoryDeleted", purge_payload("m1", {target}, {wrong}));
                remove_target(path, p);
              }),
              "which lists it with another payload_hash"));
  }
  SUBCASE("a real purge whose payload was rewritten to list it") {
    m.put("m2", "another fact");
    std::string p = field(m.db.memory_forget("m2", R"({"mode":"purge"})"), "event_id");
    CHECK(has(forged([&](const std::string &path) {
                raw_sql(path, "DROP TRIGGER events_no_update; UPDATE events SET payload='" +
                                  purge_payload("m1", {target}, {hash}) + "' WHERE id='" + p +
                                  "';");
                remove_target(path, p);
              }),
              "purged by '" + p + "', whose payload was modified"));
  }
  SUBCASE("a purge record for a payload that is there") {
    m.put("m2", "another fact");
    std::string p = field(m.db.memory_forget("m2", R"({"mode":"purge"})"), "event_id");
    CHECK(has(forged([&](const std::string &path) {
                raw_sql(path, "INSERT INTO purges VALUES('" + target + "','" + p + "');");
              }),
              target + ": a purge record names it"));
  }
  SUBCASE("a purge record for no event") {
    CHECK(has(forged([&](const std::string &path) {
                raw_sql(path, "INSERT INTO purges VALUES('evt_gone','evt_nowhere');");
              }),
              "evt_gone: a purge record (purged by 'evt_nowhere') names no event"));
  }
  SUBCASE("a purge in the form without proofs") {
    CHECK(has(forged([&](const std::string &path) {
                std::string p = forge_event(path, "s", "MemoryDeleted",
                                            R"({"memory_id":"m1","mode":"purge",)"
                                            R"("purged_event_ids":[")" +
                                                target + R"("]})");
                remove_target(path, p);
              }),
              target + ": payload was removed, unproven: purged by"));
  }
}

TEST_CASE("purge proof: a real purge proves itself, across sessions, and after an import") {
  MemoryDb m;
  m.db.session_create(R"({"id":"t","ts":)" + std::to_string(kT0) +
                      R"(,"payload":{"agent_id":"a"}})");
  m.put("m1", "the alarm code is walrus-1414");
  m.db.memory_update("m1",
                     R"({"content":"the alarm code is walrus-1515","source_refs":["evt_src"],)"
                     R"("session_id":"t"})");
  m.put("keep", "the office opens at nine");
  CHECK(export_all(m.db).find("walrus-1414") != std::string::npos);
  std::string r = m.db.memory_forget("m1", R"({"mode":"purge","session_id":"t"})");
  std::string v = m.db.verify(std::nullopt);
  CHECK(field(v, "ok") == "true");
  std::string log = export_all(m.db);
  CHECK(log.find("walrus-1414") == std::string::npos);
  CHECK(log.find("walrus-1515") == std::string::npos);
  // Each removed payload was proven by the purge of its own chain: the
  // forget's in t, and one more in s.
  simdjson::dom::parser parser;
  std::vector<std::string> purgers;
  for (simdjson::dom::element p : parser.parse(v)["purged"].get_array()) {
    std::string by(p["purged_by"].get_string().value());
    CHECK(field(m.db.event_get(by), "session_id") ==
          std::string(p["session_id"].get_string().value()));
    purgers.push_back(by);
  }
  REQUIRE(purgers.size() == 2);
  CHECK(purgers[0] != purgers[1]);
  CHECK((purgers[0] == field(r, "event_id") || purgers[1] == field(r, "event_id")));
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
  CHECK(field(m.db.memory_get("keep"), "memory_id") == "keep");

  TempDir other;
  Engine copy(other.file("copy.ctxdb"), "");
  copy.import(log);
  CHECK(export_all(copy) == log);
  std::string copied = copy.verify(std::nullopt);
  CHECK(field(copied, "ok") == "true");
  CHECK(field(copied, "purged") == field(v, "purged"));
  CHECK(code_of([&] { copy.memory_get("m1"); }) == Code::kNotFound);
}

TEST_CASE("purge proof: an older file's purge without proofs imports, and stays unproven") {
  MemoryDb m;
  m.put("m1", "old secret");
  std::string written = field(m.db.memory_get("m1"), "event_id");
  // What an older ctxdb wrote: the purge lists ids only.
  std::string p =
      forge_event(m.path, "s", "MemoryDeleted",
                  R"({"memory_id":"m1","mode":"purge","purged_event_ids":[")" + written + R"("]})");
  raw_sql(m.path, "INSERT INTO purges VALUES('" + written + "','" + p +
                      "'); UPDATE events SET payload=NULL WHERE id='" + written + "';");
  m.db.rebuild(""); // the tree places the raw event
  std::string log = export_all(m.db);
  CHECK(has(broken(m.db), written + ": payload was removed, unproven"));
  TempDir other;
  Engine copy(other.file("copy.ctxdb"), "");
  copy.import(log);
  CHECK(export_all(copy) == log);
  CHECK(has(broken(copy), written + ": payload was removed, unproven"));
}

TEST_CASE("purge proof: an appended purge must prove what it removes") {
  MemoryDb m;
  m.db.session_create(R"({"id":"t","payload":{"agent_id":"a"}})");
  m.put("m1", "one");
  std::string e1 = field(m.db.memory_get("m1"), "event_id");
  m.db.memory_update("m1", R"({"content":"two","source_refs":["evt_src"],"session_id":"t"})");
  std::string e2 = field(m.db.memory_get("m1"), "event_id");
  std::string before = snapshot(m.db);
  auto append = [&](const std::string &session, const std::string &payload) {
    return message_of([&] {
      m.db.append(session, R"({"type":"MemoryDeleted","actor":"host","payload":)" + payload + "}");
    });
  };
  std::string h1 = payload_hash(m.db, e1), h2 = payload_hash(m.db, e2);
  // The form without proofs, with payloads still there.
  CHECK(has(append("s", R"({"memory_id":"m1","mode":"purge","purged_event_ids":[")" + e1 +
                            R"(",")" + e2 + R"("]})"),
            "still has its payload"));
  // A wrong hash; another session's event; an event left with its payload.
  std::string wrong(64, 'a');
  std::string listed = R"([")" + e1 + R"(",")" + e2 + R"("])";
  auto with = [&](const std::string &proofs) {
    return R"({"memory_id":"m1","mode":"purge","purged_event_ids":)" + listed + R"(,"purged":)" +
           proofs + "}";
  };
  auto proof = [](const std::string &id, const std::string &hash) {
    return R"({"event_id":")" + id + R"(","payload_hash":")" + hash + R"("})";
  };
  CHECK(has(append("s", with("[" + proof(e1, wrong) + "]")), "has payload_hash " + h1));
  CHECK(has(append("s", with("[" + proof(e1, h1) + "," + proof(e2, h2) + "]")),
            "'" + e2 + "' is in another session"));
  CHECK(has(append("s", with("[" + proof(e1, h1) + "]")),
            "'" + e2 + "' keeps its payload: no purge of its own session's chain"));
  CHECK(has(append("s", with("[" + proof("evt_src", h1) + "]")), "is not in purged_event_ids"));
  CHECK(snapshot(m.db) == before);
}

} // namespace purge_proof_test
