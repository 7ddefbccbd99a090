// The artifact store: content-addressed puts (whole and streaming), reads
// by bytes and lines, previews, search, listing, and what bad input and
// damaged files give.
#include "artifact/artifact_store.hpp"
#include "artifact/preview.hpp"
#include "artifact/search.hpp"
#include "engine.hpp"
#include "test_util.hpp"
#include "util/sha256.hpp"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <random>
#include <string>
#include <vector>

namespace artifact_test {

using namespace ctxdb;
using namespace ctxdb::artifact;
using test::code_of;
using test::raw_sql;

namespace {

int64_t count(store::Store &s, const char *sql) { return s.db().execAndGet(sql).getInt64(); }

// A store and an artifact store over a scratch file.
struct Fixture {
  explicit Fixture(Options o = {}) : file(dir.file("a.ctxdb")), db(file, {}), art(db, o) {}
  test::TempDir dir;
  std::string file;
  store::Store db;
  ArtifactStore art;
};

Meta meta(Kind kind, std::string event_id = "", std::string role = "output") {
  Meta m;
  m.kind = kind;
  m.event_id = std::move(event_id);
  m.role = std::move(role);
  return m;
}

Meta ref(std::string event_id) { return meta(Kind::kOther, std::move(event_id)); }

SearchOptions opts(int64_t before, int64_t after, int64_t max = 100, bool ignore_case = false) {
  SearchOptions o;
  o.before = before;
  o.after = after;
  o.max_matches = max;
  o.ignore_case = ignore_case;
  return o;
}

Options small_chunks(size_t n = 64) {
  Options o;
  o.chunk_size = n;
  return o;
}

// Log-like text: numbered lines of varying length.
std::string log_text(size_t lines, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::string s;
  for (size_t i = 1; i <= lines; ++i) {
    s += "line " + std::to_string(i) + ":";
    s.append(rng() % 40, char('a' + rng() % 26));
    s += '\n';
  }
  return s;
}

std::string random_bytes(size_t n, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char &c : s) c = char(rng());
  return s;
}

// Lines first..first+count-1 of s, each with its '\n' (the reference).
std::string lines_of(const std::string &s, int64_t first, int64_t count) {
  std::string out;
  int64_t line = 1;
  size_t pos = 0;
  while (pos < s.size() && line < first + count) {
    size_t nl = s.find('\n', pos);
    size_t end = nl == std::string::npos ? s.size() : nl + 1;
    if (line >= first) out += s.substr(pos, end - pos);
    pos = end;
    ++line;
  }
  return out;
}

std::string expected_id(const std::string &s) { return "art_" + util::to_hex(util::sha256(s)); }

} // namespace

TEST_CASE("an artifact reads back exactly what was put, at every size around a chunk") {
  Fixture f;
  size_t chunk = f.art.options().chunk_size;
  for (size_t n : {size_t(0), size_t(1), chunk - 1, chunk, chunk + 1, 5 * chunk + 17}) {
    CAPTURE(n);
    std::string content = log_text(n / 30 + 1, unsigned(n)).substr(0, n);
    content.resize(n, 'x');
    std::string id = f.art.put(content, {});
    CHECK(id == expected_id(content));
    CHECK(f.art.read(id) == content);
    Info i = f.art.info(id);
    CHECK(i.raw_size == int64_t(n));
    CHECK(i.chunk_count == int64_t((n + chunk - 1) / chunk));
    CHECK(i.chunk_size == int64_t(chunk));
  }
}

