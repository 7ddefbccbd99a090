// Tamper evidence beyond the chain: verify re-hashes the artifacts, and an
// anchor kept outside the file catches what rewriting the file whole can
// hide from the chain (a cut tail, a deleted session, a moved event, a lost
// WAL). Each attack is done as someone with the file would: raw SQL on a
// second connection, triggers dropped first.
#include "engine.hpp"
#include "test_util.hpp"
#include "util/sha256.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tamper_test {

using namespace ctxdb;
using test::code_of;
using test::field;
using test::message_of;
using test::raw_sql;

namespace {

const char *kNote = R"({"type":"Note","actor":"agent","payload":{"text":"a note"}})";

std::string session(const std::string &id) {
  return R"({"id":")" + id + R"(","payload":{"agent_id":"a"}})";
}

// An object field of a JSON object, as JSON.
std::string object_field(const std::string &json, const char *key, const char *inner) {
  simdjson::dom::parser p;
  simdjson::dom::element e = p.parse(json)[key][inner];
  return e.is_string() ? std::string(e.get_string().value()) : simdjson::minify(e);
}

// Lines "line N\n": text that spans several chunks at a small chunk size.
std::string lines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "line " + std::to_string(i) + " of the build log\n";
  return s;
}

std::string hex_of(std::string_view bytes) {
  static const char *digits = "0123456789abcdef";
  std::string h;
  for (unsigned char c : bytes) (h += digits[c >> 4]) += digits[c & 15];
  return h;
}

// A file with two artifacts of several 256 KiB chunks each, one of them
// incompressible (stored raw).
struct ArtifactFile {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  std::string text_id, random_id;
  ArtifactFile() {
    Engine db(path, "");
    text_id = field(db.artifact_put(lines(60000), "{}"), "id");
    std::string random;
    uint32_t x = 12345;
    for (int i = 0; i < 600000; ++i) random += char((x = x * 1103515245 + 12345) >> 24);
    random_id = field(db.artifact_put(random, "{}"), "id");
  }
  std::string verify(const char *mode) {
    Engine db(path, "");
    return db.verify_with(std::string(R"({"artifacts":")") + mode + "\"}");
  }
};

} // namespace

TEST_CASE("verify re-hashes every artifact chunk, and full mode every artifact's content") {
  ArtifactFile f;
  std::string quick = f.verify("quick");
  CHECK(field(quick, "ok") == "true");
  CHECK(object_field(quick, "artifacts", "mode") == "quick");
  CHECK(object_field(quick, "artifacts", "artifacts") == "2");
  int64_t chunks = std::stoll(object_field(quick, "artifacts", "chunks"));
  CHECK(chunks > 6);
  std::string full = f.verify("full");
  CHECK(field(full, "ok") == "true");
  CHECK(object_field(full, "artifacts", "chunks") == std::to_string(chunks));
  // The default: quick for the whole file, nothing for one session.
  Engine db(f.path, "");
  CHECK(object_field(db.verify(std::nullopt), "artifacts", "mode") == "quick");
  db.session_create(session("s"));
  CHECK(db.verify("s").find("\"artifacts\"") == std::string::npos);
  CHECK(field(db.verify_with(R"({"artifacts":"none"})"), "ok") == "true");
}

