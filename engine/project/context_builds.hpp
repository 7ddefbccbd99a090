// context_builds.hpp — the context_builds projection: one row per
// ContextBuilt, so the compiler finds the bundle built last on a branch's
// path and reports how many leading tokens a new bundle shares with it
// (what a provider's prompt cache can reuse). What the bundle held — its
// segment ids, hashes and tokens, never the text — stays in the event.
#pragma once

#include "log/event_log.hpp"
#include "project/branch_path.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <optional>
#include <string>

namespace ctxdb::project {

class ContextBuilds : public Projection {
public:
  ContextBuilds(store::Store &store, PayloadCache &payloads) : store_(store), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  std::span<const char *const> tables() const override;

  // The payload (compact JSON) of the latest ContextBuilt on the path.
  std::optional<std::string> latest_payload(const BranchPath &path);

private:
  store::Store &store_;
  PayloadCache &payloads_;
};

} // namespace ctxdb::project
