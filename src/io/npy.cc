#include "io/npy.h"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "core/atomic_file.h"
#include "directgnn/error.h"
#include "io/text_lines.h"

namespace directgnn {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// A cursor over the header's Python dict literal, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  NpyHeader parse() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"') {
          bad("field 'descr' is not a simple dtype string (structured arrays are not supported)");
        }
        header.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        header.shape = parse_shape();
        have_shape = true;
      } else {
        bad("unexpected header field '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != '}') bad("expected ',' or '}' in header");
    }
    if (!have_descr || !have_order || !have_shape) {
      bad("header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    return header;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) bad(std::string("expected '") + c + "' in header");
    ++pos_;
  }
  [[noreturn]] void bad(const std::string& what) const {
    fail(where_, ": not a valid .npy header: ", what, " (re-save the array with numpy.save)");
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string");
    ++pos_;
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    bad("field 'fortran_order' is not True or False");
  }
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        return shape;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        bad("field 'shape' holds a non-integer");
      int64_t value = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (value > (INT64_MAX - 9) / 10) bad("field 'shape' holds a dimension too large");
        value = value * 10 + (peek() - '0');
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long suffix
      shape.push_back(value);
      if (shape.size() > 32) bad("field 'shape' has more than 32 dimensions");
      skip_space();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        bad("expected ',' or ')' in field 'shape'");
    }
  }

  std::string_view text_;
  const std::string& where_;
  size_t pos_ = 0;
};

struct DtypeInfo {
  const char* descr;
  at::ScalarType type;
};
constexpr DtypeInfo kDtypes[] = {
    {"<f4", at::kFloat}, {"<f2", at::kHalf}, {"<f8", at::kDouble}, {"<i4", at::kInt},
    {"<i8", at::kLong},  {"|i1", at::kChar}, {"|u1", at::kByte},   {"|b1", at::kBool},
};

std::string canonical_descr(std::string descr) {
  // '=' (native) equals '<' on the little-endian machines we run on; 1-byte types may use any.
  if (!descr.empty() && descr[0] == '=') descr[0] = '<';
  if (descr.size() == 3 && descr[2] == '1' && (descr[0] == '<' || descr[0] == '>')) descr[0] = '|';
  return descr;
}

}  // namespace

NpyHeader parse_npy_header(const uint8_t* data, size_t size, const std::string& where) {
  if (size < kMagicLen + 4 || std::memcmp(data, kMagic, kMagicLen) != 0) {
    fail(where,
         ": not a .npy file (missing the \\x93NUMPY magic; the file may be truncated or "
         "of another format)");
  }
  const int major = data[6];
  size_t header_len = 0, prefix = 0;
  if (major == 1) {
    header_len = data[8] | (size_t{data[9]} << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) fail(where, ": truncated .npy header");
    header_len =
        data[8] | (size_t{data[9]} << 8) | (size_t{data[10]} << 16) | (size_t{data[11]} << 24);
    prefix = 12;
  } else {
    fail(where, ": unsupported .npy format version ", major, " (versions 1, 2 and 3 are read)");
  }
  if (header_len > size - prefix) {
    fail(where, ": truncated .npy header (header says ", header_len, " bytes, file has ",
         size - prefix, ")");
  }
  const std::string_view text(reinterpret_cast<const char*>(data + prefix), header_len);
  NpyHeader header = DictParser(text, where).parse();
  header.data_offset = prefix + header_len;
  return header;
}

at::ScalarType npy_scalar_type(const std::string& raw_descr, const std::string& where) {
  const std::string descr = canonical_descr(raw_descr);
  for (const auto& info : kDtypes) {
    if (descr == info.descr) return info.type;
  }
  if (descr.find('O') != std::string::npos) {
    fail(where, ": holds pickled Python objects (dtype '", raw_descr,
         "'), which are refused because loading them can run code; save a numeric array");
  }
  if (descr.find('U') != std::string::npos || descr.find('S') != std::string::npos) {
    fail(where, ": holds strings (dtype '", raw_descr, "'); only numeric arrays are read");
  }
  if (!descr.empty() && descr[0] == '>') {
    fail(where, ": is big-endian (dtype '", raw_descr,
         "'); convert it with arr.astype(arr.dtype.newbyteorder('<'))");
  }
  fail(where, ": unsupported dtype '", raw_descr, "' (supported: <f4 <f2 <f8 <i4 <i8 |i1 |u1 |b1)");
}