TEST_CASE("a damaged artifact fails verify and rebuild --check, naming the chunk") {
  ArtifactFile f;
  raw_sql(f.path, "DROP TRIGGER artifact_chunks_no_update; DROP TRIGGER artifact_chunks_no_delete;"
                  "DROP TRIGGER artifacts_no_update;");
  auto broken = [&](const std::string &sql, const char *mode) {
    std::string copy = f.dir.file("copy.ctxdb");
    std::filesystem::remove(copy);
    raw_sql(f.path, "VACUUM INTO '" + copy + "'");
    raw_sql(copy, sql);
    Engine db(copy, "");
    std::string r = db.verify_with(std::string(R"({"artifacts":")") + mode + "\"}");
    CHECK(field(r, "ok") == "false");
    CHECK(object_field(r, "artifacts", "ok") == "false");
    return r;
  };
  const std::string text_no = "(SELECT no FROM artifacts WHERE id='" + f.text_id + "')";
  const std::string random_no = "(SELECT no FROM artifacts WHERE id='" + f.random_id + "')";
  SUBCASE("a flipped bit in a compressed chunk") {
    std::string r = broken("UPDATE artifact_chunks SET data=ctxdb_test_flip(data, 10)"
                           " WHERE idx=2 AND artifact_no=" +
                               text_no,
                           "quick");
    CHECK(r.find("\"artifact_id\":\"" + f.text_id + "\"") != std::string::npos);
    CHECK(r.find("\"chunk\":2") != std::string::npos);
  }
  SUBCASE("a zeroed raw chunk") {
    std::string r = broken(
        "UPDATE artifact_chunks SET data=zeroblob(length(data)) WHERE idx=1 AND artifact_no=" +
            random_no,
        "quick");
    CHECK(r.find("\"chunk\":1") != std::string::npos);
    CHECK(r.find("chunk 1 of artifact " + f.random_id + " does not match its SHA-256") !=
          std::string::npos);
  }
  SUBCASE("a deleted chunk") {
    std::string r =
        broken("DELETE FROM artifact_chunks WHERE idx=3 AND artifact_no=" + text_no, "quick");
    CHECK(r.find("chunk 3 of artifact " + f.text_id + " is missing") != std::string::npos);
  }
  SUBCASE("a size rewritten") {
    std::string r = broken("UPDATE artifacts SET raw_size=raw_size+1 WHERE no=" + text_no, "quick");
    CHECK(r.find("artifact " + f.text_id + " has ") != std::string::npos);
  }
  SUBCASE("a chunk no artifact owns") {
    std::string r = broken("INSERT INTO artifact_chunks(artifact_no,idx,raw_size,codec,newlines,"
                           "sha256,data,sha256_of) VALUES(999,0,1,'raw',0,zeroblob(32),x'00',"
                           "'stored')",
                           "quick");
    CHECK(r.find("<artifact no 999>") != std::string::npos);
  }
  SUBCASE("a chunk replaced with its hash recomputed: only full mode sees it") {
    // The forger changes a byte of a raw chunk and writes the new bytes'
    // SHA-256: every chunk matches its hash, so the content must be hashed
    // whole. (The byte is no newline and does not become one: the chunk's
    // line count stays right.)
    std::string chunk = test::raw_bytes(f.path, "SELECT data FROM artifact_chunks WHERE idx=0 "
                                                "AND artifact_no=" +
                                                    random_no);
    size_t at = chunk.find_first_not_of("\n\x0b");
    chunk[at] ^= 1;
    std::string sql = "UPDATE artifact_chunks SET data=x'" + hex_of(chunk) + "', sha256=x'" +
                      util::to_hex(util::sha256(chunk)) +
                      "' WHERE idx=0 AND artifact_no=" + random_no;
    std::string copy = f.dir.file("forged.ctxdb");
    raw_sql(f.path, "VACUUM INTO '" + copy + "'");
    raw_sql(copy, sql);
    Engine db(copy, "");
    CHECK(field(db.verify_with(R"({"artifacts":"quick"})"), "ok") == "true");
    std::string r = db.verify_with(R"({"artifacts":"full"})");
    CHECK(field(r, "ok") == "false");
    CHECK(r.find("its content does not hash to its id") != std::string::npos);
  }
  SUBCASE("rebuild --check fails on it and changes nothing") {
    std::string copy = f.dir.file("copy.ctxdb");
    raw_sql(f.path, "VACUUM INTO '" + copy + "'");
    raw_sql(copy, "UPDATE artifact_chunks SET data=zeroblob(length(data)) WHERE idx=0");
    Engine db(copy, "");
    db.session_create(session("s"));
    std::string before = test::snapshot(db);
    CHECK(message_of([&] { db.rebuild(R"({"check":true})"); }).find("rebuild --check: chunk 0") !=
          std::string::npos);
    CHECK(code_of([&] { db.rebuild(R"({"check":true})"); }) == Code::kCheckFailed);
    CHECK(test::snapshot(db) == before);
  }
}

