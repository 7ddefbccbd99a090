#include "project/branch_path.hpp"

namespace ctxdb::project {

BranchPath path_of(log::Tree &tree, int64_t session_no, const log::Branch &b, int64_t upto_seq) {
  BranchPath p;
  p.session_no = session_no;
  p.branch_id = b.id;
  p.segments = tree.path(b.no, upto_seq);
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
