// A feature table as a .npy file for the disk placement's tests.
#pragma once

#include <ATen/Tensor.h>

#include <fstream>
#include <string>

#include "io/npy.h"
#include "test_util.h"

namespace directgnn::testing {

// `table` written to DIR/table.npy with its data starting at a multiple of `align` bytes.
inline std::string npy_table_file(const TempDirectory& dir, const at::Tensor& table,
                                  size_t align = 4096) {
  const std::string path = dir.file("table.npy");
  std::ofstream out(path, std::ios::binary);
  const std::string header = npy_header_for(table.scalar_type(), table.sizes(), align);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(table.data_ptr()),
            static_cast<std::streamsize>(table.nbytes()));
  return path;
}

}  // namespace directgnn::testing
