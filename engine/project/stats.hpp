// stats.hpp — the stats projection: per-session counters of tokens, tool
// calls and failures, approvals, compactions and latencies (DESIGN §2).
//
// Within a transaction each touched session's counters live in memory;
// flush() writes one row per session, discard() forgets them. Token counts
// of message texts come from the messages projection, which counts each
// message once at append with the counter it names: stats sums them when
// read, so no text is counted twice.
#pragma once

#include "log/event_log.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"
#include "json/json_writer.hpp"

#include <array>
#include <optional>
#include <string>
#include <unordered_map>

namespace ctxdb::project {

// The counters, in the order of the stats table's columns after counter.
enum StatField : size_t {
  kEvents,
  kUserPrompts,
  kAssistantMessages,
  kUsageInputTokens,
  kUsageOutputTokens,
  kUsageCacheReadTokens,
  kUsageCacheWriteTokens,
  kToolCalls,
  kToolResults,
  kToolErrors,
  kToolFailures,
  kToolDurationCount,
  kToolDurationTotalMs,
  kToolDurationMaxMs,
  kLatencyCount,
  kLatencyTotalMs,
  kLatencyMaxMs,
  kApprovalsRequested,
  kApprovalsGranted,
  kApprovalsDenied,
  kCompactions,
  kCompactionsFailed,
  kCompactionTokensBefore,
  kCompactionTokensAfter,
  kContextBuilds,
  kContextUsedTokens,
  kErrors,
  kUsageReasoningTokens,
  kCostNanoUsd,
  kPricedMessages,
  kToolCancellations,
  kStatFieldCount
};

struct SessionStats {
  std::array<int64_t, kStatFieldCount> v{};
  int64_t &operator[](StatField f) { return v[f]; }
  int64_t operator[](StatField f) const { return v[f]; }
};

class Stats : public Projection {
public:
  Stats(store::Store &store, PayloadCache &payloads) : store_(store), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override;
  std::span<const char *const> tables() const override;

  // schema/json/stats.schema.json for one session (zeros when it has no
  // row yet), or the totals of every session when session_no is nullopt.
  std::string get_json(std::optional<int64_t> session_no, std::string_view session_id);

  // A model's prices, USD per million tokens of each kind.
  struct Price {
    double input = 0, cache_read = 0, cache_write = 0, output = 0;
  };
  using Pricing = std::unordered_map<std::string, Price>;

  // One model's correction as the stats keep it (token_calibration):
  // what providers reported for responses to recorded compiles, against
  // what those compiles counted. nullopt when the model has none.
  struct ModelCalibration {
    int64_t samples = 0, estimated = 0, reported = 0;
  };
  static std::optional<ModelCalibration> calibration_of(store::Store &store,
                                                        std::string_view model);
  // num / den with four decimals at most, no trailing zeros (0.25, 21,
  // 1.3333); null when den is 0. Deterministic, unlike a double's printing.
  static void write_ratio(json::JsonWriter &w, int64_t num, int64_t den);

private:
  SessionStats &session_for(int64_t session_no);
  // The session's price table (its SessionStarted payload's "pricing"),
  // read from the log once per session and kept.
  const Pricing &pricing_for(int64_t session_no);
  void on_assistant_cost(SessionStats &s, int64_t session_no, simdjson::dom::object p);
  // A response to a recorded compile: its model's reported input against
  // the compile's count (token_calibration).
  void calibrate(const log::Event &e, simdjson::dom::object p);
  // The used_tokens of the ContextBuilt `id` (this transaction's or
  // stored), or nullopt when `id` is not a ContextBuilt.
  std::optional<int64_t> build_tokens(const std::string &id);

  struct Calibration {
    int64_t samples = 0, estimated = 0, reported = 0;
  };

  store::Store &store_;
  PayloadCache &payloads_;
  std::unordered_map<int64_t, SessionStats> sessions_;       // this transaction's
  std::unordered_map<int64_t, Pricing> pricing_;             // by session_no
  std::unordered_map<std::string, int64_t> builds_;          // this transaction's ContextBuilts
  std::unordered_map<std::string, Calibration> calibration_; // this transaction's, by model
};

} // namespace ctxdb::project
