// NumPy .npz archives: a zip of .npy members (numpy.savez: STORED; savez_compressed:
// DEFLATE with zip64 extra fields). Members are parsed only when asked for, so unicode
// members a caller does not need never stop an import.
#pragma once

#include <ATen/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "io/zip.h"

namespace directgnn {

class NpzFile {
 public:
  // Memory-maps the archive at `path`.
  explicit NpzFile(const std::string& path);
  // An archive already in memory; `where` names it in errors.
  NpzFile(std::shared_ptr<const void> owner, const uint8_t* data, size_t size,
          const std::string& where);

  // Array names (member names without the ".npy" suffix).
  std::vector<std::string> keys() const;
  bool contains(const std::string& key) const;
  // The array named `key`; STORED members are views into the mapping, DEFLATE ones are
  // inflated. Throws naming the archive and key when it is missing or unsupported.
  at::Tensor get(const std::string& key) const;
  // The 1-D unicode array named `key` (dtype <U, e.g. gnn-benchmark's class_names) as UTF-8.
  std::vector<std::string> get_strings(const std::string& key) const;
  const std::string& path() const { return zip_->where(); }

 private:
  std::unique_ptr<ZipArchive> zip_;
};

}  // namespace directgnn