at::Tensor npy_view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size,
                    const std::string& where) {
  const NpyHeader header = parse_npy_header(data, size, where);
  const at::ScalarType type = npy_scalar_type(header.descr, where);
  if (header.fortran_order && header.shape.size() > 1) {
    fail(where, ": is stored in Fortran order; save it with numpy.ascontiguousarray(arr)");
  }
  uint64_t count = 1;
  for (int64_t dim : header.shape) {
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count)) {
      fail(where, ": shape is too large");
    }
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, c10::elementSize(type), &bytes)) {
    fail(where, ": shape is too large");
  }
  const size_t available = size - header.data_offset;
  if (bytes > available) {
    fail(where, ": truncated: the header promises ", bytes, " bytes of data but the file holds ",
         available, " (re-create or re-download the file)");
  }
  void* ptr = const_cast<uint8_t*>(data + header.data_offset);
  if (reinterpret_cast<uintptr_t>(ptr) % c10::elementSize(type) != 0) {
    // An array stored at an odd offset (possible inside an uncompressed .npz) is copied, as
    // its elements cannot be read in place.
    at::Tensor copy = at::empty(header.shape, at::TensorOptions().dtype(type));
    if (bytes > 0) std::memcpy(copy.data_ptr(), ptr, bytes);  // an empty one has no data
    return copy;
  }
  auto keep = std::move(owner);
  return at::from_blob(
      ptr, header.shape, [keep](void*) mutable { keep.reset(); }, at::TensorOptions().dtype(type));
}

namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::vector<std::string> npy_strings(const uint8_t* data, size_t size, const std::string& where) {
  const NpyHeader header = parse_npy_header(data, size, where);
  const std::string descr = canonical_descr(header.descr);
  int64_t chars = 0;
  const bool unicode = descr.size() > 2 && descr.compare(0, 2, "<U") == 0 &&
                       parse_int(descr.substr(2), chars) && chars > 0 && chars <= (1 << 20);
  DGNN_CHECK(unicode && header.shape.size() == 1, where,
             ": expected a 1-D array of strings (dtype <U), got dtype '", header.descr, "' with ",
             header.shape.size(), " dimension(s)");
  const auto count = static_cast<uint64_t>(header.shape[0]);
  const auto width = static_cast<uint64_t>(chars);
  const size_t available = size - header.data_offset;
  DGNN_CHECK(count <= available / (4 * width), where, ": truncated: ", count, " strings of ", width,
             " characters need more than the ", available, " bytes the file holds");
  std::vector<std::string> out(count);
  const uint8_t* p = data + header.data_offset;
  for (uint64_t i = 0; i < count; ++i) {
    for (uint64_t c = 0; c < width; ++c, p += 4) {
      const uint32_t cp =
          p[0] | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
      if (cp == 0) continue;  // numpy pads short strings with NULs
      DGNN_CHECK(cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF), where, ": string ", i,
                 " holds the invalid code point ", cp);
      append_utf8(out[i], cp);
    }
  }
  return out;
}

namespace {

// The live mappings of MappedFile, begin -> size, so that release_mapped_pages never discards
// memory that is not a file's.
struct MappingRegistry {
  std::mutex mutex;
  std::map<uintptr_t, size_t> ranges;
};
MappingRegistry& mappings() {
  static MappingRegistry registry;
  return registry;
}

}  // namespace

MappedFile::MappedFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_io("cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    close(fd);
    fail_io("cannot stat ", path, ": ", std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    fail(path, ": is not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) {
    close(fd);
    fail(path, ": is empty (0 bytes)");
  }
  // MAP_NORESERVE: a private writable mapping is otherwise charged in full against the
  // kernel's overcommit limit, and a table larger than RAM + swap could not be mapped at all.
  data_ = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
  const int saved = errno;
  close(fd);
  if (data_ == MAP_FAILED) {
    data_ = nullptr;
    fail_io("cannot memory-map ", path, ": ", std::strerror(saved));
  }
  std::lock_guard<std::mutex> lock(mappings().mutex);
  mappings().ranges[reinterpret_cast<uintptr_t>(data_)] = size_;
}

MappedFile::~MappedFile() {
  if (data_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mappings().mutex);
    mappings().ranges.erase(reinterpret_cast<uintptr_t>(data_));
  }
  munmap(data_, size_);
}

