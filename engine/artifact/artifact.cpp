#include "artifact/artifact.hpp"

#include "error.hpp"
#include "util/sha256.hpp"

#include <array>

namespace ctxdb::artifact {

namespace {

constexpr std::array<std::string_view, 8> kKindNames = {
    "file", "diff", "tool_output", "command_log", "image", "dataset", "url_snapshot", "other"};

} // namespace

std::string_view kind_name(Kind k) { return kKindNames[size_t(k)]; }

Kind parse_kind(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name) return Kind(i);
  throw Error(Code::kInvalidArg, "unknown artifact kind '" + std::string(name) +
                                     "' (file, diff, tool_output, command_log, image, dataset, "
                                     "url_snapshot or other)");
}

std::string content_id(std::string_view bytes) {
  return std::string(kIdPrefix) + util::to_hex(util::sha256(bytes));
}

bool is_content_id(std::string_view id) {
  util::Digest d;
  return id.starts_with(kIdPrefix) && util::from_hex(id.substr(kIdPrefix.size()), d);
}

} // namespace ctxdb::artifact
