// format.cpp — text for humans; nothing here talks to the database.
#include "format.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <sys/ioctl.h>
#include <unistd.h>

namespace cli {
namespace {

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

void append_part(std::string &out, std::string_view part) {
  if (part.empty()) return;
  if (!out.empty()) out += ' ';
  out += part;
}

// Command output is read from its end (that is where pytest, make and
// compilers put the verdict): a multi-line output shows its last non-empty
// line, stripped of banner decoration, then its line count.
std::string summarize_output(std::string_view output) {
  std::size_t end = output.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return "(no output)";
  std::string_view trimmed = output.substr(0, end + 1);
  std::size_t newline = trimmed.rfind('\n');
  if (newline == std::string_view::npos) return std::string(trimmed);
  std::string_view last = trimmed.substr(newline + 1);
  constexpr std::string_view kDecoration = " \t=-_*#";
  std::size_t first = last.find_first_not_of(kDecoration);
  if (first != std::string_view::npos)
    last = last.substr(first, last.find_last_not_of(kDecoration) - first + 1);
  auto breaks = std::count(trimmed.begin(), trimmed.end(), '\n');
  return std::string(last) + " (" + std::to_string(breaks + 1) + " lines)";
}

// Message content: the text the reader sees, then the tool calls as
// name(args); other blocks (thinking, images) only when there is nothing
// else, as [type].
std::string summarize_content(element content) {
  simdjson::dom::array blocks;
  if (content.get_array().get(blocks) != simdjson::SUCCESS) return to_json(content);
  std::string texts, calls, others;
  for (element block : blocks) {
    std::string_view type = get_string(block, "type");
    if (type == "text") {
      append_part(texts, get_string(block, "text"));
    } else if (type == "tool_call") {
      element args;
      std::string args_json = block["args"].get(args) == simdjson::SUCCESS ? to_json(args) : "";
      append_part(calls,
                  "-> " + std::string(get_string(block, "name", "?")) + "(" + args_json + ")");
    } else {
      append_part(others, "[" + std::string(type.empty() ? "block" : type) + "]");
    }
  }
  append_part(texts, calls);
  return texts.empty() ? others : texts;
}

// A payload with none of the well-known fields, as key=value pairs: easier
// to scan than JSON, and strings lose their quotes.
std::string summarize_fields(element payload) {
  simdjson::dom::object fields;
  if (payload.get_object().get(fields) != simdjson::SUCCESS) return to_json(payload);
  std::string out;
  for (auto field : fields) {
    std::string_view text;
    std::string value = field.value.get_string().get(text) == simdjson::SUCCESS
                            ? std::string(text)
                            : to_json(field.value);
    append_part(out, std::string(field.key) + "=" + value);
  }
  return out;
}

} // namespace

std::string iso_utc(int64_t ms) {
  // Floor division, so times before 1970 still print correctly.
  int64_t secs = ms / 1000, frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    secs -= 1;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return std::to_string(ms);
  char buf[80]; // ample for any int fields, which silences -Wformat-truncation
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(frac));
  return buf;
}

std::string one_line(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isspace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    // Payloads hold untrusted text (tool output, web pages); control
    // characters, C1 ones (U+0080..U+009F) included, would reach the
    // terminal as escape sequences, so they print as '?'.
    bool c1 =
        c == 0xC2 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0x80;
    if (std::iscntrl(c) || c1) {
      out += '?';
      i += c1 ? 1 : 0;
      continue;
    }
    out += static_cast<char>(c);
  }
  return out;
}

std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return !is_continuation_byte(c); }));
}

namespace {
bool g_wide = false;
} // namespace

void set_wide(bool wide) { g_wide = wide; }

std::size_t line_width() {
  if (g_wide || !isatty(STDOUT_FILENO)) return SIZE_MAX;
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char *columns = std::getenv("COLUMNS")) {
    long n = std::strtol(columns, nullptr, 10);
    if (n > 0) return std::size_t(n);
  }
  return 100;
}

std::string paint(std::string_view text, Colour colour) {
  static const bool on = [] {
    const char *no_color = std::getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) && (!no_color || !*no_color);
  }();
  if (!on) return std::string(text);
  return "\x1b[" + std::to_string(int(colour)) + "m" + std::string(text) + "\x1b[0m";
}

std::string truncate_cols(std::string_view s, std::size_t cols) {
  if (display_width(s) <= cols) return std::string(s);
  std::size_t keep = cols > 3 ? cols - 3 : 0, seen = 0, i = 0;
  for (; i < s.size(); ++i) {
    if (!is_continuation_byte(s[i]) && seen++ == keep) break;
  }
  return std::string(s.substr(0, i)) + "...";
}

std::string summarize_payload(element payload) {
  std::string out;
  // What the event is about leads, followed by a colon: the file for file
  // events (which may also name the tool call), else the tool call.
  std::string_view subject = get_string(payload, "path");
  if (subject.empty()) subject = get_string(payload, "tool_call_id");
  append_part(out, subject);
  std::string rest;
  append_part(rest, get_string(payload, "name"));
  append_part(rest, get_string(payload, "text"));
  element field;
  if (payload["content"].get(field) == simdjson::SUCCESS)
    append_part(rest, summarize_content(field));
  std::string_view output;
  if (payload["output"].get_string().get(output) == simdjson::SUCCESS)
    append_part(rest, summarize_output(output));
  if (payload["error"].get(field) == simdjson::SUCCESS) {
    std::string_view msg;
    append_part(rest,
                "error: " + (field.get_string().get(msg) == simdjson::SUCCESS ? std::string(msg)
                                                                              : to_json(field)));
  }
  append_part(rest, get_string(payload, "change_summary"));
  if (out.empty() && rest.empty()) return one_line(summarize_fields(payload));
  if (!out.empty() && !rest.empty()) out += ':';
  append_part(out, rest);
  return one_line(out);
}

std::string pad_right(std::string s, std::size_t cols) {
  std::size_t width = display_width(s);
  if (width < cols) s.append(cols - width, ' ');
  return s;
}

std::string pad_left(std::string s, std::size_t cols) {
  std::size_t width = display_width(s);
  if (width < cols) s.insert(0, cols - width, ' ');
  return s;
}

void print_table(const std::vector<std::vector<std::string>> &rows) {
  std::vector<std::size_t> widths;
  for (const auto &row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));
  }
  for (const auto &row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      bool last = i + 1 == row.size(); // no trailing padding
      line += last ? row[i] : pad_right(row[i], widths[i] + 2);
    }
    std::printf("%s\n", line.c_str());
  }
}

} // namespace cli
