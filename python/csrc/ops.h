// The operators and classes the Python package `directgnn` calls through torch.ops and
// torch.classes (registered in ops.cc): string arguments parsed into the library's typed
// options here, at the Python boundary.
#pragma once

#include <ATen/Tensor.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "feature/feature_store.h"
#include "sampling/block.h"

namespace directgnn::ops {

// The gather's options from Python's arguments, checked.
GatherOptions gather_options_arg(const std::string& method, bool sort_ids, int64_t max_threads);

// Rows `ids` of `table`, on ids' device: CPU ids gather on the CPU; CUDA ids read a pinned
// table in place (zero-copy or aligned), gather a plain host table with cpu-copy, and index
// a CUDA table on its GPU.
at::Tensor gather(const at::Tensor& table, const at::Tensor& ids, const std::string& method,
                  bool sort_ids, int64_t max_threads);
// The same into `out`: written in place on the CPU, else copied into (an empty `out` is
// resized).
at::Tensor& gather_out(const at::Tensor& table, const at::Tensor& ids, const std::string& method,
                       bool sort_ids, int64_t max_threads, at::Tensor& out);

// Registers a CPU tensor's own memory with the GPU in place, counted: every pin needs its
// unpin. Memory already pinned elsewhere is shared, never registered twice. Read-only unless
// `read_only` is false (the GPU may then write it, e.g. a learnable table's rows).
void pin(const at::Tensor& tensor, bool read_only);
void unpin(const at::Tensor& tensor);
bool is_pinned(const at::Tensor& tensor);

// "dgl" (each layer draws anew) or "pyg" (each node drawn once): SampleMode.
SampleMode sample_mode_arg(const std::string& mode);

// A sampled minibatch as Python sees it: the input nodes (global ids, seeds first); per
// layer, outermost first, the block's CSR over local ids (indptr over its destination nodes,
// indices into its source nodes); the edge ids (mode "pyg" on the CPU, else None); and per
// hop the nodes first reached and the edges drawn (PyG's num_sampled_nodes and _edges).
// input nodes, per block (outermost first) indptr, indices and edge ids (an empty list when not
// asked for), then the nodes and edges first reached per hop.
using SampleResult =
    std::tuple<at::Tensor, std::vector<at::Tensor>, std::vector<at::Tensor>,
               std::vector<at::Tensor>, std::vector<int64_t>, std::vector<int64_t>>;
SampleResult as_result(const MiniBatch& batch);

// A mode "pyg" sample as PyG's SamplerOutput holds it: node (global ids, seeds first), row and
// col (int64: each edge's source and destination local id; the outermost block holds every
// hop's edges), edge (the edge ids; undefined when not asked for), num_sampled_nodes and
// num_sampled_edges.
using PygResult = std::tuple<at::Tensor, at::Tensor, at::Tensor, std::optional<at::Tensor>,
                             std::vector<int64_t>, std::vector<int64_t>>;
PygResult as_pyg_result(const MiniBatch& batch);

void define_gather_many(torch::Library& m);
void impl_gather_many(torch::Library& m);  // CPU and CUDA
void define_sampling(torch::Library& m);
void impl_sampling(torch::Library& m);  // the CPU kernel
void define_datasets(torch::Library& m);
void define_classes(torch::Library& m);
void define_link(torch::Library& m);

}  // namespace directgnn::ops