TEST_CASE("the same content is stored once; every put adds its reference") {
  Fixture f(small_chunks());
  std::string content = log_text(50);
  Meta m;
  m.kind = Kind::kCommandLog;
  m.mime = "text/plain";
  m.name = "build.log";
  m.event_id = "evt_1";
  std::string a = f.art.put(content, m);
  m.kind = Kind::kFile; // ignored: the content is described by its first put
  m.event_id = "evt_2";
  m.role = "input";
  std::string b = f.art.put(content, m);
  auto w = f.art.writer(ref("evt_3"));
  w.write(content.substr(0, 100));
  w.write(content.substr(100));
  std::string c = w.finish();
  CHECK(a == b);
  CHECK(b == c);
  CHECK(count(f.db, "SELECT count(*) FROM artifacts") == 1);
  CHECK(count(f.db, "SELECT count(DISTINCT artifact_no) FROM artifact_chunks") == 1);
  Info i = f.art.info(a);
  CHECK(i.kind == Kind::kCommandLog);
  CHECK(i.name == "build.log");
  CHECK(i.mime == "text/plain");
  REQUIRE(i.refs.size() == 3);
  CHECK(i.refs[0].event_id == "evt_1");
  CHECK(i.refs[1].role == "input");
  CHECK(i.refs[2].role == "output");
  // The same reference twice is one reference.
  f.art.put(content, ref("evt_1"));
  CHECK(f.art.info(a).refs.size() == 3);
}

TEST_CASE("incompressible chunks are stored raw, text as zstd") {
  Fixture f;
  std::string noise = random_bytes(600 * 1024);
  std::string text = log_text(30000);
  std::string n = f.art.put(noise, meta(Kind::kImage));
  std::string t = f.art.put(text, {});
  CHECK(f.art.read(n) == noise);
  CHECK(f.art.read(t) == text);
  CHECK(count(f.db, "SELECT count(*) FROM artifact_chunks c JOIN artifacts a ON a.no=c.artifact_no"
                    " WHERE a.kind='image' AND c.codec='raw'") == 3);
  CHECK(f.art.info(n).stored_size == int64_t(noise.size()));
  Info ti = f.art.info(t);
  CHECK(ti.stored_size < ti.raw_size / 2);
  CHECK(ti.line_count == 30000);
}

TEST_CASE("a streaming put gives the same id and bytes whatever the pieces") {
  std::string content = log_text(400);
  for (size_t piece : {size_t(1), size_t(7), size_t(64), size_t(65), size_t(1000)}) {
    CAPTURE(piece);
    Fixture f(small_chunks());
    auto w = f.art.writer({});
    for (size_t at = 0; at < content.size(); at += piece) w.write(content.substr(at, piece));
    std::string id = w.finish();
    CHECK(id == expected_id(content));
    CHECK(f.art.read(id) == content);
    CHECK(f.art.info(id).chunk_count == int64_t((content.size() + 63) / 64));
  }
}

TEST_CASE("byte ranges decode the chunks they cross; past the end is an error or clamps") {
  Fixture f(small_chunks());
  std::string content = log_text(100);
  std::string id = f.art.put(content, {});
  for (int64_t off : {0, 1, 63, 64, 65, 127, 128, 1000}) {
    for (int64_t len : {0, 1, 63, 64, 65, 200}) {
      CAPTURE(off);
      CAPTURE(len);
      CHECK(f.art.read_range(id, off, len) == content.substr(size_t(off), size_t(len)));
    }
  }
  int64_t size = int64_t(content.size());
  CHECK(f.art.read_range(id, size - 3, 100) == content.substr(content.size() - 3));
  CHECK(f.art.read_range(id, size, 10).empty());
  CHECK(f.art.read_range(id, 0, INT64_MAX) == content);
  CHECK(code_of([&] { f.art.read_range(id, size + 1, 1); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.art.read_range(id, -1, 1); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.art.read_range(id, 0, -1); }) == Code::kInvalidArg);
}

