// Tensors whose first element sits on a boundary wider than torch's CPU allocator gives (64
// bytes). Feature tables are allocated 128-byte aligned: GPU warps read them over PCIe in 128 B
// segments, and a 512 B row that starts 64 bytes past a boundary spans five segments, not four.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace directgnn {

inline constexpr int64_t kTableAlignment = 128;

// An uninitialised contiguous CPU tensor of `sizes` and `dtype` whose data starts on a multiple
// of `alignment` bytes (a power of two): a view into a slightly larger byte buffer.
inline at::Tensor empty_aligned(at::IntArrayRef sizes, at::ScalarType dtype,
                                int64_t alignment = kTableAlignment) {
  int64_t numel = 1;
  for (const int64_t s : sizes) numel *= s;
  const int64_t bytes = numel * static_cast<int64_t>(c10::elementSize(dtype));
  const at::Tensor buffer = at::empty({bytes + alignment}, at::kByte);
  const auto address = reinterpret_cast<uintptr_t>(buffer.data_ptr());
  const auto lead = static_cast<int64_t>((alignment - address % alignment) % alignment);
  return buffer.narrow(0, lead, bytes).view(dtype).view(sizes);
}

}  // namespace directgnn