namespace {

// Every event's hash in append order, read as a tamperer would.
std::vector<util::Digest> event_hashes(const std::string &path) {
  sqlite3 *db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt *q = nullptr;
  sqlite3_prepare_v2(db, "SELECT hash FROM events ORDER BY pos", -1, &q, nullptr);
  std::vector<util::Digest> out;
  while (sqlite3_step(q) == SQLITE_ROW) {
    util::Digest d{};
    REQUIRE(sqlite3_column_bytes(q, 0) == 32);
    std::memcpy(d.data(), sqlite3_column_blob(q, 0), 32);
    out.push_back(d);
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return out;
}

util::Digest leaf(const util::Digest &h) {
  util::Sha256 s;
  return s.update("\x00", 1).update(h).finish();
}
util::Digest node(const util::Digest &l, const util::Digest &r) {
  util::Sha256 s;
  return s.update("\x01", 1).update(l).update(r).finish();
}

// A file with two sessions and an anchor of it.
struct AnchoredFile {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  std::string anchor;
  AnchoredFile() {
    Engine db(path, "");
    db.session_create(session("s1"));
    db.session_create(session("s2"));
    for (int i = 0; i < 3; ++i) {
      db.append("s1", kNote);
      db.append("s2", kNote);
    }
    anchor = db.anchor("");
  }
  // verify of a copy of the file after sql, with the anchor.
  std::string attacked(const std::string &sql) {
    std::string copy = dir.file("copy.ctxdb");
    std::filesystem::remove(copy);
    raw_sql(path, "VACUUM INTO '" + copy + "'");
    raw_sql(copy, "DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete; " + sql);
    Engine db(copy, "");
    // The chain alone is fooled by each of these attacks.
    CHECK(field(db.verify(std::nullopt), "ok") == "true");
    return db.verify_with(R"({"anchor":)" + anchor + "}");
  }
};

const char *kS1 = "(SELECT session_no FROM chains WHERE session_id='s1')";

} // namespace

TEST_CASE("an anchor is an RFC 6962 Merkle root over the events in append order") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  Engine db(path, "");
  std::string empty = db.anchor("");
  CHECK(field(empty, "events") == "0");
  CHECK(field(empty, "root") == util::to_hex(util::sha256("")));
  CHECK(field(empty, "heads") == "[]");
  db.session_create(session("s"));
  db.append("s", kNote);
  db.append("s", kNote);
  std::vector<util::Digest> h = event_hashes(path);
  REQUIRE(h.size() == 3);
  // RFC 6962 §2.1: the split is at the largest power of two below n.
  std::string three = db.anchor("");
  CHECK(field(three, "root") == util::to_hex(node(node(leaf(h[0]), leaf(h[1])), leaf(h[2]))));
  CHECK(field(three, "sessions") == "1");
  CHECK(field(three, "heads") ==
        R"([{"session_id":"s","seq":3,"hash":")" + util::to_hex(h[2]) + "\"}]");
  CHECK(db.anchor("{}") == three); // stable: the same file, the same anchor
  for (int i = 0; i < 3; ++i) db.append("s", kNote);
  h = event_hashes(path);
  util::Digest four = node(node(leaf(h[0]), leaf(h[1])), node(leaf(h[2]), leaf(h[3])));
  CHECK(field(db.anchor(""), "root") == util::to_hex(node(four, node(leaf(h[4]), leaf(h[5])))));
  // The file extends every earlier anchor.
  for (const std::string &a : {empty, three}) {
    std::string r = db.verify_with(R"({"anchor":)" + a + "}");
    CHECK(field(r, "ok") == "true");
    CHECK(object_field(r, "anchor", "ok") == "true");
  }
}