TEST_CASE("line ranges across chunk boundaries") {
  Fixture f(small_chunks(50));
  for (std::string content : {log_text(60), log_text(60) + "no newline at the end", std::string(),
                              std::string("\n\n\n")}) {
    std::string id = f.art.put(content, {});
    int64_t lines = f.art.info(id).line_count;
    for (int64_t first = 1; first <= lines + 1; ++first) {
      for (int64_t n : {0, 1, 2, 5, 1000}) {
        CAPTURE(first);
        CAPTURE(n);
        CHECK(f.art.read_lines(id, first, n) == lines_of(content, first, n));
      }
    }
    CHECK(code_of([&] { f.art.read_lines(id, 0, 1); }) == Code::kInvalidArg);
    CHECK(code_of([&] { f.art.read_lines(id, lines + 2, 1); }) == Code::kInvalidArg);
    CHECK(code_of([&] { f.art.read_lines(id, 1, -1); }) == Code::kInvalidArg);
  }
}

TEST_CASE("the streaming reader stops when asked and checks what it gives") {
  Fixture f(small_chunks());
  std::string content = log_text(100);
  std::string id = f.art.put(content, {});
  Layout l = f.art.layout(id);
  std::string got;
  int pieces = 0;
  f.art.scan(l, 10, 200, [&](std::string_view p) {
    got.append(p);
    return ++pieces < 2;
  });
  CHECK(pieces == 2);
  CHECK(got == content.substr(10, 54 + 64));
}

TEST_CASE("previews: head, tail, head+tail by lines and bytes") {
  std::string content = "one\ntwo\nthree\nfour\nfive\nsix\n";
  Fixture f(small_chunks(5));
  std::string id = f.art.put(content, {});
  auto both = [&](PreviewSpec spec) {
    Preview a = preview(f.art, id, spec);
    Preview b = preview_text(content, spec);
    CHECK(a.text == b.text);
    CHECK(a.omitted_lines == b.omitted_lines);
    CHECK(a.omitted_bytes == b.omitted_bytes);
    return a;
  };
  Preview p = both({PreviewMode::kHead, 2, -1});
  CHECK(p.text == "one\ntwo\n");
  CHECK(p.omitted_lines == 4);
  CHECK(p.omitted_bytes == int64_t(content.size()) - 8);
  CHECK(both({PreviewMode::kTail, 2, -1}).text == "five\nsix\n");
  p = both({PreviewMode::kHeadTail, 3, -1});
  CHECK(p.text == "one\ntwo\n… [3 lines / 16 bytes omitted] …\nsix\n");
  // Lines asked: a byte limit drops whole lines, never cuts one.
  CHECK(both({PreviewMode::kHead, 10, 10}).text == "one\ntwo\n");
  CHECK(both({PreviewMode::kTail, 10, 10}).text == "five\nsix\n");
  CHECK(both({PreviewMode::kHead, 10, 2}).text.empty());
  // Bytes alone cut anywhere a character ends.
  CHECK(both({PreviewMode::kHead, -1, 6}).text == "one\ntw");
  CHECK(both({PreviewMode::kTail, -1, 6}).text == "e\nsix\n");
  // Content within the limits comes back whole, with no marker.
  CHECK(both({PreviewMode::kHeadTail, 6, -1}).text == content);
  CHECK(both({PreviewMode::kHeadTail, -1, -1}).text == content);
  CHECK(code_of([&] { preview(f.art, id, {PreviewMode::kHead, -2, -1}); }) == Code::kInvalidArg);
}