void release_mapped_pages(const at::Tensor& rows) {
  if (!rows.defined() || rows.nbytes() == 0 || !rows.is_contiguous() || !rows.is_cpu()) return;
  const auto begin = reinterpret_cast<uintptr_t>(rows.data_ptr());
  const uintptr_t end = begin + rows.nbytes();
  {
    std::lock_guard<std::mutex> lock(mappings().mutex);
    const auto& ranges = mappings().ranges;
    auto it = ranges.upper_bound(begin);
    if (it == ranges.begin()) return;
    --it;
    if (end > it->first + it->second) return;
  }
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void advise_access(const at::Tensor& mapped, MapAccess access) {
  if (!mapped.defined() || mapped.nbytes() == 0) return;
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(mapped.data_ptr());
  const uintptr_t first = begin / page * page;
  const uintptr_t last = (begin + mapped.nbytes() + page - 1) / page * page;
  const int advice = access == MapAccess::kRandom       ? MADV_RANDOM
                     : access == MapAccess::kSequential ? MADV_SEQUENTIAL
                                                        : MADV_NORMAL;
  // Advice only: on memory that is not a file mapping it changes nothing that matters, and a
  // refusal (ENOMEM for a range that is not mapped) leaves the default in place.
  madvise(reinterpret_cast<void*>(first), last - first, advice);
}

at::Tensor load_npy(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  const uint8_t* data = file->data();
  const size_t size = file->size();
  return npy_view(std::move(file), data, size, path);
}

void load_npy_into(const std::string& path, at::Tensor& into) {
  auto file = std::make_shared<MappedFile>(path);
  const at::Tensor from = npy_view(file, file->data(), file->size(), path);
  DGNN_CHECK(from.sizes() == into.sizes() && from.scalar_type() == into.scalar_type(), path,
             ": has shape ", from.sizes(), " and dtype ", from.scalar_type(), " but ", into.sizes(),
             " of ", into.scalar_type(), " is needed");
  DGNN_CHECK(into.is_contiguous() && into.device().is_cpu(), "load_npy_into: ", path,
             ": the destination must be a contiguous CPU tensor");
  const auto* src = static_cast<const uint8_t*>(from.data_ptr());
  auto* dst = static_cast<uint8_t*>(into.data_ptr());
  const auto bytes = static_cast<int64_t>(into.nbytes());
  constexpr int64_t kChunk = int64_t{64} << 20;
  for (int64_t done = 0; done < bytes; done += kChunk) {
    const int64_t n = std::min(kChunk, bytes - done);
    std::memcpy(dst + done, src + done, static_cast<size_t>(n));
    // Left alone when `from` is no view of the mapping (npy_view copies an array stored at an
    // odd offset).
    release_mapped_pages(at::from_blob(const_cast<uint8_t*>(src + done), {n}, at::kByte));
  }
}

std::string npy_header_for(const at::Tensor& tensor) {
  return npy_header_for(tensor.scalar_type(), tensor.sizes());
}

std::string npy_header_for(at::ScalarType dtype, at::IntArrayRef shape, size_t align) {
  const char* descr = nullptr;
  for (const auto& info : kDtypes) {
    if (info.type == dtype) descr = info.descr;
  }
  DGNN_CHECK(descr != nullptr, "cannot write dtype ", dtype, " to .npy");
  const auto dims = static_cast<int64_t>(shape.size());
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  for (int64_t d = 0; d < dims; ++d) {
    dict += std::to_string(shape[d]);
    if (dims == 1 || d + 1 < dims) dict += ", ";
  }
  dict += "), }";
  // Pad with spaces and a newline so the data starts on an `align`-byte boundary.
  DGNN_CHECK(align >= 1 && align <= 65536, "npy header alignment must be in 1..65536");
  const bool v2 = dict.size() + 11 + align > 65535;
  const size_t prefix = v2 ? 12 : 10;
  const size_t total = (prefix + dict.size() + 1 + align - 1) / align * align;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const size_t len = dict.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (v2) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  return out + dict;
}

void save_npy(const std::string& path, const at::Tensor& tensor) {
  const at::Tensor data = tensor.cpu().contiguous();
  const std::string header = npy_header_for(data);
  write_file_atomic(
      path, {header, std::string_view(static_cast<const char*>(data.data_ptr()), data.nbytes())});
}

}  // namespace directgnn
