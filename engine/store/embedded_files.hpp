// embedded_files.hpp — the files of schema/ compiled into the library
// (SQL migrations and JSON Schemas), so a ctxdb needs no data files.
#pragma once

#include <span>
#include <string_view>

namespace ctxdb::store {

struct EmbeddedFile {
  std::string_view path; // relative to schema/, e.g. "sql/001_init.sql"
  std::string_view content;
};

// Sorted by path. Defined in the build's generated embedded_files.cpp.
std::span<const EmbeddedFile> embedded_files();

// The file at schema/<path>, or nullptr.
const EmbeddedFile *find_embedded(std::string_view path);

} // namespace ctxdb::store