TEST_CASE("previews never cut inside a UTF-8 character") {
  // "é" is 2 bytes, "€" 3, "😀" 4: every byte limit lands in or after one.
  std::string content = "aé€😀b€😀é\n";
  for (int64_t limit = 0; limit <= int64_t(content.size()); ++limit) {
    CAPTURE(limit);
    for (PreviewMode mode : {PreviewMode::kHead, PreviewMode::kTail, PreviewMode::kHeadTail}) {
      Preview p = preview_text(content, {mode, -1, limit});
      std::string text = p.text;
      if (mode == PreviewMode::kHeadTail && text != content) {
        size_t m = text.find("… [");
        REQUIRE(m != std::string::npos);
        size_t end = text.find("…\n", m + 3);
        size_t from = m > 0 && text[m - 1] == '\n' ? m - 1 : m; // the '\n' assemble adds
        text = text.substr(0, from) + text.substr(end + 4);
      }
      // Every cut is on a character boundary: the pieces are whole
      // characters of the content, so it still decodes.
      for (size_t i = 0; i < text.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (i == 0 || (c & 0xC0) != 0x80) continue;
        unsigned char prev = static_cast<unsigned char>(text[i - 1]);
        CHECK(prev >= 0x80);
      }
      CHECK(int64_t(text.size()) <= limit);
      if (mode == PreviewMode::kHead) CHECK(content.starts_with(text));
      if (mode == PreviewMode::kTail) CHECK(content.ends_with(text));
      if (!text.empty()) {
        CHECK((static_cast<unsigned char>(text[0]) & 0xC0) != 0x80);
        unsigned char last = static_cast<unsigned char>(text.back());
        CHECK((last < 0x80 || content.find(text) != std::string::npos));
      }
    }
  }
  CHECK(preview_text(content, {PreviewMode::kHead, -1, 2}).text == "a");
  CHECK(preview_text(content, {PreviewMode::kHead, -1, 3}).text == "aé");
  CHECK(preview_text(content, {PreviewMode::kTail, -1, 3}).text == "é\n");
}

TEST_CASE("search finds lines across chunk boundaries, with numbers and context") {
  Fixture f(small_chunks(16));
  std::string content;
  for (int i = 1; i <= 40; ++i)
    content += (i % 10 == 0 ? "ERROR: step " : "ok step ") + std::to_string(i) + " done\n";
  std::string id = f.art.put(content, {});
  SearchResult r = search(f.art, id, "ERROR: step \\d+ done$", opts(2, 1));
  REQUIRE(r.matches.size() == 4);
  CHECK_FALSE(r.truncated);
  for (size_t k = 0; k < 4; ++k) {
    const Match &m = r.matches[k];
    int64_t line = int64_t(k + 1) * 10;
    CHECK(m.line == line);
    CHECK(m.text == "ERROR: step " + std::to_string(line) + " done");
    CHECK(m.column == 0);
    CHECK(m.length == int64_t(m.text.size()));
    CHECK(content.substr(size_t(m.offset), m.text.size()) == m.text);
    REQUIRE(m.before.size() == 2);
    CHECK(m.before[0].line == line - 2);
    CHECK(m.before[0].text == "ok step " + std::to_string(line - 2) + " done");
    CHECK(m.before[1].text == "ok step " + std::to_string(line - 1) + " done");
    if (line < 40) {
      REQUIRE(m.after.size() == 1);
      CHECK(m.after[0].line == line + 1);
      CHECK(m.after[0].text == "ok step " + std::to_string(line + 1) + " done");
    } else {
      CHECK(m.after.empty());
    }
  }
  r = search(f.art, id, "error", opts(0, 0, 2, true));
  CHECK(r.matches.size() == 2);
  CHECK(r.truncated);
  CHECK(search(f.art, id, "step 1\\b").matches.size() == 1);
  CHECK(search(f.art, id, "^ok step 3 ").matches.at(0).line == 3);
  // A pattern that would match across a line end matches nothing.
  CHECK(search(f.art, id, "done\\nERROR").matches.empty());
}

