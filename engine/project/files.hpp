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
#include <vector>

namespace ctxdb::project {

class Files : public Projection {
public:
  Files(store::Store &store, PayloadCache &payloads) : store_(store), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override { pending_size_ = 0; }
  std::span<const char *const> tables() const override;

  // One object per file touched on a branch's path, by path, as the JSON
  // array of schema/json/files.schema.json.
  std::string path_json(const BranchPath &path);

  // Rows wait in memory up to this many (a replay is one transaction).
  static constexpr size_t kMaxPending = 1024;

private:
  // A payload field as written: absent, a string or an integer.
  struct Field {
    enum class Kind { kNull, kText, kInt } kind = Kind::kNull;
    std::string text;
    int64_t number = 0;
  };
  struct Row {
    int64_t session_no, seq, branch_no;
    std::string event_id;
    const char *op; // static
    Field path, artifact_id, change_summary, bytes, tool_call_id;
  };
  static void read_field(Field &f, simdjson::dom::element payload, const char *key);
  static void bind(SQLite::Statement &q, int index, const Field &f);
  static void bind_row(SQLite::Statement &q, int first, const Row &r);

  store::Store &store_;
  PayloadCache &payloads_;
  // The transaction's rows, written at flush() (as Messages does): a
  // multi-row INSERT costs SQLite less per row. Rows are reused, so their
  // strings keep their capacity.
  std::vector<Row> pending_;
  size_t pending_size_ = 0; // the rows of pending_ in use
};

} // namespace ctxdb::project
