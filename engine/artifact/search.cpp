#include "artifact/search.hpp"

#include "artifact/text.hpp"
#include "error.hpp"
#include "util/regex.hpp"

#include <deque>

namespace ctxdb::artifact {

namespace {

// Scans one region of whole lines at a time (the text up to the last '\n'
// decoded so far), keeping what context needs across regions: the last
// lines before the region, and matches still short of after-lines.
class Searcher {
public:
  Searcher(util::Regex &re, const SearchOptions &o) : re_(re), o_(o) {}

  // Returns false once nothing more is wanted.
  bool region(std::string_view r, bool eof);
  SearchResult result() { return std::move(result_); }

private:
  void fill_pending(std::string_view r);
  void on_match(std::string_view r, size_t ls, size_t le, size_t ms, size_t me);
  void remember(std::string_view r, int64_t newlines);
  bool full() const { return int64_t(result_.matches.size()) >= o_.max_matches; }

  util::Regex &re_;
  const SearchOptions &o_;
  SearchResult result_;
  int64_t line_ = 1;         // of the region's first line
  int64_t offset_ = 0;       // of the region's first byte
  size_t counted_ = 0;       // newlines of the region counted up to here…
  int64_t counted_line_ = 1; // …giving this line number
  std::deque<ContextLine> history_;
  std::vector<size_t> pending_; // matches still short of after-lines
};

// The line [ls, le) of r that ends at le ('\n' or the region's end).
size_t line_end(std::string_view r, size_t from) {
  size_t nl = r.find('\n', from);
  return nl == std::string_view::npos ? r.size() : nl;
}

bool Searcher::region(std::string_view r, bool eof) {
  fill_pending(r);
  counted_ = 0;
  counted_line_ = line_;
  size_t pos = 0;
  while (!full() && pos < r.size()) {
    size_t ms = 0, me = 0;
    if (!re_.find(r, pos, ms, me)) break;
    if (ms >= r.size() && (r.empty() || r.back() == '\n')) break; // after the last line
    size_t ls = ms ? r.rfind('\n', ms - 1) : std::string_view::npos;
    ls = ls == std::string_view::npos ? 0 : ls + 1;
    size_t le = line_end(r, ms);
    // Only a match inside one line counts: retry on the line alone.
    if (me > le) {
      std::string_view line = r.substr(ls, le - ls);
      if (!re_.find(line, ms - ls, ms, me)) {
        pos = le + 1;
        continue;
      }
      ms += ls;
      me += ls;
    }
    on_match(r, ls, le, ms, me);
    pos = le + 1;
  }
  int64_t newlines = count_newlines(r);
  remember(r, newlines);
  offset_ += int64_t(r.size());
  line_ += newlines;
  if (full()) {
    result_.truncated = true;
    return !pending_.empty() && !eof;
  }
  return true;
}

void Searcher::on_match(std::string_view r, size_t ls, size_t le, size_t ms, size_t me) {
  counted_line_ += count_newlines(r.substr(counted_, ls - counted_));
  counted_ = ls;
  Match m;
  m.line = counted_line_;
  m.offset = offset_ + int64_t(ls);
  m.column = int64_t(ms - ls);
  m.length = int64_t(me - ms);
  m.text.assign(r.substr(ls, le - ls));
  // Before: walk back in this region, then into the remembered lines.
  size_t start = ls;
  std::deque<ContextLine> before;
  while (int64_t(before.size()) < o_.before && start > 0) {
    size_t prev = start >= 2 ? r.rfind('\n', start - 2) : std::string_view::npos;
    size_t ps = prev == std::string_view::npos ? 0 : prev + 1;
    before.push_front(
        {m.line - 1 - int64_t(before.size()), std::string(r.substr(ps, start - 1 - ps))});
    start = ps;
  }
  for (auto it = history_.rbegin(); it != history_.rend() && int64_t(before.size()) < o_.before;
       ++it)
    before.push_front(*it);
  m.before.assign(before.begin(), before.end());
  // After: as many as this region has; the rest from the next region.
  size_t next = le + 1;
  while (int64_t(m.after.size()) < o_.after && next < r.size()) {
    size_t e = line_end(r, next);
    m.after.push_back(
        {m.line + 1 + int64_t(m.after.size()), std::string(r.substr(next, e - next))});
    next = e + 1;
  }
  result_.matches.push_back(std::move(m));
  if (int64_t(result_.matches.back().after.size()) < o_.after)
    pending_.push_back(result_.matches.size() - 1);
}

void Searcher::fill_pending(std::string_view r) {
  std::vector<size_t> still;
  for (size_t i : pending_) {
    Match &m = result_.matches[i];
    size_t next = 0;
    // This region starts right after the lines the match has already.
    while (int64_t(m.after.size()) < o_.after && next < r.size()) {
      size_t e = line_end(r, next);
      m.after.push_back(
          {m.line + 1 + int64_t(m.after.size()), std::string(r.substr(next, e - next))});
      next = e + 1;
    }
    if (int64_t(m.after.size()) < o_.after) still.push_back(i);
  }
  pending_ = std::move(still);
}

// Keeps the region's last `before` lines for the next region's matches.
void Searcher::remember(std::string_view r, int64_t newlines) {
  if (o_.before <= 0 || r.empty()) return;
  std::vector<ContextLine> tail;
  size_t end = r.size();
  if (end && r[end - 1] == '\n') --end;
  int64_t last = line_ + newlines - (r.back() == '\n' ? 1 : 0); // the region's last line
  while (int64_t(tail.size()) < o_.before) {
    size_t nl = end ? r.rfind('\n', end - 1) : std::string_view::npos;
    size_t s = nl == std::string_view::npos ? 0 : nl + 1;
    tail.push_back({last - int64_t(tail.size()), std::string(r.substr(s, end - s))});
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
    history_.push_back(*it);
    if (int64_t(history_.size()) > o_.before) history_.pop_front();
  }
}

} // namespace

SearchResult search(ArtifactStore &store, std::string_view id, std::string_view pattern,
                    const SearchOptions &options) {
  if (options.before < 0 || options.after < 0 || options.max_matches < 0)
    throw Error(Code::kInvalidArg, "search context and max_matches must be >= 0");
  util::Regex re(pattern, {.ignore_case = options.ignore_case, .multiline = true});
  Layout l = store.layout(id);
  Searcher s(re, options);
  if (options.max_matches == 0) return s.result();
  std::string buf; // what is decoded and not yet searched: whole lines only
  int64_t seen = 0;
  store.scan(l, 0, l.info.raw_size, [&](std::string_view piece) {
    buf.append(piece);
    seen += int64_t(piece.size());
    bool eof = seen == l.info.raw_size;
    size_t nl = buf.rfind('\n');
    if (!eof && nl == std::string::npos) return true; // a line longer than a chunk
    size_t limit = eof ? buf.size() : nl + 1;
    if (!s.region(std::string_view(buf).substr(0, limit), eof)) return false;
    buf.erase(0, limit);
    return true;
  });
  return s.result();
}

} // namespace ctxdb::artifact
