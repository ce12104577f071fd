#include "io/text_lines.h"

#include <ATen/Parallel.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/threads.h"
#include "directgnn/error.h"

namespace directgnn {
namespace {

constexpr size_t kBlockBytes = size_t{64} << 20;

// gzip (also reads plain files, as zlib does) with errors naming the file; or, for a source in
// memory, its bytes.
class GzFile {
 public:
  explicit GzFile(const TextSource& source) : path_(source.where) {
    if (source.in_memory) {
      memory_ = source.bytes;
      return;
    }
    file_ = gzopen(path_.c_str(), "rb");
    if (file_ == nullptr) fail_io(path_, ": cannot open (", std::strerror(errno), ")");
    gzbuffer(file_, 1 << 20);
  }
  ~GzFile() {
    if (file_ != nullptr) gzclose(file_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  size_t read(char* out, size_t want) {
    if (file_ == nullptr) {
      const size_t n = std::min(want, memory_.size());
      std::memcpy(out, memory_.data(), n);
      memory_.remove_prefix(n);
      return n;
    }
    const int n = gzread(file_, out, static_cast<unsigned>(want));
    if (n < 0) {
      int code = 0;
      fail(path_, ": read failed (", gzerror(file_, &code),
           "); the file is truncated or not valid gzip");
    }
    return static_cast<size_t>(n);
  }

 private:
  std::string path_;
  gzFile file_ = nullptr;
  std::string_view memory_;
};

// Lines of `block` handed to `on_line` in parallel, numbered from `first`.
void parse_block(std::string_view block, int64_t first,
                 const std::function<void(std::string_view, int64_t)>& on_line,
                 const std::vector<size_t>& starts) {
  const auto slices = static_cast<int64_t>(starts.size());
  std::vector<int64_t> lines_before(starts.size() + 1, 0);
  at::parallel_for(0, slices, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t s = lo; s < hi; ++s) {
      const size_t end = s + 1 < slices ? starts[s + 1] : block.size();
      int64_t count = 0;
      for (size_t p = starts[s]; p < end; ++count) {
        const void* nl = std::memchr(block.data() + p, '\n', end - p);
        p = nl == nullptr ? end
                          : static_cast<size_t>(static_cast<const char*>(nl) - block.data()) + 1;
      }
      lines_before[s + 1] = count;
    }
  });
  for (int64_t s = 0; s < slices; ++s) lines_before[s + 1] += lines_before[s];
  at::parallel_for(0, slices, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t s = lo; s < hi; ++s) {
      const size_t end = s + 1 < slices ? starts[s + 1] : block.size();
      int64_t number = first + lines_before[s];
      for (size_t p = starts[s]; p < end; ++number) {
        const void* nl = std::memchr(block.data() + p, '\n', end - p);
        const size_t stop =
            nl == nullptr ? end : static_cast<size_t>(static_cast<const char*>(nl) - block.data());
        std::string_view line = block.substr(p, stop - p);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        on_line(line, number);
        p = stop + 1;
      }
    }
  });
}

int64_t count_lines(std::string_view block) {
  int64_t n = 0;
  for (size_t p = 0; p < block.size();) {
    const void* nl = std::memchr(block.data() + p, '\n', block.size() - p);
    ++n;
    if (nl == nullptr) break;
    p = static_cast<size_t>(static_cast<const char*>(nl) - block.data()) + 1;
  }
  return n;
}

}  // namespace

void for_each_line(const TextSource& source,
                   const std::function<void(int64_t, int64_t)>& on_block_start,
                   const std::function<void(std::string_view, int64_t)>& on_line) {
  GzFile file(source);
  // Text in memory needs no more buffer than its own size (fuzzing calls this many times).
  std::vector<char> buffer(
      source.in_memory ? std::min(kBlockBytes, std::max<size_t>(64, source.bytes.size() + 1))
                       : kBlockBytes);
  size_t held = 0;  // bytes of an unfinished last line carried into the next block
  int64_t next_line = 1;
  const int threads = std::max(1, num_threads());
  for (bool eof = false; !eof;) {
    if (held == buffer.size()) buffer.resize(buffer.size() * 2);  // a line longer than a block
    const size_t got = file.read(buffer.data() + held, buffer.size() - held);
    eof = got == 0;
    const size_t filled = held + got;
    size_t usable = filled;
    if (!eof) {
      while (usable > 0 && buffer[usable - 1] != '\n') --usable;
      if (usable == 0) {
        held = filled;
        continue;
      }
    }
    const std::string_view block(buffer.data(), usable);
    if (!block.empty()) {
      // Slice starts at line boundaries near equal byte offsets.
      std::vector<size_t> starts{0};
      for (int t = 1; t < 4 * threads; ++t) {
        size_t p = block.size() * t / (4 * threads);
        const void* nl = std::memchr(block.data() + p, '\n', block.size() - p);
        if (nl == nullptr) break;
        p = static_cast<size_t>(static_cast<const char*>(nl) - block.data()) + 1;
        if (p < block.size() && p > starts.back()) starts.push_back(p);
      }
      const int64_t count = count_lines(block);
      on_block_start(next_line, count);
      parse_block(block, next_line, on_line, starts);
      next_line += count;
    }
    held = filled - usable;
    std::memmove(buffer.data(), buffer.data() + usable, held);
  }
}

std::string first_line(const TextSource& source) {
  GzFile file(source);
  std::string line;
  char c[4096];
  while (const size_t got = file.read(c, sizeof c)) {
    const void* nl = std::memchr(c, '\n', got);
    if (nl != nullptr) {
      line.append(c, static_cast<size_t>(static_cast<const char*>(nl) - c));
      break;
    }
    line.append(c, got);
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::string read_all_text(const TextSource& source) {
  GzFile file(source);
  std::string text;
  char c[1 << 16];
  while (const size_t got = file.read(c, sizeof c)) text.append(c, got);
  return text;
}

int split_fields(std::string_view line, std::string_view* fields, int max) {
  int n = 0;
  size_t p = 0;
  while (p < line.size()) {
    while (p < line.size() && (line[p] == ',' || line[p] == '\t' || line[p] == ' ')) ++p;
    if (p == line.size()) break;
    size_t q = p;
    while (q < line.size() && line[q] != ',' && line[q] != '\t' && line[q] != ' ') ++q;
    if (n < max) fields[n] = line.substr(p, q - p);
    ++n;
    p = q;
  }
  return n;
}

bool parse_int(std::string_view field, int64_t& value) {
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, value);
  return ec == std::errc() && ptr == end;
}

bool parse_float(std::string_view field, float& value) {
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, value);
  return ec == std::errc() && ptr == end;
}

}  // namespace directgnn
