// event_log.hpp — the append-only, hash-chained event log: the only source
// of truth (DESIGN §1, §4).
//
// Every write runs in one BEGIN IMMEDIATE transaction together with the
// observers (the projections), so a reader never sees an event without its
// projections, and a failed call leaves the file as it was.
#pragma once

#include "log/event.hpp"
#include "log/event_parser.hpp"
#include "log/spill.hpp"
#include "log/tree.hpp"
#include "store/store.hpp"

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ctxdb::log {

// A projection fed by the log inside the append transaction.
//
// An observer may keep what a transaction changes in memory (a branch's
// state, a session's counters) and write it in flush(), which runs once
// before the transaction commits; discard() runs instead when the
// transaction rolls back, and must forget everything not yet flushed.
class EventObserver {
public:
  virtual ~EventObserver() = default;
  virtual void on_append(const Event &e) = 0;
  virtual void flush() {}
  virtual void discard() {}
};

struct BatchResult {
  int64_t count = 0;
  int64_t first_seq = 0;
  int64_t last_seq = 0;
  std::string last_id;
};

struct ImportResult {
  int64_t imported = 0;
  int64_t skipped = 0;
};

// The lines of an import that are not events (the artifact records of an
// export, artifact/transfer.hpp): take returns false for a line it leaves
// to the log; end runs after the last line. Both run inside the import's
// transaction, so what they throw rolls back the events too.
struct ImportExtras {
  std::function<bool(std::string_view)> take;
  std::function<void()> end;
};

// A payload a privacy purge removed from the log (memory/purger.hpp).
struct PurgedPayload {
  std::string session_id;
  int64_t seq = 0;
  std::string event_id;
  std::string purged_by; // the MemoryDeleted event that removed it
};

struct VerifyReport {
  bool ok = true;
  int64_t sessions = 0;
  int64_t events = 0;
  // The first broken event, when !ok.
  std::string session_id;
  int64_t seq = 0;
  std::string event_id;
  std::string problem;
  // Payloads removed by a purge: still chain-valid (the chain covers their
  // hash), reported rather than counted as broken.
  std::vector<PurgedPayload> purged;
};

class EventLog {
public:
  explicit EventLog(store::Store &store) : store_(store), tree_(store) {}

  void add_observer(EventObserver *o) { observers_.push_back(o); }
  // Spills large outputs and images of appended events (log/spill.hpp);
  // none by default. Imports are never spilled: they are stored events.
  void set_spiller(Spiller *s) { spiller_ = s; }
  // The session tree every event is placed on.
  Tree &tree() { return tree_; }
  // The chain number of a session (what Event::session_no and the tree
  // use), or 0 when the session does not exist.
  int64_t session_no(std::string_view session_id);

  // What a call answers from the tables (a memory as written), read inside
  // the append's transaction, once the projections have written it and
  // before the commit: a read after the commit that failed would report a
  // stored append as failed. If it throws, nothing is written.
  using Answer = std::function<void()>;

  // Creates a session; its SessionStarted event is returned.
  Event create_session(std::string_view json);
  Event append(std::string_view session_id, std::string_view json, const Answer &answer = {});
  BatchResult append_batch(std::string_view session_id, std::string_view ndjson,
                           const Answer &answer = {});
  ImportResult import(std::string_view ndjson, const ImportExtras *extras = nullptr);

  // Appends to several sessions in one write transaction: fn places
  // events through the Batch it is given, each as create_session() and
  // append() would place it. If fn (or a placement) throws, nothing it
  // placed is written. An importer of other agents' files writes a file's
  // sessions and events this way.
  class Batch;
  void write_batch(const std::function<void(Batch &)> &fn);

  // Reads return events as stored; locate() adds their branch.
  std::optional<Event> find(std::string_view id);
  // Up to `limit` events of a session with from_seq <= seq <= to_seq.
  std::vector<Event> read_session(std::string_view session_id, int64_t from_seq, int64_t to_seq,
                                  int64_t limit);
  // Up to `limit` events of any session with pos > after_pos.
  std::vector<Event> read_all(int64_t after_pos, int64_t limit);
  // Every event in append order, read into reused Events (a replay should
  // not allocate per event). fn may modify them. A database file is read
  // on a second connection on a thread of its own, ahead of fn
  // (read_ahead.hpp), unless this connection holds events that are not
  // committed yet.
  void scan_all(const std::function<void(Event &)> &fn);
  bool session_exists(std::string_view session_id);
  // Sets branch_no and branch_id of events read from the log.
  void locate(std::span<Event> events);
  void locate(Event &e) { locate(std::span<Event>(&e, 1)); }

  VerifyReport verify(std::optional<std::string_view> session_id);

  // An event placed in the current transaction, waiting to be written.
  struct PendingRow {
    Event event;
    int64_t session_no;
  };

private:
  struct Head {
    int64_t session_no = 0;
    int64_t seq = 0;
    util::Digest hash{};
    int64_t ts = 0;
    bool dirty = false;
  };

  // What one write transaction has placed: the chain heads it touched
  // (written back by finish()) and the events not yet written, which go to
  // SQLite store::kRowsPerInsert rows at a time. Every event gets its pos when it
  // is placed, so observers see it complete.
  struct Writes {
    std::unordered_map<std::string, Head> heads;
    std::vector<PendingRow> pending;
    int64_t next_pos = 0; // 0: not read yet
    Event found;          // the stored event an identical retry returns
  };

  // The head of a session's chain, or nullptr for an unknown session.
  Head *head(Writes &w, const std::string &session_id);
  // Starts the chain of a new session (its SessionStarted is being placed).
  Head *new_chain(Writes &w, const std::string &session_id);

  // Places a host's draft after its session's head: the placed event, or
  // the existing one for an identical retry. The reference lives until the
  // next placement.
  const Event &place(EventDraft &draft, Writes &w);
  // The spill of a placed event (id and parent known, hashes not yet):
  // rewrites its payload and puts the artifacts.
  void spill(Event &e, int64_t session_no, int64_t parent_seq);
  // The payload hash a retry of `d` would have been stored with at the
  // place of `stored`, spilled as at its append.
  util::Digest retry_hash(const EventDraft &d, const Event &stored);
  // place() in a transaction of its own.
  Event append_one(EventDraft &draft, const Answer &answer = {});
  // Checks an imported event against the head it must follow; false when
  // it is already stored.
  bool place_imported(Event &e, Writes &w);
  template <class Same> const Event *prior(Writes &w, const std::string &id, Same &&same);
  // The seq of the event's parent (0 when it has none); kNotFound unless
  // the parent is an event of the same session.
  int64_t check_parent(const Event &e, const Writes &w);
  const Event *find_pending(const Writes &w, std::string_view id) const;
  // Gives the event its pos and branch, advances its head, runs the
  // observers and queues it for writing.
  const Event &enqueue(Event &&e, Head &h, Writes &w, int64_t parent_seq);
  void flush(Writes &w);
  // Writes what is queued, the heads, the tree and the observers' state;
  // the transaction may commit after.
  void finish(Writes &w);
  // Runs fn(Writes&) in a write transaction, then answer, and commits; on
  // failure the tree and the observers forget what they kept for it.
  template <class Fn> auto write(Fn &&fn, const Answer &answer = {});
  void discard();

  template <class Fn> void for_each_line(std::string_view ndjson, Fn &&fn);

  store::Store &store_;
  Tree tree_;
  EventParser parser_;
  std::vector<EventObserver *> observers_;
  Spiller *spiller_ = nullptr;
};

// The placements of one write_batch. A returned event lives until the
// next placement.
class EventLog::Batch {
public:
  const Event &create_session(std::string_view json);
  const Event &append(std::string_view session_id, std::string_view json);

private:
  friend class EventLog;
  Batch(EventLog &log, Writes &w) : log_(log), w_(w) {}
  EventLog &log_;
  Writes &w_;
};

} // namespace ctxdb::log
