// CSV as RFC 4180 defines it: records of comma-separated fields, one per line, CRLF or LF line
// ends. A field in double quotes may hold commas, line breaks and quotes written twice (""),
// so a record can span lines. Bytes pass through unchanged (UTF-8 text stays UTF-8); a
// leading UTF-8 byte-order mark (spreadsheet exports) is skipped, and so are blank lines.
// Every record has as many fields as the first. Errors name the source and line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace directgnn {

struct CsvRecord {
  std::vector<std::string> fields;
  int64_t line = 0;  // the line the record starts on, 1-based
};

class CsvReader {
 public:
  // Reads `text`, which must outlive the reader; `where` names it in errors.
  CsvReader(std::string_view text, std::string where);

  // The next record into `record`; false at the end of the text. Throws directgnn::Error
  // naming the line for an unclosed quote, a quote inside an unquoted field, text after a
  // closing quote, or a record whose field count differs from the first record's.
  bool next(CsvRecord& record);

 private:
  void read_field(std::string& out, size_t column);
  void read_quoted(std::string& out, size_t column);
  // True (and consumes it) when a line end, LF or CRLF, starts at the current position.
  bool take_line_end();

  std::string_view text_;
  std::string where_;
  size_t pos_ = 0;
  int64_t line_ = 1;
  size_t width_ = 0;  // fields per record, fixed by the first record
};

// `s` without the spaces, tabs and line ends around it.
std::string_view trimmed(std::string_view s);

// Whether `text` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);

}  // namespace directgnn
