// files.hpp — the files projection (DESIGN §2): what the agent did to each
// file. One row per FileRead / FileWritten / DiffApplied; the per-file view
// of a branch (last read, last write, the change summaries in order) is
// folded from the rows on its path when read, so a fork inherits its
// ancestors' file history without a copy.
#pragma once

#include "log/event_log.hpp"
#include "project/branch_path.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <string>

namespace ctxdb::project {

class Files : public Projection {
public:
  Files(store::Store &store, PayloadCache &payloads) : store_(store), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  std::span<const char *const> tables() const override;

  // One object per file touched on a branch's path, by path, as the JSON
  // array of schema/json/files.schema.json.
  std::string path_json(const BranchPath &path);

private:
  store::Store &store_;
  PayloadCache &payloads_;
};

} // namespace ctxdb::project
