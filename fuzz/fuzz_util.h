// Shared by the fuzz targets: one thread, and every array a reader returns read in full, so
// a view past the end of the input is seen by AddressSanitizer.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdint>

namespace directgnn::fuzz {

inline void single_threaded() {
  static const bool once = [] {
    at::set_num_threads(1);
    return true;
  }();
  (void)once;
}

// Reads every byte of `t` (a clone copies it element by element) and folds them into a value
// the optimiser cannot drop.
inline uint64_t touch(const at::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return 0;
  const at::Tensor bytes = t.contiguous().view({-1}).clone();
  const auto* p = static_cast<const uint8_t*>(bytes.data_ptr());
  uint64_t h = 0;
  for (size_t i = 0; i < bytes.nbytes(); ++i) h = h * 31 + p[i];
  return h;
}

}  // namespace directgnn::fuzz
