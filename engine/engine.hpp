// engine.hpp — one open database: the store, the event log and the
// projections it feeds, behind calls that take and return JSON text.
//
// This is what capi/ wraps. It is not thread-safe; the C handle serializes
// calls on it.
#pragma once

#include "log/event_log.hpp"
#include "project/payload_cache.hpp"
#include "project/sessions.hpp"
#include "project/state.hpp"
#include "project/stats.hpp"
#include "store/store.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb {

class Engine {
public:
  Engine(const std::string &path, std::string_view config_json);

  std::string session_create(std::string_view json);
  std::string session_get(std::string_view id);
  std::string session_list();
  bool session_exists(std::string_view id);

  std::string append(std::string_view session_id, std::string_view json);
  std::string append_batch(std::string_view session_id, std::string_view ndjson);
  std::string import(std::string_view ndjson);
  std::string event_get(std::string_view id);
  std::string verify(std::optional<std::string_view> session_id);
  // Replays the log into every derived table (options: rebuild_options.schema.json).
  std::string rebuild(std::string_view options_json);

  // The agent state (state.schema.json) of a session's branch (id or name;
  // main when absent), or right after the event `at_event_id` on that
  // event's branch. Giving both is kInvalidArg; an unknown session, branch
  // or event is kNotFound, an event of another session kInvalidArg.
  std::string state(std::string_view session_id, std::optional<std::string_view> branch,
                    std::optional<std::string_view> at_event_id);
  // One session's stats (stats.schema.json), or every session's totals.
  std::string stats(std::optional<std::string_view> session_id);

  // One page of stored-event JSON rows for a streaming iterator. `cursor`
  // is the seq (one session) or pos (all events) of the last row returned,
  // and is advanced past this page.
  std::vector<std::string> events_page(std::optional<std::string_view> session_id, int64_t &cursor,
                                       int64_t to_seq, int64_t limit);

private:
  store::Store store_;
  log::EventLog log_;
  project::Sessions sessions_;
  project::PayloadCache payloads_; // shared by state_ and stats_
  project::State state_;
  project::Stats stats_;
  // Every projection, in the order the log feeds them.
  std::vector<project::Projection *> projections_;
};

} // namespace ctxdb
