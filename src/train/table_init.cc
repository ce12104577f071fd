#include "train/table_init.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

#include "core/progress.h"
#include "core/random.h"
#include "directgnn/error.h"
#include "io/npy.h"

namespace directgnn {
namespace {

// Rows scaled to norm 1 in place (a zero row stays zero).
void unit_rows(at::Tensor& x) {
  const int64_t dim = x.size(1);
  float* p = x.data_ptr<float>();
  at::parallel_for(0, x.size(0), 1024, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      double norm = 0;
      for (int64_t j = 0; j < dim; ++j) norm += double(p[v * dim + j]) * p[v * dim + j];
      if (norm == 0) continue;
      const auto scale = static_cast<float>(1.0 / std::sqrt(norm));
      for (int64_t j = 0; j < dim; ++j) p[v * dim + j] *= scale;
    }
  });
}

// Rows of `features` (any float dtype, maybe memory-mapped) times a random [F, dim] matrix of
// uniform entries, scaled to norm 1. Blocks of a fixed number of rows, each one single-threaded
// product inside the parallel loop (as nn/linear.cc), so that neither the thread count nor the
// library's own threading changes a row, and a mapped table is never copied whole nor left
// resident.
at::Tensor projected_features(const at::Tensor& features, int64_t dim, uint64_t seed) {
  const int64_t f = features.size(1), n = features.size(0);
  at::Tensor w = at::empty({f, dim}, at::kFloat);
  float* p = w.data_ptr<float>();
  SplitRng rng(seed);
  for (int64_t i = 0; i < f * dim; ++i) p[i] = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  at::Tensor out = at::empty({n, dim}, at::kFloat);
  constexpr int64_t kBlock = 4096;
  at::parallel_for(0, (n + kBlock - 1) / kBlock, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t lo = b * kBlock, rows = std::min(kBlock, n - lo);
      at::Tensor slice = out.narrow(0, lo, rows);
      const at::Tensor block = features.narrow(0, lo, rows);
      at::mm_out(slice, block.to(at::kFloat), w);
      // A table on disk then stays out of memory: its pages are read once, not kept.
      release_mapped_pages(block);
    }
  });
  unit_rows(out);
  return out;
}

// acc[v] += the sum of x's rows at relation r's in-neighbours of v.
template <typename Index>
void add_neighbour_rows(const CsrGraph& g, const at::Tensor& x, at::Tensor& acc) {
  const int64_t* indptr = g.indptr.data_ptr<int64_t>();
  const Index* indices = g.indices.data_ptr<Index>();
  const int64_t dim = x.size(1);
  const float* src = x.data_ptr<float>();
  float* dst = acc.data_ptr<float>();
  at::parallel_for(0, acc.size(0), 512, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      float* row = dst + v * dim;
      for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
        const float* from = src + static_cast<int64_t>(indices[e]) * dim;
        for (int64_t j = 0; j < dim; ++j) row[j] += from[j];
      }
    }
  });
}

// One hop for type t: the mean of its in-neighbours' rows in `x` over every relation into it,
// scaled to norm 1; a row whose sum is zero (no in-neighbours, or rows that cancel) keeps
// x[t]'s row.
at::Tensor next_rows(const HeteroDataset& graph, const std::vector<at::Tensor>& x, size_t t) {
  at::Tensor acc = at::zeros_like(x[t]);
  for (const Relation& r : graph.relations) {
    if (r.dst_type != static_cast<int>(t) || !x[r.src_type].defined()) continue;
    if (r.graph.indices.scalar_type() == at::kInt) {
      add_neighbour_rows<int32_t>(r.graph, x[r.src_type], acc);
    } else {
      add_neighbour_rows<int64_t>(r.graph, x[r.src_type], acc);
    }
  }
  unit_rows(acc);
  const int64_t dim = acc.size(1);
  const float* before = x[t].data_ptr<float>();
  float* out = acc.data_ptr<float>();
  at::parallel_for(0, acc.size(0), 1024, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      float* row = out + v * dim;
      if (std::all_of(row, row + dim, [](float value) { return value == 0; })) {
        std::copy(before + v * dim, before + (v + 1) * dim, row);
      }
    }
  });
  return acc;
}

}  // namespace

namespace {

// A featured type's fixed projection: its rows', or with one part's rows only, every rank's
// part summed into one table.
at::Tensor projection(const NodeType& type, int64_t dim, uint64_t seed, const SumOverRanks& sum) {
  at::Tensor own = projected_features(type.features, dim, seed);
  if (type.feature_part < 0) return own;
  DGNN_CHECK(sum, "smooth_rows_in_place: node type '", type.name,
             "' holds one part's rows only; give the sum over the ranks");
  at::Tensor whole = at::zeros({type.count, dim}, at::kFloat);
  whole.narrow(0, type.partition.offsets[type.feature_part], own.size(0)).copy_(own);
  sum(whole);
  return whole;
}

}  // namespace

void smooth_rows_in_place(const HeteroDataset& graph, const std::vector<at::Tensor>& tables,
                          int64_t hops, uint64_t seed, bool progress, const SumOverRanks& sum) {
  const size_t types = graph.node_types.size();
  DGNN_CHECK(tables.size() == types, "smooth_rows_in_place: ", tables.size(), " tables for ", types,
             " node types");
  int64_t dim = 0;
  for (size_t t = 0; t < types; ++t) {
    if (!tables[t].defined()) continue;
    DGNN_CHECK(tables[t].dim() == 2 && tables[t].size(0) == graph.node_types[t].count &&
                   tables[t].scalar_type() == at::kFloat && tables[t].is_contiguous() &&
                   (dim == 0 || tables[t].size(1) == dim),
               "smooth_rows_in_place: the table of node type '", graph.node_types[t].name,
               "' has shape ", tables[t].sizes(), " for ", graph.node_types[t].count, " nodes");
    dim = tables[t].size(1);
  }
  // x[t]: a table (the last hop's rows), or a featured type's projection, which every hop reads
  // and none changes.
  std::vector<at::Tensor> x = tables;
  for (size_t t = 0; t < types; ++t) {
    const NodeType& type = graph.node_types[t];
    if (!tables[t].defined() && type.has_features() && dim > 0) {
      x[t] = projection(type, dim, mix64(seed, 0x9d0f, t), sum);
    }
  }
  Progress shown("smoothing the embedding tables (hops)", progress ? hops : -1);
  for (int64_t hop = 0; hop < hops; ++hop) {
    shown.update(hop);
    // Every table's new rows are made from the previous hop's rows of every type, then written
    // over them.
    std::vector<at::Tensor> next(types);
    for (size_t t = 0; t < types; ++t) {
      if (tables[t].defined()) next[t] = next_rows(graph, x, t);
    }
    for (size_t t = 0; t < types; ++t) {
      if (!next[t].defined()) continue;
      x[t].copy_(next[t]);
      next[t] = at::Tensor();
    }
  }
  shown.finish();
}

std::vector<at::Tensor> smoothed_rows(const HeteroDataset& graph, std::vector<at::Tensor> start,
                                      int64_t hops, uint64_t seed, bool progress) {
  for (at::Tensor& t : start) {
    if (t.defined()) t = t.to(at::kFloat).contiguous().clone();
  }
  smooth_rows_in_place(graph, start, hops, seed, progress);
  return start;
}

}  // namespace directgnn
