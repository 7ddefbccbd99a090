// format.hpp — turning stored events and sessions into text for a terminal:
// timestamps, one-line payload summaries and aligned tables.
#ifndef CTXDB_CLI_FORMAT_HPP
#define CTXDB_CLI_FORMAT_HPP

#include "json.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

// Integer milliseconds since the Unix epoch as UTC ISO-8601, e.g.
// "2025-01-31T09:15:02.041Z".
std::string iso_utc(int64_t ms);

// Whitespace runs (newlines included) collapsed to one space, ends trimmed,
// and control characters replaced by '?', so text is safe for a terminal.
std::string one_line(std::string_view s);

// The width long lines are cut to: the terminal's when stdout is one (its
// columns, else $COLUMNS, else 100); none (SIZE_MAX) when stdout is piped
// or --wide was given (set_wide).
std::size_t line_width();
void set_wide(bool wide);

// Text in a colour when stdout is a terminal and NO_COLOR is unset or
// empty (no-color.org); the text as it is otherwise.
enum class Colour { kGreen = 32, kRed = 31, kYellow = 33 };
std::string paint(std::string_view text, Colour colour);

// s cut to at most `cols` characters (UTF-8 aware), "..." marking a cut.
std::string truncate_cols(std::string_view s, std::size_t cols);

// The number of characters (code points) in UTF-8 text.
std::size_t display_width(std::string_view s);

// A short description of an event payload built from the fields the core
// vocabulary uses (tool_call_id, path, text, content, output, ...); the
// key=value pairs when it has none of them.
std::string summarize_payload(element payload);

// s padded with spaces to `cols` characters, on the right or the left.
std::string pad_right(std::string s, std::size_t cols);
std::string pad_left(std::string s, std::size_t cols);

// Prints rows as left-aligned columns; the first row is the header.
void print_table(const std::vector<std::vector<std::string>> &rows);

} // namespace cli

#endif // CTXDB_CLI_FORMAT_HPP