TEST_CASE("search agrees with a line-by-line reference on random logs") {
  for (size_t chunk : {size_t(7), size_t(64), size_t(1000)}) {
    Fixture f(small_chunks(chunk));
    std::string content = log_text(300, unsigned(chunk)) + "tail without newline qq";
    std::string id = f.art.put(content, {});
    SearchOptions o = opts(3, 2, 1000);
    SearchResult r = search(f.art, id, "q[a-z]*q", o);
    std::vector<std::string> lines;
    for (size_t pos = 0; pos < content.size();) {
      size_t nl = content.find('\n', pos);
      size_t end = nl == std::string::npos ? content.size() : nl;
      lines.push_back(content.substr(pos, end - pos));
      pos = end + 1;
    }
    std::vector<int64_t> want;
    for (size_t i = 0; i < lines.size(); ++i) {
      size_t q = lines[i].find('q');
      if (q != std::string::npos && lines[i].find('q', q + 1) != std::string::npos)
        want.push_back(int64_t(i + 1));
    }
    REQUIRE(r.matches.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      const Match &m = r.matches[k];
      CHECK(m.line == want[k]);
      CHECK(m.text == lines[size_t(want[k] - 1)]);
      size_t nb = size_t(std::min<int64_t>(3, want[k] - 1));
      REQUIRE(m.before.size() == nb);
      for (size_t b = 0; b < nb; ++b) {
        CHECK(m.before[b].line == want[k] - int64_t(nb) + int64_t(b));
        CHECK(m.before[b].text == lines[size_t(m.before[b].line - 1)]);
      }
      size_t na = size_t(std::min<int64_t>(2, int64_t(lines.size()) - want[k]));
      REQUIRE(m.after.size() == na);
      for (size_t a = 0; a < na; ++a) CHECK(m.after[a].text == lines[size_t(want[k]) + a]);
    }
  }
}

TEST_CASE("an invalid pattern names the error and its offset") {
  Fixture f;
  std::string id = f.art.put("text\n", {});
  try {
    search(f.art, id, "ab(c");
    FAIL("an invalid pattern was accepted");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kInvalidArg);
    CHECK(std::string(e.what()).find("ab(c") != std::string::npos);
    CHECK(std::string(e.what()).find("offset 4") != std::string::npos);
  }
  CHECK(code_of([&] { search(f.art, id, "x", opts(-1, 0)); }) == Code::kInvalidArg);
}

TEST_CASE("unknown and malformed ids") {
  Fixture f;
  std::string unknown = "art_" + std::string(64, 'a');
  CHECK(code_of([&] { f.art.read(unknown); }) == Code::kNotFound);
  CHECK(code_of([&] { f.art.info(unknown); }) == Code::kNotFound);
  CHECK(code_of([&] { f.art.read_range(unknown, 0, 1); }) == Code::kNotFound);
  CHECK(code_of([&] { f.art.read_lines(unknown, 1, 1); }) == Code::kNotFound);
  CHECK(code_of([&] { preview(f.art, unknown, {}); }) == Code::kNotFound);
  CHECK(code_of([&] { search(f.art, unknown, "x"); }) == Code::kNotFound);
  for (std::string bad : {std::string(), std::string("art_"), std::string("art_xyz"),
                          "evt_" + std::string(64, 'a'), "art_" + std::string(64, 'A')})
    CHECK(code_of([&] { f.art.read(bad); }) == Code::kInvalidArg);
}

TEST_CASE("a damaged chunk is reported as corrupt, never read as other bytes") {
  test::TempDir dir;
  std::string file = dir.file("a.ctxdb");
  std::string content = log_text(200);
  std::string id;
  {
    store::Store db(file, {});
    ArtifactStore art(db, small_chunks(256));
    id = art.put(content, {});
  }
  auto damaged = [&](const std::string &sql, bool others_read = true) {
    raw_sql(file, "DROP TRIGGER IF EXISTS artifact_chunks_no_update; " + sql);
    store::Store db(file, {});
    ArtifactStore art(db, small_chunks(256));
    CHECK(code_of([&] { art.read(id); }) == Code::kCorrupt);
    CHECK(code_of([&] { art.read_range(id, 600, 10); }) == Code::kCorrupt);
    CHECK(code_of([&] { search(art, id, "line 10:"); }) == Code::kCorrupt);
    // Chunks the read does not need still read.
    if (others_read) CHECK(art.read_range(id, 0, 100) == content.substr(0, 100));
  };
  SUBCASE("a zstd frame's bytes zeroed") {
    damaged("UPDATE artifact_chunks SET data=zeroblob(length(data)) WHERE idx=2");
  }
  SUBCASE("a raw chunk of the right length but other bytes") {
    damaged("UPDATE artifact_chunks SET codec='raw', data=randomblob(raw_size) WHERE idx=2");
  }
  SUBCASE("a changed hash") {
    damaged("UPDATE artifact_chunks SET sha256=zeroblob(32) WHERE idx=2");
  }
  SUBCASE("a zstd frame replaced by one of other bytes") {
    damaged("UPDATE artifact_chunks SET data=(SELECT data FROM artifact_chunks WHERE idx=3) "
            "WHERE idx=2");
  }
  SUBCASE("a missing chunk") {
    raw_sql(file, "DROP TRIGGER artifact_chunks_no_delete;"
                  "DELETE FROM artifact_chunks WHERE idx=2");
    damaged("", false); // the artifact no longer adds up: every read says so
  }
}

