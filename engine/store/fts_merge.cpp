#include "store/fts_merge.hpp"

#include <numeric>

namespace ctxdb::store {

namespace {

// FTS5 as Debian 12 ships it (SQLite 3.40.1) adds about two empty levels
// to an index's structure on every 'optimize' once the index spans more
// than one page, and calls an index of more than 2000 levels corrupt. A
// 'rebuild' (from the content table or view) starts the structure
// afresh; it costs about five times an optimize, so it runs only once
// the levels pile up.
constexpr int64_t kMaxLevels = 64;

// One SQLite varint (FTS5 writes its records with them).
uint64_t read_varint(const unsigned char *&p, const unsigned char *end) {
  uint64_t v = 0;
  for (int i = 0; i < 9 && p < end; ++i) {
    unsigned char b = *p++;
    if (i == 8) return (v << 8) | b;
    v = (v << 7) | (b & 0x7f);
    if (!(b & 0x80)) break;
  }
  return v;
}

} // namespace

int64_t FtsShape::pages() const {
  return std::accumulate(segment_pages.begin(), segment_pages.end(), int64_t{0});
}

// The record (fts5_index.c): a 4-byte cookie; the level count, the segment
// count and the write counter; then per level its merge state and segment
// count, and per segment its id and first and last leaf page.
FtsShape fts_shape(Store &store, const std::string &table) {
  SQLite::Statement q(store.db(), "SELECT block FROM \"" + table + "_data\" WHERE id=10");
  if (!q.executeStep()) return {};
  SQLite::Column block = q.getColumn(0);
  const auto *p = static_cast<const unsigned char *>(block.getBlob());
  const unsigned char *end = p + block.getBytes();
  if (end - p < 5) return {};
  p += 4;
  FtsShape shape;
  shape.levels = int64_t(read_varint(p, end));
  read_varint(p, end); // segments, counted below
  read_varint(p, end); // write counter
  for (int64_t level = 0; level < shape.levels && p < end; ++level) {
    read_varint(p, end); // merge in progress
    uint64_t segments = read_varint(p, end);
    for (uint64_t s = 0; s < segments && p < end; ++s) {
      read_varint(p, end); // segment id
      uint64_t first = read_varint(p, end), last = read_varint(p, end);
      shape.segment_pages.push_back(last >= first ? int64_t(last - first + 1) : 0);
    }
  }
  return shape;
}

void fts_merge(Store &store, const std::string &table) {
  const char *command = fts_shape(store, table).levels > kMaxLevels ? "rebuild" : "optimize";
  store.db().exec("INSERT INTO \"" + table + "\"(\"" + table + "\") VALUES('" + command + "')");
}

} // namespace ctxdb::store
