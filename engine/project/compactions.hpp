// compactions.hpp — the compactions projection (DESIGN §2, §6): one row per
// CompactionCompleted, with the seq of its first kept event, so the context
// compiler finds the latest compaction on a branch's path, and where the
// history it must still read begins, without reading the history.
//
// A compaction's first_kept_event_id must be an earlier event on its own
// path (or the compaction itself: nothing kept); any other is rejected at
// append, because a bundle built on it would silently lose history.
#pragma once

#include "log/event_log.hpp"
#include "log/tree.hpp"
#include "project/branch_path.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <optional>
#include <string>

namespace ctxdb::project {

struct CompactionRef {
  int64_t seq = 0; // the CompactionCompleted event's
  std::string event_id;
  int64_t first_kept_seq = 0;
};

class Compactions : public Projection {
public:
  Compactions(store::Store &store, log::Tree &tree, PayloadCache &payloads)
      : store_(store), tree_(tree), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  std::span<const char *const> tables() const override;

  // The latest compaction on the path, if any.
  std::optional<CompactionRef> latest(const BranchPath &path);

private:
  int64_t first_kept_seq(const log::Event &e, std::string_view kept_id);

  store::Store &store_;
  log::Tree &tree_;
  PayloadCache &payloads_;
};

} // namespace ctxdb::project
