#include "artifact/preview.hpp"

#include "artifact/text.hpp"
#include "error.hpp"

namespace ctxdb::artifact {

namespace {

// The position after the n-th '\n', or the end when there are fewer.
size_t end_of_lines(std::string_view s, int64_t n) {
  size_t pos = 0;
  for (int64_t k = 0; k < n; ++k) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string_view::npos) return s.size();
    pos = nl + 1;
  }
  return pos;
}

// Where the last n lines of s start (a final '\n' ends the last line, it
// does not start an empty one); 0 when s has no more than n.
size_t start_of_last_lines(std::string_view s, int64_t n) {
  if (n == 0) return s.size();
  size_t pos = s.size();
  if (pos && s[pos - 1] == '\n') --pos;
  for (int64_t k = 0; k < n; ++k) {
    size_t nl = pos ? s.rfind('\n', pos - 1) : std::string_view::npos;
    if (nl == std::string_view::npos) return 0;
    pos = nl;
  }
  return pos + 1;
}

// How much of s (a prefix of the content, long enough; see read_end) the
// head keeps.
size_t head_end(std::string_view s, int64_t lines, int64_t bytes) {
  size_t n = lines >= 0 ? end_of_lines(s, lines) : s.size();
  if (bytes < 0 || n <= size_t(bytes)) return n;
  if (lines < 0) return utf8_cut_down(s, size_t(bytes));
  size_t nl = bytes ? s.rfind('\n', size_t(bytes) - 1) : std::string_view::npos;
  return nl == std::string_view::npos ? 0 : nl + 1;
}

// Where in s (a suffix of the content, long enough) the tail starts.
size_t tail_begin(std::string_view s, int64_t lines, int64_t bytes) {
  size_t b = lines >= 0 ? start_of_last_lines(s, lines) : 0;
  if (bytes < 0 || s.size() - b <= size_t(bytes)) return b;
  size_t from = s.size() - size_t(bytes);
  if (lines < 0) return utf8_cut_up(s, from);
  size_t nl = s.find('\n', from - 1);
  return nl == std::string_view::npos ? s.size() : nl + 1;
}

int64_t half_up(int64_t v) { return v < 0 ? v : v - v / 2; }
int64_t half_down(int64_t v) { return v < 0 ? v : v / 2; }

bool fits(const PreviewSpec &spec, int64_t lines, int64_t bytes) {
  return (spec.max_lines < 0 || lines <= spec.max_lines) &&
         (spec.max_bytes < 0 || bytes <= spec.max_bytes);
}

void check(const PreviewSpec &spec) {
  if (spec.max_lines < -1 || spec.max_bytes < -1)
    throw Error(Code::kInvalidArg, "preview limits must be >= 0 (or -1 for none)");
}

// Builds the preview from the content's two ends (head_src a prefix,
// tail_src a suffix, each long enough for the limits, possibly the same
// whole content) and the content's totals.
Preview assemble(std::string_view head_src, std::string_view tail_src, const PreviewSpec &spec,
                 int64_t total_lines, int64_t total_bytes, std::string_view artifact_id = {}) {
  Preview p;
  std::string_view head, tail;
  if (spec.mode == PreviewMode::kHead) {
    head = head_src.substr(0, head_end(head_src, spec.max_lines, spec.max_bytes));
  } else if (spec.mode == PreviewMode::kTail) {
    tail = tail_src.substr(tail_begin(tail_src, spec.max_lines, spec.max_bytes));
  } else {
    head = head_src.substr(0, head_end(head_src, half_up(spec.max_lines), half_up(spec.max_bytes)));
    tail =
        tail_src.substr(tail_begin(tail_src, half_down(spec.max_lines), half_down(spec.max_bytes)));
  }
  p.omitted_bytes = total_bytes - int64_t(head.size() + tail.size());
  p.omitted_lines = std::max<int64_t>(0, total_lines - count_lines(head) - count_lines(tail));
  p.text.reserve(head.size() + tail.size() + 64);
  p.text.append(head);
  bool marked =
      spec.mode == PreviewMode::kHeadTail || (!artifact_id.empty() && p.omitted_bytes > 0);
  if (marked) {
    if (!head.empty() && head.back() != '\n') p.text += '\n';
    p.text += omitted_marker(p.omitted_lines, p.omitted_bytes, artifact_id);
    if (spec.mode != PreviewMode::kHead) p.text += '\n';
  }
  p.text.append(tail);
  return p;
}

// Decodes chunks from one end of the artifact until the piece holds more
// than `bytes` bytes or more than `lines` newlines (either limit given),
// or is the whole content.
std::string read_end(ArtifactStore &store, const Layout &l, bool from_tail, int64_t lines,
                     int64_t bytes) {
  std::string s, chunk;
  int64_t newlines = 0;
  for (size_t k = 0; k < l.chunks.size(); ++k) {
    size_t i = from_tail ? l.chunks.size() - 1 - k : k;
    newlines += l.chunks[i].newlines;
    chunk.clear();
    store.load_chunk(l, i, chunk);
    s = from_tail ? chunk + s : s + chunk;
    if ((bytes >= 0 && int64_t(s.size()) > bytes) || (lines >= 0 && newlines > lines)) break;
  }
  return s;
}

} // namespace

std::string omitted_marker(int64_t lines, int64_t bytes, std::string_view artifact_id) {
  std::string s =
      "… [" + std::to_string(lines) + " lines / " + std::to_string(bytes) + " bytes omitted";
  if (!artifact_id.empty()) s += "; all in " + std::string(artifact_id);
  return s + "] …";
}

Preview preview_text(std::string_view content, const PreviewSpec &spec,
                     std::string_view artifact_id) {
  check(spec);
  int64_t lines = count_lines(content), bytes = int64_t(content.size());
  if (fits(spec, lines, bytes)) return Preview{std::string(content), 0, 0};
  return assemble(content, content, spec, lines, bytes, artifact_id);
}

Preview preview(ArtifactStore &store, std::string_view id, const PreviewSpec &spec) {
  check(spec);
  Layout l = store.layout(id);
  if (fits(spec, l.info.line_count, l.info.raw_size)) return Preview{store.read(id), 0, 0};
  bool both = spec.mode == PreviewMode::kHeadTail;
  std::string head, tail;
  if (spec.mode != PreviewMode::kTail)
    head = read_end(store, l, false, both ? half_up(spec.max_lines) : spec.max_lines,
                    both ? half_up(spec.max_bytes) : spec.max_bytes);
  if (spec.mode != PreviewMode::kHead)
    tail = read_end(store, l, true, both ? half_down(spec.max_lines) : spec.max_lines,
                    both ? half_down(spec.max_bytes) : spec.max_bytes);
  return assemble(head, tail, spec, l.info.line_count, l.info.raw_size);
}

} // namespace ctxdb::artifact