// Reads of four chunks or more hash each frame on a second thread while it
// decompresses; what they give, and what a damaged chunk gives, must not
// depend on it.
TEST_CASE("reads of many chunks (hashed aside) give the bytes and errors of single chunks") {
  test::TempDir dir;
  std::string file = dir.file("a.ctxdb");
  std::string content = log_text(400, 3); // ~40 chunks of 256 bytes
  std::string id;
  {
    store::Store db(file, {});
    ArtifactStore art(db, small_chunks(256));
    id = art.put(content, {});
    REQUIRE(art.info(id).chunk_count >= 30);
    std::mt19937 rng(11);
    for (int k = 0; k < 200; ++k) {
      int64_t off = rng() % content.size(), len = rng() % 4000;
      CAPTURE(off);
      CAPTURE(len);
      CHECK(art.read_range(id, off, len) == content.substr(size_t(off), size_t(len)));
      std::string got;
      int64_t stop_after = 1 + rng() % 8, pieces = 0;
      art.scan(art.layout(id), off, len, [&](std::string_view p) {
        got.append(p);
        return ++pieces < stop_after;
      });
      CHECK(content.substr(size_t(off), size_t(len)).starts_with(got));
      CHECK(pieces <= stop_after);
    }
  }
  int64_t chunks = 0;
  {
    store::Store db(file, {});
    chunks = count(db, "SELECT count(*) FROM artifact_chunks");
  }
  raw_sql(file, "DROP TRIGGER artifact_chunks_no_update");
  for (int64_t bad : {int64_t(0), int64_t(1), chunks / 2, chunks - 2, chunks - 1}) {
    CAPTURE(bad);
    std::string where = " WHERE idx=" + std::to_string(bad), frame;
    {
      store::Store db(file, {});
      frame = db.db().execAndGet("SELECT data FROM artifact_chunks" + where).getString();
    }
    raw_sql(file, "UPDATE artifact_chunks SET data=zeroblob(length(data))" + where);
    {
      store::Store db(file, {});
      ArtifactStore art(db, small_chunks(256));
      CHECK(code_of([&] { art.read(id); }) == Code::kCorrupt);
      CHECK(code_of([&] { search(art, id, "line 1:"); }) == Code::kCorrupt);
      // A scan hands over every chunk before the damaged one, then fails.
      std::string got;
      CHECK(code_of([&] {
              art.scan(art.layout(id), 0, INT64_MAX, [&](std::string_view p) {
                got.append(p);
                return true;
              });
            }) == Code::kCorrupt);
      CHECK(got == content.substr(0, size_t(bad) * 256));
      // A scan that stops before it reaches the damage never sees it.
      if (bad > 0) {
        int64_t pieces = 0;
        art.scan(art.layout(id), 0, INT64_MAX, [&](std::string_view) { return ++pieces < bad; });
        CHECK(pieces == bad);
      }
    }
    std::string hex;
    for (unsigned char c : frame)
      hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15];
    raw_sql(file, "UPDATE artifact_chunks SET data=x'" + hex + "'" + where);
  }
}

