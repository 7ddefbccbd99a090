#include "project/import_sources.hpp"

namespace ctxdb::project {

namespace {

constexpr char kSelect[] = "SELECT format,session_id,last_line,end_offset,prefix_sha256 "
                           "FROM import_sources WHERE file=?";
constexpr char kUpsert[] = "INSERT OR REPLACE INTO import_sources(file,format,session_id,"
                           "last_line,end_offset,prefix_sha256) VALUES(?,?,?,?,?,?)";

int64_t int_field(simdjson::dom::element obj, const char *key) {
  int64_t v = 0;
  if (obj[key].get(v)) return 0;
  return v;
}

} // namespace

std::span<const char *const> ImportSources::tables() const {
  static const char *const kTables[] = {"import_sources"};
  return kTables;
}

std::optional<ImportSource> ImportSources::get(const std::string &file) {
  if (auto it = pending_.find(file); it != pending_.end()) return it->second;
  auto q = store_.statement(kSelect);
  q->bindNoCopy(1, file);
  if (!q->executeStep()) return std::nullopt;
  return ImportSource{q->getColumn(0).getString(), q->getColumn(1).getString(),
                      q->getColumn(2).getInt64(), q->getColumn(3).getInt64(),
                      q->getColumn(4).getString()};
}

void ImportSources::on_append(const log::Event &e) {
  // Most events were not imported: a search of the bytes spares their parse.
  if (e.payload.find("\"provenance\"") == std::string::npos) return;
  simdjson::dom::element provenance;
  if (payloads_.get(e)["provenance"].get(provenance) || !provenance.is_object()) return;
  // Only what an importer of another agent's files wrote: a host's own
  // "provenance" field means something else.
  std::string_view file = string_field(provenance, "file");
  std::string_view format = string_field(provenance, "format");
  if (file.empty() || (format != "claude-code" && format != "codex" && format != "pi")) return;
  auto it = pending_.find(file);
  if (it == pending_.end()) {
    std::string key(file);
    ImportSource row = get(key).value_or(ImportSource{std::string(format), e.session_id, 0, 0, ""});
    it = pending_.emplace(std::move(key), std::move(row)).first;
  }
  ImportSource &row = it->second;
  row.last_line =
      std::max({row.last_line, int_field(provenance, "line"), int_field(provenance, "last_line")});
  if (std::string_view hash = string_field(provenance, "prefix_sha256"); !hash.empty()) {
    row.end_offset = int_field(provenance, "end_offset");
    row.prefix_sha256 = hash;
  }
}

void ImportSources::flush() {
  for (const auto &[file, row] : pending_) {
    auto q = store_.statement(kUpsert);
    q->bindNoCopy(1, file);
    q->bindNoCopy(2, row.format);
    q->bindNoCopy(3, row.session_id);
    q->bind(4, row.last_line);
    q->bind(5, row.end_offset);
    q->bindNoCopy(6, row.prefix_sha256);
    q->exec();
  }
  pending_.clear();
}

} // namespace ctxdb::project
