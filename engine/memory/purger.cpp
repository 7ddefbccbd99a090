#include "memory/purger.hpp"

#include "error.hpp"
#include "json/parse.hpp"

namespace ctxdb::memory {

namespace {

constexpr char kEvent[] = "SELECT type,payload FROM events WHERE id=?";
constexpr char kRecord[] = "INSERT OR IGNORE INTO purges(event_id,purged_by) VALUES(?,?)";
constexpr char kRemove[] = "UPDATE events SET payload=NULL WHERE id=? AND payload IS NOT NULL";
// memory_fts's structure record: which segments form the index, by level.
constexpr char kStructure[] = "SELECT block FROM memory_fts_data WHERE id=10";

// FTS5 as Debian 12 ships it (SQLite 3.40.1) adds about two empty levels
// to an index's structure on every 'optimize' once the index spans more
// than one page, and calls an index of more than 2000 levels corrupt: a
// purge every time would break memory writes after a thousand purges. A
// 'rebuild' (from the content table, which no longer holds the purged
// memory) starts the structure afresh; it costs about five times an
// optimize, so it runs only once the levels pile up.
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

// The number of levels in memory_fts's structure (a 4-byte cookie, then
// the level count), 0 when the index has no structure record yet.
int64_t index_levels(store::Store &store) {
  auto q = store.statement(kStructure);
  if (!q->executeStep()) return 0;
  SQLite::Column block = q->getColumn(0);
  const auto *p = static_cast<const unsigned char *>(block.getBlob());
  const unsigned char *end = p + block.getBytes();
  if (end - p < 5) return 0;
  p += 4;
  return int64_t(read_varint(p, end));
}

} // namespace

void Purger::on_append(const log::Event &e) {
  if (e.type != "MemoryDeleted") return;
  simdjson::dom::element p = payloads_.get(e);
  if (p.is_null() || project::string_field(p, "mode") != "purge") return;
  Pending purge{e.id, std::string(project::string_field(p, "memory_id")), {}};
  simdjson::dom::array ids;
  if (!p["purged_event_ids"].get(ids))
    for (simdjson::dom::element id : ids) purge.event_ids.emplace_back(id.get_string().value());
  pending_.push_back(std::move(purge));
  secure_delete(true);
}

void Purger::secure_delete(bool on) {
  if (secure_ == on) return;
  store_.db().exec(on ? "PRAGMA secure_delete=ON" : "PRAGMA secure_delete=OFF");
  secure_ = on;
}

void Purger::discard() {
  pending_.clear();
  secure_delete(false);
}

void Purger::flush() {
  std::vector<Pending> pending = std::move(pending_);
  pending_.clear();
  simdjson::dom::parser parser;
  for (const Pending &purge : pending) {
    for (const std::string &id : purge.event_ids) {
      auto q = store_.statement(kEvent);
      store::bind_text(*q, 1, id);
      auto refuse = [&](const std::string &why) {
        throw Error(Code::kInvalidArg, "MemoryDeleted '" + purge.purged_by +
                                           "': purged_event_ids: '" + id + "' " + why);
      };
      if (!q->executeStep()) refuse("is not an event of this database");
      std::string type = q->getColumn(0).getString();
      if (type != "MemoryWritten" && type != "MemoryUpdated" && type != "MemoryDeleted")
        refuse("is a " + type + "; a purge removes only Memory events");
      // An already removed payload (an imported purge) has nothing to check.
      if (!q->getColumn(1).isNull()) {
        std::string payload = q->getColumn(1).getString();
        simdjson::dom::element doc = json::parse(parser, payload, "payload");
        if (project::string_field(doc, "memory_id") != purge.memory_id)
          refuse("is not an event of memory '" + purge.memory_id + "'");
      }
      q->reset();
      auto record = store_.statement(kRecord);
      store::bind_text(*record, 1, id);
      store::bind_text(*record, 2, purge.purged_by);
      record->exec();
      auto remove = store_.statement(kRemove);
      store::bind_text(*remove, 1, id);
      remove->exec();
    }
  }
  if (pending.empty()) return;
  // The memories projection deleted the purged memory's terms from
  // memory_fts; merging every segment into one drops them from the file
  // (so does a rebuild, when the structure needs one: kMaxLevels).
  store_.db().exec(index_levels(store_) > kMaxLevels
                       ? "INSERT INTO memory_fts(memory_fts) VALUES('rebuild')"
                       : "INSERT INTO memory_fts(memory_fts) VALUES('optimize')");
  secure_delete(false);
}

} // namespace ctxdb::memory
