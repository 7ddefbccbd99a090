// preview.hpp — the part of an artifact a prompt carries: its head, its
// tail, or both around an explicit marker saying what was left out.
//
// Cuts never split a UTF-8 character; when a line limit is given, cuts
// fall only between lines (a byte limit then drops whole lines rather than
// end inside one). Limits of -1 mean "no limit" on that axis.
#pragma once

#include "artifact/artifact_store.hpp"

namespace ctxdb::artifact {

enum class PreviewMode { kHead, kTail, kHeadTail };

struct PreviewSpec {
  PreviewMode mode = PreviewMode::kHeadTail;
  int64_t max_lines = -1;
  int64_t max_bytes = -1; // of content; the marker is not counted
};

struct Preview {
  std::string text;
  int64_t omitted_lines = 0; // lines not shown at all (a cut line counts as shown)
  int64_t omitted_bytes = 0;
};

// head+tail's marker: "… [N lines / M bytes omitted] …", on its own line;
// with an artifact id, "… [N lines / M bytes omitted; all in art_…] …".
std::string omitted_marker(int64_t lines, int64_t bytes, std::string_view artifact_id = {});

// The preview of an artifact, decoding only the chunks at its ends.
Preview preview(ArtifactStore &store, std::string_view id, const PreviewSpec &spec);
// The same preview of content in memory. With `artifact_id` (a spill at
// append: the content is stored under that id), the marker also names the
// artifact, and a head or a tail that leaves something out carries it too
// (after the head, before the tail), so a reader of the preview alone knows
// it is partial and where the rest is.
Preview preview_text(std::string_view content, const PreviewSpec &spec,
                     std::string_view artifact_id = {});

} // namespace ctxdb::artifact
