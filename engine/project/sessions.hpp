// sessions.hpp — the sessions projection: one row per SessionStarted event,
// joined at read time with the chain head for counts and times, so appends
// to an existing session cost this projection nothing.
#pragma once

#include "log/event_log.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::project {

class Sessions : public Projection {
public:
  explicit Sessions(store::Store &store) : store_(store) {}

  void on_append(const log::Event &e) override;
  std::span<const char *const> tables() const override;

  // The session object of schema/json (id, agent_id, started_event_id,
  // created_ts, last_ts, event_count, last_seq, meta), or nullopt.
  std::optional<std::string> get_json(std::string_view id);
  // A JSON array of every session object, oldest first.
  std::string list_json();
  // The session objects of the child sessions the event spawned.
  std::vector<std::string> spawned_by(std::string_view event_id);

private:
  void check_parent(const log::Event &e, const std::optional<std::string> &parent,
                    const std::optional<std::string> &spawner);

  store::Store &store_;
  simdjson::dom::parser parser_;
};

} // namespace ctxdb::project
