// Early checks of placements against the machine: a request that cannot fit fails before any
// work, with the sizes and an option that fits, instead of a deep driver or allocator error.
#pragma once

#include <cstdint>
#include <string>

namespace directgnn::gpu {

// Pinning locks every page in RAM: `bytes` must fit with room to spare (1/8 of RAM, at most
// 4 GiB, kept for everything else). Throws InvalidArgument for `parameter`, the choice that
// asked for it; `what` names the request ("pinned: the feature table"), `fallback` what to do
// instead.
void check_pinnable(int64_t bytes, const std::string& parameter, const std::string& what,
                    const std::string& fallback);

// `bytes` must fit in the free memory of cuda:`device` with headroom for training (1/10 of
// the GPU, at most 2 GiB).
void check_fits_on_device(int64_t bytes, int device, const std::string& parameter,
                          const std::string& what, const std::string& fallback);

}  // namespace directgnn::gpu