TEST_CASE("a large put (hashed on a second thread) stores once and dedupes") {
  Fixture f;
  std::string content = log_text(120000); // ~3 MB: past the 1 MiB of hashing aside
  REQUIRE(content.size() > 2 * (1u << 20));
  std::string id = f.art.put(content, ref("evt_1"));
  CHECK(id == expected_id(content));
  CHECK(f.art.read(id) == content);
  int64_t chunks = f.art.info(id).chunk_count;
  // The same bytes again: the compression stops once the hash is known,
  // and the chunks it wrote are dropped.
  CHECK(f.art.put(content, ref("evt_2")) == id);
  CHECK(count(f.db, "SELECT count(*) FROM artifact_chunks") == chunks);
  CHECK(count(f.db, "SELECT count(*) FROM artifacts") == 1);
  CHECK(f.art.info(id).refs.size() == 2);
  // Other bytes of the same size: another artifact.
  std::string other = content;
  other[other.size() / 2] ^= 1;
  CHECK(f.art.put(other, {}) == expected_id(other));
  CHECK(f.art.read(expected_id(other)) == other);
}

TEST_CASE("chunks hash their stored bytes; chunks from before schema 10 hash the raw ones") {
  test::TempDir dir;
  std::string file = dir.file("a.ctxdb");
  std::string content = log_text(200);
  std::string id;
  int64_t chunks = 0;
  {
    store::Store db(file, {});
    ArtifactStore art(db, small_chunks(256));
    id = art.put(content, {});
    chunks = art.info(id).chunk_count;
    // Every chunk's sha256 is that of its stored bytes (its zstd frame).
    auto q = db.statement("SELECT sha256_of, sha256, data FROM artifact_chunks");
    int64_t seen = 0;
    while (q->executeStep()) {
      ++seen;
      CHECK(q->getColumn(0).getString() == "stored");
      std::string sha = q->getColumn(1).getString(), data = q->getColumn(2).getString();
      auto want = util::sha256(data);
      CHECK(sha == std::string(want.begin(), want.end()));
    }
    CHECK(seen == chunks);
  }
  // As a file written before schema 10 holds them: SHA-256 of the raw chunk.
  std::string sql = "DROP TRIGGER artifact_chunks_no_update;";
  for (int64_t i = 0; i < chunks; ++i) {
    std::string raw = content.substr(size_t(i) * 256, 256);
    sql += "UPDATE artifact_chunks SET sha256_of='raw', sha256=x'" +
           util::to_hex(util::sha256(raw)) + "' WHERE idx=" + std::to_string(i) + ";";
  }
  raw_sql(file, sql);
  {
    store::Store db(file, {});
    ArtifactStore art(db, small_chunks(256));
    CHECK(art.read(id) == content);
    CHECK(art.read_range(id, 300, 700) == content.substr(300, 700));
  }
  raw_sql(file, "UPDATE artifact_chunks SET data=(SELECT data FROM artifact_chunks WHERE idx=3)"
                " WHERE idx=2");
  store::Store db(file, {});
  ArtifactStore art(db, small_chunks(256));
  CHECK(code_of([&] { art.read(id); }) == Code::kCorrupt);
  CHECK(art.read_range(id, 0, 256) == content.substr(0, 256));
}

TEST_CASE("stored artifacts cannot be changed or deleted") {
  Fixture f(small_chunks());
  std::string id = f.art.put(log_text(10), ref("evt_1"));
  for (const char *sql : {"UPDATE artifacts SET name='x'", "DELETE FROM artifacts",
                          "UPDATE artifact_chunks SET data=x'00'", "DELETE FROM artifact_chunks",
                          "UPDATE artifact_refs SET role='x'", "DELETE FROM artifact_refs"}) {
    CAPTURE(sql);
    CHECK(code_of([&] {
            try {
              f.db.db().exec(sql);
            } catch (const SQLite::Exception &e) {
              throw store::to_error(e);
            }
          }) != Code::kOk);
  }
  CHECK(f.art.read(id) == log_text(10));
}

