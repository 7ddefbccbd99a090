#include "memory/purger.hpp"

#include "error.hpp"
#include "store/fts_merge.hpp"
#include "util/sha256.hpp"
#include "json/parse.hpp"

#include <cstring>
#include <set>

namespace ctxdb::memory {

namespace {

constexpr char kEvent[] = "SELECT type,payload,session_no,seq,payload_hash FROM events WHERE id=?";
constexpr char kRecord[] = "INSERT OR IGNORE INTO purges(event_id,purged_by) VALUES(?,?)";
constexpr char kRemove[] = "UPDATE events SET payload=NULL WHERE id=? AND payload IS NOT NULL";

} // namespace

void Purger::on_append(const log::Event &e) {
  if (e.type != "MemoryDeleted") return;
  simdjson::dom::element p = payloads_.get(e);
  if (p.is_null() || project::string_field(p, "mode") != "purge") return;
  Pending purge{e.id, std::string(project::string_field(p, "memory_id")), e.session_no, e.seq};
  simdjson::dom::array ids;
  if (!p["purged_event_ids"].get(ids))
    for (simdjson::dom::element id : ids) purge.listed.emplace_back(id.get_string().value());
  simdjson::dom::array proofs;
  if (!p["purged"].get(proofs)) {
    purge.proofs.emplace();
    for (simdjson::dom::element proof : proofs)
      purge.proofs->push_back({std::string(project::string_field(proof, "event_id")),
                               std::string(project::string_field(proof, "payload_hash"))});
  }
  pending_.push_back(std::move(purge));
}

void Purger::discard() { pending_.clear(); }

void Purger::flush() {
  std::vector<Pending> pending = std::move(pending_);
  pending_.clear();
  // Every proof first: a listed event of another chain is removed by that
  // chain's purge, which may come later in the same transaction.
  for (const Pending &purge : pending) {
    if (!purge.proofs) {
      accept_unproven(purge);
      continue;
    }
    std::set<std::string_view> listed(purge.listed.begin(), purge.listed.end());
    for (const Proof &proof : *purge.proofs) {
      if (!listed.contains(proof.event_id))
        refuse(purge, "purged", proof.event_id, "is not in purged_event_ids");
      remove(purge, proof);
    }
  }
  for (const Pending &purge : pending)
    if (purge.proofs)
      for (const std::string &id : purge.listed) check_removed(purge, id);
  if (pending.empty()) return;
  // The memories projection deleted the purged memory's terms from
  // memory_fts; merging every segment into one drops them from the file
  // (store/fts_merge.hpp).
  store::fts_merge(store_, "memory_fts");
}

void Purger::refuse(const Pending &purge, const char *field, const std::string &id,
                    const std::string &why) {
  throw Error(Code::kInvalidArg,
              "MemoryDeleted '" + purge.purged_by + "': " + field + ": '" + id + "' " + why);
}

Purger::Stored Purger::stored(const Pending &purge, const char *field, const std::string &id) {
  auto q = store_.statement(kEvent);
  store::bind_text(*q, 1, id);
  if (!q->executeStep()) refuse(purge, field, id, "is not an event of this database");
  Stored s;
  s.type = q->getColumn(0).getString();
  if (!q->getColumn(1).isNull()) s.payload = q->getColumn(1).getString();
  s.session_no = q->getColumn(2).getInt64();
  s.seq = q->getColumn(3).getInt64();
  SQLite::Column hash = q->getColumn(4);
  util::Digest d{};
  if (size_t(hash.getBytes()) == d.size()) std::memcpy(d.data(), hash.getBlob(), d.size());
  s.payload_hash = util::to_hex(d);
  if (s.type != "MemoryWritten" && s.type != "MemoryUpdated" && s.type != "MemoryDeleted")
    refuse(purge, field, id, "is a " + s.type + "; a purge removes only Memory events");
  // An already removed payload (an imported purge) has no memory to check.
  if (s.payload) {
    simdjson::dom::element doc = json::parse_payload(parser_, *s.payload, id);
    if (project::string_field(doc, "memory_id") != purge.memory_id)
      refuse(purge, field, id, "is not an event of memory '" + purge.memory_id + "'");
  }
  return s;
}

void Purger::remove(const Pending &purge, const Proof &proof) {
  const std::string &id = proof.event_id;
  Stored s = stored(purge, "purged", id);
  if (s.session_no != purge.session_no)
    refuse(purge, "purged", id,
           "is in another session: a purge removes payloads of its own session's chain "
           "only (each session holding the memory's events needs a purge of its own)");
  if (s.seq >= purge.seq) refuse(purge, "purged", id, "comes after the purge in its chain");
  if (s.payload_hash != proof.payload_hash)
    refuse(purge, "purged", id,
           "has payload_hash " + s.payload_hash + ", not " + proof.payload_hash);
  record(purge, id);
  auto q = store_.statement(kRemove);
  store::bind_text(*q, 1, id);
  q->exec();
}

// A purge in the form without proofs can only come from an older file: it
// removes nothing, and verify reports what it removed as unproven.
void Purger::accept_unproven(const Pending &purge) {
  for (const std::string &id : purge.listed) {
    if (stored(purge, "purged_event_ids", id).payload)
      refuse(purge, "purged_event_ids", id,
             "still has its payload: a purge proves each payload it removes with an entry "
             "{event_id, payload_hash} in purged");
    record(purge, id);
  }
}

void Purger::check_removed(const Pending &purge, const std::string &id) {
  auto q = store_.statement(kEvent);
  store::bind_text(*q, 1, id);
  // An event this file does not hold (an import of part of a log) has no
  // payload to leave behind.
  if (q->executeStep() && !q->getColumn(1).isNull())
    refuse(purge, "purged_event_ids", id,
           "keeps its payload: no purge of its own session's chain (purged) removes it");
}

void Purger::record(const Pending &purge, const std::string &id) {
  auto q = store_.statement(kRecord);
  store::bind_text(*q, 1, id);
  store::bind_text(*q, 2, purge.purged_by);
  q->exec();
}

} // namespace ctxdb::memory
