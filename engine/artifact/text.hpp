// text.hpp — byte-level text helpers the artifact reads share: counting
// lines and cutting text where a reader can still decode it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ctxdb::artifact {

int64_t count_newlines(std::string_view s);
// Lines of text: its '\n's, plus one for an unterminated last line (what
// an artifact's line_count holds).
int64_t count_lines(std::string_view s);

// The largest cut <= at that does not split a UTF-8 sequence: a cut before
// a continuation byte (10xxxxxx) moves back to the sequence's lead byte.
// Bytes that are not UTF-8 at all are cut anywhere (at most 3 steps back).
size_t utf8_cut_down(std::string_view s, size_t at);
// The smallest cut >= at that does not split a UTF-8 sequence.
size_t utf8_cut_up(std::string_view s, size_t at);

} // namespace ctxdb::artifact