TEST_CASE("a failed or abandoned put leaves no rows") {
  Fixture f(small_chunks());
  std::string content = log_text(100);
  SUBCASE("a writer destroyed before finish") {
    {
      auto w = f.art.writer(ref("evt_1"));
      w.write(content);
    }
  }
  SUBCASE("a put inside a caller's transaction that rolls back") {
    store::Store::WriteTransaction tx(f.db);
    f.art.put(content, ref("evt_1"));
    auto w = f.art.writer({});
    w.write("other content");
    w.finish();
    CHECK(count(f.db, "SELECT count(*) FROM artifacts") == 2);
  }
  SUBCASE("a put that fails at finish") {
    // A trigger standing in for a full disk at the last insert.
    f.db.db().exec("CREATE TEMP TRIGGER fail BEFORE INSERT ON artifacts BEGIN "
                   "SELECT RAISE(ABORT, 'disk full'); END");
    CHECK_THROWS(f.art.put(content, ref("evt_1")));
    f.db.db().exec("DROP TRIGGER fail");
  }
  CHECK(count(f.db, "SELECT count(*) FROM artifacts") == 0);
  CHECK(count(f.db, "SELECT count(*) FROM artifact_chunks") == 0);
  CHECK(count(f.db, "SELECT count(*) FROM artifact_refs") == 0);
  // The store is usable afterwards.
  std::string id = f.art.put(content, {});
  CHECK(f.art.read(id) == content);
}

TEST_CASE("one writer at a time; a finished writer takes no more") {
  Fixture f;
  auto w = f.art.writer({});
  CHECK(code_of([&] { f.art.writer({}); }) == Code::kMisuse);
  w.write("abc");
  w.finish();
  CHECK(code_of([&] { w.write("d"); }) == Code::kMisuse);
  CHECK(code_of([&] { w.finish(); }) == Code::kMisuse);
  f.art.put("next", {}); // the store is free again
}

TEST_CASE("kinds by name") {
  for (Kind k : {Kind::kFile, Kind::kDiff, Kind::kToolOutput, Kind::kCommandLog, Kind::kImage,
                 Kind::kDataset, Kind::kUrlSnapshot, Kind::kOther})
    CHECK(parse_kind(kind_name(k)) == k);
  CHECK(code_of([] { parse_kind("movie"); }) == Code::kInvalidArg);
}

TEST_CASE("listing: every artifact, or a session's, with sizes and references") {
  test::TempDir dir;
  std::string file = dir.file("a.ctxdb");
  {
    Engine db(file, "");
    db.session_create(R"({"id":"s1","payload":{"agent_id":"a"}})");
    db.session_create(R"({"id":"s2","payload":{"agent_id":"a"}})");
    db.append("s1", R"({"id":"e1","type":"Note","actor":"a","payload":{}})");
    db.append("s2", R"({"id":"e2","type":"Note","actor":"a","payload":{}})");
  }
  store::Store st(file, {});
  ArtifactStore art(st);
  std::string a = art.put(log_text(1000), meta(Kind::kCommandLog, "e1"));
  std::string b = art.put("diff", meta(Kind::kDiff, "e2"));
  art.put("diff", meta(Kind::kOther, "e1", "input"));
  std::string c = art.put("loose", {});
  std::vector<Info> all = art.list();
  REQUIRE(all.size() == 3);
  CHECK(all[0].id == a);
  CHECK(all[0].kind == Kind::kCommandLog);
  CHECK(all[0].stored_size < all[0].raw_size);
  CHECK(all[2].id == c);
  CHECK(all[2].refs.empty());
  std::vector<Info> s1 = art.list("s1");
  REQUIRE(s1.size() == 2);
  CHECK(s1[0].id == a);
  CHECK(s1[1].id == b);
  REQUIRE(s1[1].refs.size() == 2);
  CHECK(s1[1].refs[0].session_id == "s1");
  CHECK(s1[1].refs[1].session_id == "s2");
  CHECK(art.list("s2").size() == 1);
  CHECK(art.list("nobody").empty());
}

} // namespace artifact_test
