// payload_cache.hpp — one parse of each appended event's payload, shared by
// the projections that read it (state, stats), so an append parses its
// payload once however many of them look inside.
#pragma once

#include "log/event.hpp"

#include <simdjson.h>

namespace ctxdb::project {

class PayloadCache {
public:
  // The parsed payload of `e`; valid until the next get() for another
  // event. Events are told apart by pos, which the log gives every event
  // before the observers see it.
  simdjson::dom::element get(const log::Event &e);
  // Forgets the cached event (a rolled-back pos may be given again).
  void reset() { pos_ = -1; }

private:
  simdjson::dom::parser parser_;
  simdjson::dom::element doc_;
  int64_t pos_ = -1;
};

} // namespace ctxdb::project
