// import_sources.hpp — the import_sources projection: per file of another
// agent imported (engine/transcript/), how far it has been read. Fed by
// the payload.provenance of the events an import appends (schema/sql/020),
// so the state of an incremental import is rebuilt from the log like
// every other table.
#pragma once

#include "log/event_log.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <map>
#include <optional>
#include <string>

namespace ctxdb::project {

struct ImportSource {
  std::string format;
  std::string session_id;
  int64_t last_line = 0;
  int64_t end_offset = 0;    // 0 when no pass recorded one
  std::string prefix_sha256; // of bytes [0, end_offset)
};

class ImportSources : public Projection {
public:
  ImportSources(store::Store &store, PayloadCache &payloads) : store_(store), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override { pending_.clear(); }
  std::span<const char *const> tables() const override;

  std::optional<ImportSource> get(const std::string &file);

private:
  store::Store &store_;
  PayloadCache &payloads_;
  // The rows a transaction changed, written at flush(): an import's
  // events all name the same file, so one row is written, not one per event.
  std::map<std::string, ImportSource, std::less<>> pending_;
};

} // namespace ctxdb::project
