#include "io/csv.h"

#include "directgnn/error.h"

namespace directgnn {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

}  // namespace

CsvReader::CsvReader(std::string_view text, std::string where)
    : text_(text), where_(std::move(where)) {
  if (text_.substr(0, kByteOrderMark.size()) == kByteOrderMark) pos_ = kByteOrderMark.size();
}

bool CsvReader::take_line_end() {
  if (pos_ < text_.size() && text_[pos_] == '\n') {
    ++pos_;
    return true;
  }
  // CRLF; a lone CR counts only as the file's last line end.
  if (pos_ < text_.size() && text_[pos_] == '\r' &&
      (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n')) {
    pos_ += pos_ + 1 == text_.size() ? 1 : 2;
    return true;
  }
  return false;
}

bool CsvReader::next(CsvRecord& record) {
  while (pos_ < text_.size() && take_line_end()) ++line_;
  if (pos_ >= text_.size()) return false;
  record.fields.clear();
  record.line = line_;
  for (;;) {
    record.fields.emplace_back();
    read_field(record.fields.back(), record.fields.size());
    if (pos_ < text_.size() && text_[pos_] == ',') {
      ++pos_;
      continue;
    }
    if (take_line_end()) ++line_;
    break;
  }
  if (width_ == 0) width_ = record.fields.size();
  if (record.fields.size() != width_) {
    fail(where_, " line ", record.line, ": has ", record.fields.size(),
         " fields but the first line has ", width_,
         "; a field holding a comma must be in double quotes (RFC 4180)");
  }
  return true;
}

void CsvReader::read_field(std::string& out, size_t column) {
  if (pos_ < text_.size() && text_[pos_] == '"') {
    read_quoted(out, column);
    return;
  }
  const size_t start = pos_;
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ',' || c == '\n') break;
    if (c == '\r' && (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n')) break;
    if (c == '"') {
      fail(where_, " line ", line_, ": field ", column,
           " holds a quote but does not start with one; put the whole field in double quotes "
           "and write each quote inside it twice (\"\")");
    }
    ++pos_;
  }
  out.assign(text_.substr(start, pos_ - start));
}

void CsvReader::read_quoted(std::string& out, size_t column) {
  const int64_t open_line = line_;
  ++pos_;
  for (;;) {
    if (pos_ >= text_.size()) {
      fail(where_, " line ", open_line, ": field ", column,
           " opens a quote that is never closed; add the closing \" (a quote inside a quoted "
           "field is written twice, \"\")");
    }
    const char c = text_[pos_++];
    if (c == '"') {
      if (pos_ < text_.size() && text_[pos_] == '"') {
        out += '"';
        ++pos_;
        continue;
      }
      break;
    }
    if (c == '\n') ++line_;
    out += c;
  }
  const size_t p = pos_;
  const bool at_end = p == text_.size() || text_[p] == ',' || text_[p] == '\n' ||
                      (text_[p] == '\r' && (p + 1 == text_.size() || text_[p + 1] == '\n'));
  if (!at_end) {
    fail(where_, " line ", line_, ": field ", column,
         " has text after its closing quote; inside a quoted field write a quote twice (\"\")");
  }
}

std::string_view trimmed(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

bool is_valid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace directgnn
