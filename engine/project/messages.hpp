// messages.hpp — the messages projection (DESIGN §2): one row per
// message-bearing event, as typed blocks with a role and a token count.
//
//   UserPromptSubmitted      → user      [text]
//   AssistantMessageCreated  → assistant its content blocks, as given
//   ToolCallFinished/Failed  → tool      [tool_result]
//   CompactionCompleted      → summary   [summary]
//
// Tokens are counted once, here, and stored with the counter's name, so a
// compile never recounts history and a change of counter shows.
#pragma once

#include "log/event_log.hpp"
#include "project/branch_path.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"
#include "token/counter.hpp"

#include <simdjson.h>

#include <string>

namespace ctxdb::project {

class Messages : public Projection {
public:
  Messages(store::Store &store, PayloadCache &payloads,
           const token::Counter &counter = token::default_counter())
      : store_(store), payloads_(payloads), counter_(counter) {}

  void on_append(const log::Event &e) override;
  std::span<const char *const> tables() const override;

  // The messages on a branch's path, root→leaf, as the JSON array of
  // schema/json/messages.schema.json.
  std::string path_json(const BranchPath &path);

private:
  // The blocks of one message and their token count.
  struct Content {
    std::string role;
    std::string blocks; // compact JSON array
    int64_t tokens = 0;
  };
  Content user(simdjson::dom::element payload) const;
  Content assistant(simdjson::dom::element payload) const;
  int64_t block_tokens(simdjson::dom::element block) const;
  Content tool_result(const log::Event &e, simdjson::dom::element payload) const;
  Content summary(simdjson::dom::element payload) const;
  void insert(const log::Event &e, const Content &c);

  store::Store &store_;
  PayloadCache &payloads_;
  const token::Counter &counter_;
};

} // namespace ctxdb::project
