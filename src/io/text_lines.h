// Streaming reader for large line-oriented text files (CSV, TSV, SNAP edge lists), plain or
// gzip-compressed: the file is read in blocks of whole lines (decompression is serial), and
// each block's lines are parsed in parallel, every line knowing its line number for errors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace directgnn {

// Where lines come from: a file (plain or gzip-compressed) or bytes already in memory (tests
// and the fuzz targets). A path converts implicitly.
struct TextSource {
  TextSource(std::string file_path) : where(std::move(file_path)) {}  // NOLINT: implicit
  TextSource(const char* file_path) : where(file_path) {}             // NOLINT: implicit
  static TextSource memory(std::string_view bytes, std::string name) {
    TextSource source(std::move(name));
    source.bytes = bytes;
    source.in_memory = true;
    return source;
  }
  std::string where;       // the path, or the name errors give for bytes in memory
  std::string_view bytes;  // the text itself when in_memory (plain text, not gzip)
  bool in_memory = false;
};

// Calls `on_line(line, line_number)` for every line of `source` (1-based numbers, without the
// newline or a trailing '\r'), many lines in parallel. `on_block_start(first_line, count)`
// runs serially before each block's lines (so callers can grow their outputs) and its lines
// get indices first_line .. first_line + count - 1. Throws naming the file on I/O errors.
void for_each_line(const TextSource& source,
                   const std::function<void(int64_t first_line, int64_t count)>& on_block_start,
                   const std::function<void(std::string_view line, int64_t line_number)>& on_line);

// The first line of `source` (without its newline); empty for an empty file.
std::string first_line(const TextSource& source);

// The whole of `source` as one string (decompressed); for small files read in one piece.
std::string read_all_text(const TextSource& source);

// Splits `line` at commas, tabs or spaces into up to `max` fields; returns how many it found
// (fields beyond `max` are counted, not stored). Empty fields between separators are skipped.
int split_fields(std::string_view line, std::string_view* fields, int max);

// Parse a whole field as a number; false when it is not one (or has trailing characters).
bool parse_int(std::string_view field, int64_t& value);
bool parse_float(std::string_view field, float& value);

}  // namespace directgnn
