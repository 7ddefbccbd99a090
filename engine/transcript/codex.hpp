// codex.hpp — what the importer asks the Codex reader besides parse_codex
// (transcript.hpp): which files of a tree are sessions.
#pragma once

#include <string_view>

namespace ctxdb::transcript {

// A Codex session file: rollout-<time>-<uuid>.jsonl, found anywhere under
// the tree (~/.codex/sessions/YYYY/MM/DD/, or flat in sessions/ for the
// oldest versions). Every rollout is a session of its own: a subagent's
// names its parent in its session_meta (DraftSession.parent_session_id).
bool is_codex_rollout(std::string_view file_name);

} // namespace ctxdb::transcript