TEST_CASE("an anchor catches what rewriting the file hides from the chain") {
  AnchoredFile f;
  SUBCASE("a cut tail with the chain head rewritten to match") {
    std::string r = f.attacked(std::string("DELETE FROM events WHERE seq=4 AND session_no=") + kS1 +
                               "; UPDATE chains SET last_seq=3, last_hash=(SELECT hash FROM "
                               "events e WHERE e.session_no=chains.session_no AND e.seq=3) "
                               "WHERE session_id='s1'");
    CHECK(field(r, "ok") == "false");
    CHECK(object_field(r, "anchor", "problem") ==
          "session 's1': the anchored head, seq 4, is missing (the session or the end of its "
          "chain was deleted)");
  }
  SUBCASE("a deleted session") {
    std::string r = f.attacked(std::string("DELETE FROM events WHERE session_no=") + kS1 +
                               "; DELETE FROM sessions WHERE id='s1';"
                               "DELETE FROM chains WHERE session_id='s1'");
    CHECK(object_field(r, "anchor", "ok") == "false");
    CHECK(object_field(r, "anchor", "problem").find("session 's1'") != std::string::npos);
  }
  SUBCASE("two events of different sessions swapped in the append order") {
    std::string r = f.attacked("UPDATE events SET pos=-pos WHERE pos IN (3,4);"
                               "UPDATE events SET pos=7-pos WHERE pos IN (-3,-4)");
    CHECK(object_field(r, "anchor", "problem").find("not the anchored ones") != std::string::npos);
  }
  SUBCASE("a head rewritten: the last event replaced by another, properly chained") {
    std::string copy = f.dir.file("rewritten.ctxdb");
    raw_sql(f.path, "VACUUM INTO '" + copy + "'");
    raw_sql(copy, std::string("DROP TRIGGER events_no_delete; DELETE FROM events WHERE seq=4 AND "
                              "session_no=") +
                      kS1 +
                      "; UPDATE chains SET last_seq=3, last_hash=(SELECT hash FROM events e "
                      "WHERE e.session_no=chains.session_no AND e.seq=3) WHERE session_id='s1'");
    Engine db(copy, "");
    db.append("s1", R"({"type":"Note","actor":"agent","payload":{"text":"forged"}})");
    CHECK(field(db.verify(std::nullopt), "ok") == "true");
    std::string r = db.verify_with(R"({"anchor":)" + f.anchor + "}");
    CHECK(object_field(r, "anchor", "problem") ==
          "session 's1': the anchored head, seq 4, differs from the anchored one (the chain was "
          "rewritten)");
  }
}

TEST_CASE("an anchor catches the commits lost with a -wal file") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb"), copy = dir.file("copy.ctxdb");
  {
    Engine db(path, "");
    db.session_create(session("s"));
  } // closing checkpoints the WAL into the file
  Engine db(path, R"({"checkpoint":"inline"})");
  db.append("s", kNote); // in the WAL only: no checkpoint before 1000 pages
  std::string anchor = db.anchor("");
  CHECK(field(anchor, "events") == "2");
  std::filesystem::copy_file(path, copy); // the file without its -wal
  Engine lost(copy, "");
  CHECK(field(lost.verify(std::nullopt), "ok") == "true");
  std::string r = lost.verify_with(R"({"anchor":)" + anchor + "}");
  CHECK(field(r, "ok") == "false");
  CHECK(object_field(r, "anchor", "problem") ==
        "session 's': the anchored head, seq 2, is missing (the session or the end of its chain "
        "was deleted)");
}

TEST_CASE("a malformed anchor or verify option is an error naming it, not a failed check") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(session("s"));
  std::string good = db.anchor("");
  auto with = [&](const std::string &anchor) {
    return code_of([&] { db.verify_with(R"({"anchor":)" + anchor + "}"); });
  };
  CHECK(with(good) == Code::kOk);
  CHECK(with("{}") == Code::kInvalidArg);
  std::string bad_root = good;
  bad_root.replace(bad_root.find("\"root\":\"") + 8, 1, "Z");
  CHECK(with(bad_root) == Code::kInvalidArg);
  std::string bad_format = good;
  bad_format.replace(bad_format.find("v1"), 2, "v9");
  CHECK(with(bad_format) == Code::kInvalidArg);
  std::string miscount = good;
  miscount.replace(miscount.find("\"sessions\":1"), 12, "\"sessions\":2");
  CHECK(message_of([&] {
          db.verify_with(R"({"anchor":)" + miscount + "}");
        }).find("\"sessions\" is not the number of \"heads\"") != std::string::npos);
  CHECK(code_of([&] { db.verify_with(R"({"artifacts":"some"})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { db.verify_with(R"({"session":"s"})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { db.verify_with(R"({"session_id":"nope"})"); }) == Code::kNotFound);
  CHECK(code_of([&] { db.verify_with("{"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { db.anchor(R"({"x":1})"); }) == Code::kInvalidArg);
}

} // namespace tamper_test
