// embedded_ranks.hpp — the standard rank files, carried in the library so
// that exact counts work with no configuration: a build that finds them
// (CMake's CTXDB_RANK_DIR) assembles them in with .incbin.
#pragma once

#include <string_view>

namespace ctxdb::token {

// The bytes of the embedded rank file of that name ("o200k_base.tiktoken"),
// or empty when this build carries none.
std::string_view embedded_rank_file(std::string_view rank_file);

} // namespace ctxdb::token
