// claude_code.hpp — which files of Claude Code's projects folder are
// sessions, for the importer walking a tree (engine/transcript/).
//
// Claude Code keeps each session as ~/.claude/projects/<encoded project
// path>/<sessionId>.jsonl, and each subagent a session spawned (the Task /
// Agent tool) as <project>/<sessionId>/subagents/agent-<agentId>.jsonl
// (workflow agents one folder deeper, under subagents/workflows/<run>/),
// beside an agent-<agentId>.meta.json sidecar. Other files there are not
// transcripts: the sidecars, tool-results/*.txt, a workflow's
// journal.jsonl, sessions-index.json. Claude itself lists only the .jsonl
// files directly in a project folder (by a UUID-shaped name); any name is
// accepted here, so a copied or renamed session still imports.
#pragma once

#include <string>
#include <string_view>

namespace ctxdb::transcript {

struct ClaudeCodeFile {
  enum Kind { kNotASession, kSession, kSubagent };
  Kind kind = kNotASession;
  std::string session_id;        // the ctxdb id: cc-<sessionId>, or cc-<sessionId>-<agentId>
  std::string parent_session_id; // a subagent's: cc-<sessionId> (its file is <sessionId>.jsonl)
};

// What `path` is, from its name alone (no file is opened). A subagent's
// parent is the session named by the folder that holds its subagents/.
// Import a session file before its subagents' so a child links to a
// parent already there (nothing fails otherwise: the link is by id).
ClaudeCodeFile claude_code_file(std::string_view path);

} // namespace ctxdb::transcript
