// event_log.hpp — the append-only, hash-chained event log: the only source
// of truth (DESIGN §1, §4).
//
// Every write runs in one BEGIN IMMEDIATE transaction together with the
// observers (the projections), so a reader never sees an event without its
// projections, and a failed call leaves the file as it was.
#pragma once

#include "log/event.hpp"
#include "log/event_parser.hpp"
#include "store/store.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ctxdb::log {

// A projection fed by the log inside the append transaction.
class EventObserver {
public:
  virtual ~EventObserver() = default;
  virtual void on_append(const Event &e) = 0;
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

struct VerifyReport {
  bool ok = true;
  int64_t sessions = 0;
  int64_t events = 0;
  // The first broken event, when !ok.
  std::string session_id;
  int64_t seq = 0;
  std::string event_id;
  std::string problem;
};

class EventLog {
public:
  explicit EventLog(store::Store &store) : store_(store) {}

  void add_observer(EventObserver *o) { observers_.push_back(o); }

  // Creates a session; its SessionStarted event is returned.
  Event create_session(std::string_view json);
  Event append(std::string_view session_id, std::string_view json);
  BatchResult append_batch(std::string_view session_id, std::string_view ndjson);
  ImportResult import(std::string_view ndjson);

  std::optional<Event> find(std::string_view id);
  // Up to `limit` events of a session with from_seq <= seq <= to_seq.
  std::vector<Event> read_session(std::string_view session_id, int64_t from_seq, int64_t to_seq,
                                  int64_t limit);
  // Up to `limit` events of any session with pos > after_pos.
  std::vector<Event> read_all(int64_t after_pos, int64_t limit);
  bool session_exists(std::string_view session_id);

  VerifyReport verify(std::optional<std::string_view> session_id);

private:
  struct Head {
    int64_t session_no = 0;
    int64_t seq = 0;
    util::Digest hash{};
    int64_t ts = 0;
    bool dirty = false;
  };
  // The chain heads a transaction has touched, written back once at its end.
  using Heads = std::unordered_map<std::string, Head>;

  // The head of a session's chain, or nullptr for an unknown session.
  Head *head(Heads &heads, const std::string &session_id);
  // Starts the chain of a new session (its SessionStarted is being placed).
  Head *new_chain(Heads &heads, const std::string &session_id);
  void save_heads(Heads &heads);

  // Places a host's draft after its session's head and stores it; returns
  // the stored event, or the existing one for an identical retry.
  Event place(EventDraft &draft, Heads &heads);
  // place() in a transaction of its own.
  Event append_one(EventDraft &draft);
  // Checks an imported event against the head it must follow.
  bool place_imported(const Event &e, Heads &heads);
  void check_parent(const Event &e);
  void insert(Event &e, Head &h);

  template <class Fn> void for_each_line(std::string_view ndjson, Fn &&fn);

  store::Store &store_;
  EventParser parser_;
  std::vector<EventObserver *> observers_;
};

} // namespace ctxdb::log
