#include "memory/purger.hpp"

#include "error.hpp"
#include "store/fts_merge.hpp"
#include "json/parse.hpp"

namespace ctxdb::memory {

namespace {

constexpr char kEvent[] = "SELECT type,payload FROM events WHERE id=?";
constexpr char kRecord[] = "INSERT OR IGNORE INTO purges(event_id,purged_by) VALUES(?,?)";
constexpr char kRemove[] = "UPDATE events SET payload=NULL WHERE id=? AND payload IS NOT NULL";

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
}

void Purger::discard() { pending_.clear(); }

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
        simdjson::dom::element doc = json::parse_payload(parser, payload, id);
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
  // (store/fts_merge.hpp).
  store::fts_merge(store_, "memory_fts");
}

} // namespace ctxdb::memory
