// NumPy .npy files (format versions 1, 2 and 3), little-endian, C order.
//
// Supported dtypes: <f4 <f2 <f8 <i4 <i8 |i1 |u1 |b1 (tensor dtypes float32, float16, float64,
// int32, int64, int8, uint8, bool). Reading memory-maps the file and wraps the mapping in an
// at::Tensor without copying: the mapping is private (copy-on-write), so a tensor write never
// reaches the file, and it is unmapped when the last tensor viewing it goes away.
// Unicode (<U) members are rejected when asked for; pickled objects (|O) are always refused.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace directgnn {

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;  // bytes from the start of the file to the array data
};

// Parses the header at `data` (at most `size` bytes). `where` names the file in errors.
NpyHeader parse_npy_header(const uint8_t* data, size_t size, const std::string& where);

// The tensor dtype for a header's descr; throws naming `where` and the fix when unsupported.
at::ScalarType npy_scalar_type(const std::string& descr, const std::string& where);

// A tensor viewing the .npy image at `data` without copying; `owner` keeps the bytes alive.
at::Tensor npy_view(std::shared_ptr<const void> owner, const uint8_t* data, size_t size,
                    const std::string& where);

// The 1-D array of unicode strings (dtype <U) in the .npy image at `data`, as UTF-8 (numpy's
// trailing NUL padding removed). Throws naming `where` for another dtype or a bad code point.
std::vector<std::string> npy_strings(const uint8_t* data, size_t size, const std::string& where);

// Memory-maps `path` and returns its array as a tensor (no copy).
at::Tensor load_npy(const std::string& path);

// Reads the array of `path` into `into` (contiguous, CPU), which must have its dtype and shape
// (checked first, naming the file): through a mapping, chunk by chunk, each chunk's pages handed
// back once copied, so a table as large as memory is read without the process ever holding it
// twice (the pages stay in the page cache, which the kernel reclaims).
void load_npy_into(const std::string& path, at::Tensor& into);

// How the pages of a memory-mapped tensor will be read, told to the kernel (madvise):
// kReadAround is the kernel's default (each page fault reads its neighbours too, up to the
// device's read-ahead window, often megabytes); kSequential widens that read-ahead for one
// pass from start to end; kRandom reads only the faulting page, for rows gathered at random
// from a table that cannot stay in memory. Tensors that are not mappings are left alone.
enum class MapAccess { kReadAround, kSequential, kRandom };
void advise_access(const at::Tensor& mapped, MapAccess access);

// Hands back the pages of `rows` (the whole pages inside it) when it views a mapping that
// load_npy made: a table read once, say to project it, then need not stay resident (its pages
// are read again from the file, or the page cache, if touched). Any other tensor is left
// alone. Writes to those pages of the mapping (a private one) would be lost: call it only on
// rows nothing wrote.
void release_mapped_pages(const at::Tensor& rows);

// The .npy header (format 1.0, or 2.0 when the header needs it) for a tensor's dtype and shape,
// padded with spaces (as the format allows) so the data starts at a multiple of `align` bytes.
// Feature tables use kNpyDiskAlign: 4 KiB rows then sit each in one disk block.
constexpr size_t kNpyDiskAlign = 4096;
std::string npy_header_for(const at::Tensor& tensor);
std::string npy_header_for(at::ScalarType dtype, at::IntArrayRef shape, size_t align = 64);

// Writes `tensor` (any supported dtype, made contiguous) to `path` atomically.
void save_npy(const std::string& path, const at::Tensor& tensor);

// A private (copy-on-write) memory mapping of a whole file, shared by the tensors viewing it.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace directgnn
