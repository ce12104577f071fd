// c10d's NCCL backend, made where torch has CUDA (dist/cuda/nccl_backend.cc); builds without
// CUDA link dist/no_nccl.cc, which explains why it cannot be made.
#pragma once

#include <chrono>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace directgnn {

// An NCCL backend for `rank` of `size` that runs its collectives on GPU `device`, bound to it
// so that barriers and communicator set-up use that GPU too.
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size,
                                                    std::chrono::seconds timeout, int device);

}  // namespace directgnn
