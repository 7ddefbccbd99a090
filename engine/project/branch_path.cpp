#include "project/branch_path.hpp"

namespace ctxdb::project {

BranchPath resolve_path(log::EventLog &log, std::string_view session_id,
                        std::optional<std::string_view> branch) {
  BranchPath p;
  p.session_no = log.session_no(session_id);
  if (p.session_no == 0)
    throw Error(Code::kNotFound, "session '" + std::string(session_id) + "' not found");
  log::Tree &tree = log.tree();
  log::Branch b = branch ? tree.find_branch(p.session_no, *branch) : tree.main_branch(p.session_no);
  p.branch_id = b.id;
  p.segments = tree.path(b.no);
  for (const log::Segment &s : p.segments)
    p.segment_branch_ids.push_back(tree.branch(s.branch_no).id);
  return p;
}

void column_field(json::JsonWriter &w, std::string_view key, const SQLite::Column &c) {
  w.key(key);
  if (c.isNull())
    w.null();
  else if (c.isInteger())
    w.value(c.getInt64());
  else
    w.value(std::string_view(c.getText(), size_t(c.getBytes())));
}

} // namespace ctxdb::project
