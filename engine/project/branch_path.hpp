// branch_path.hpp — what every per-branch read of a projection starts from:
// a session's branch (main when none is named) and the segments of its path
// root→leaf, each a seq range of the session read with one range scan.
#pragma once

#include "log/tree.hpp"
#include "store/store.hpp"
#include "json/json_writer.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::project {

struct BranchPath {
  int64_t session_no = 0;
  std::string branch_id;
  std::vector<log::Segment> segments;
  std::vector<std::string> segment_branch_ids; // parallel to segments
};

// The path root→leaf of branch `b` of session `session_no`, or root→the
// event `upto_seq` of it.
BranchPath path_of(log::Tree &tree, int64_t session_no, const log::Branch &b,
                   int64_t upto_seq = -1);

// Runs `sql` once per segment with (session_no, first_seq, last_seq) bound
// to ?1..?3, calling fn(row, branch_id) for every row, segment by segment.
template <class Fn>
void for_each_row(store::Store &store, const char *sql, const BranchPath &path, Fn &&fn) {
  for (size_t i = 0; i < path.segments.size(); ++i) {
    auto q = store.statement(sql);
    q->bind(1, path.session_no);
    q->bind(2, path.segments[i].first_seq);
    q->bind(3, path.segments[i].last_seq);
    while (q->executeStep()) fn(*q, path.segment_branch_ids[i]);
  }
}

// for_each_row() newest first: `sql` must order each segment's rows by
// seq DESC, and fn returns false to stop, so a reader that needs only the
// recent end of a long path never reads the rest.
template <class Fn>
void for_each_row_backward(store::Store &store, const char *sql, const BranchPath &path, Fn &&fn) {
  for (size_t i = path.segments.size(); i-- > 0;) {
    auto q = store.statement(sql);
    q->bind(1, path.session_no);
    q->bind(2, path.segments[i].first_seq);
    q->bind(3, path.segments[i].last_seq);
    while (q->executeStep())
      if (!fn(*q, path.segment_branch_ids[i])) return;
  }
}

// Writes `key` with a column's value: its integer, its text, or null.
void column_field(json::JsonWriter &w, std::string_view key, const SQLite::Column &c);

} // namespace ctxdb::project
