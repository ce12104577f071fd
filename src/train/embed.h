// Embeddings out (`directgnn embed`): every node's final-layer output by layer-wise inference
// with full neighbourhoods, written as an .npy file atomically (a temporary name, then a
// rename), float32 or float16. Each layer's [N, width] output lives in a memory-mapped scratch
// file beside the output, not in RAM, so a graph whose layers do not fit in memory still
// embeds; the scratch files are removed afterwards, also on failure.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>

#include "graph/csr_graph.h"
#include "nn/model.h"

namespace directgnn {

struct EmbedOptions {
  at::ScalarType dtype = at::kFloat;  // float32 or float16
  int64_t chunk = 65536;              // destination nodes per inference step
  bool progress = true;               // progress lines on a terminal
  // Row o of the file is stored node stored_of[o] (a renumbered dataset's original order,
  // io/dataset_reorder.h); undefined: the graph's node order.
  at::Tensor stored_of;
};

// Writes `model`'s final-layer output for every node of `graph` ([N, out] rows in node order)
// to `out`. Throws naming the file on a full disk or an embedding float16 cannot hold.
void write_embeddings(GnnModel& model, const CsrGraph& graph, const at::Tensor& features,
                      const std::string& out, const EmbedOptions& options);
// `rows` ([N, width]) as an .npy of `dtype` at `out`, atomically, a chunk at a time (row o is
// rows[stored_of[o]] when stored_of is defined); throws naming the node where a value is not
// finite in `dtype`.
void write_embedding_rows(const at::Tensor& rows, at::ScalarType dtype, const std::string& out,
                          bool progress, const at::Tensor& stored_of = {});

}  // namespace directgnn
