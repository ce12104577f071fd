#include "train/table_init.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

#include "core/progress.h"
#include "core/random.h"
#include "directgnn/error.h"

namespace directgnn {
namespace {

// Rows of `features` (any float dtype, maybe memory-mapped) times a random [F, dim] matrix of
// N(0, 1/F) entries, a block of rows at a time so that a mapped table is never copied whole.
at::Tensor projected_features(const at::Tensor& features, int64_t dim, uint64_t seed) {
  const int64_t f = features.size(1);
  at::Tensor w = at::empty({f, dim}, at::kFloat);
  float* p = w.data_ptr<float>();
  SplitRng rng(seed);
  for (int64_t i = 0; i < f * dim; ++i) {
    p[i] = static_cast<float>((rng.uniform() * 2.0 - 1.0) * std::sqrt(3.0 / f));
  }
  at::Tensor out = at::empty({features.size(0), dim}, at::kFloat);
  constexpr int64_t kBlock = 1 << 16;
  for (int64_t begin = 0; begin < features.size(0); begin += kBlock) {
    const int64_t n = std::min(kBlock, features.size(0) - begin);
    at::Tensor rows = out.narrow(0, begin, n);
    at::mm_out(rows, features.narrow(0, begin, n).to(at::kFloat), w);
  }
  return out;
}

// acc[v] += the sum of x's rows at relation r's in-neighbours of v; count[v] += their number.
template <typename Index>
void add_neighbour_rows(const CsrGraph& g, const at::Tensor& x, at::Tensor& acc,
                        std::vector<int64_t>& count) {
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
      count[v] += indptr[v + 1] - indptr[v];
    }
  });
}

// acc's rows scaled to norm 1 where count says a row had neighbours (their mean's direction),
// else `previous`'s row.
void finish_mean_rows(const at::Tensor& previous, const std::vector<int64_t>& count,
                      at::Tensor& acc) {
  const int64_t dim = acc.size(1);
  const float* before = previous.data_ptr<float>();
  float* out = acc.data_ptr<float>();
  at::parallel_for(0, acc.size(0), 1024, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      float* row = out + v * dim;
      double norm = 0;
      for (int64_t j = 0; j < dim; ++j) norm += double(row[j]) * row[j];
      if (count[v] == 0 || norm == 0) {
        std::copy(before + v * dim, before + (v + 1) * dim, row);
        continue;
      }
      const auto scale = static_cast<float>(1.0 / std::sqrt(norm));
      for (int64_t j = 0; j < dim; ++j) row[j] *= scale;
    }
  });
}

}  // namespace

std::vector<at::Tensor> smoothed_rows(const HeteroDataset& graph, std::vector<at::Tensor> start,
                                      int64_t hops, uint64_t seed, bool progress) {
  const size_t types = graph.node_types.size();
  DGNN_CHECK(start.size() == types, "smoothed_rows: ", start.size(), " starts for ", types,
             " node types");
  int64_t dim = 0;
  for (const at::Tensor& s : start) {
    if (s.defined()) dim = s.size(1);
  }
  std::vector<at::Tensor> x(types);
  for (size_t t = 0; t < types; ++t) {
    const NodeType& type = graph.node_types[t];
    if (start[t].defined()) {
      x[t] = start[t].to(at::kFloat).contiguous();  // read only: each hop writes new arrays
    } else if (type.has_features() && dim > 0) {
      x[t] = projected_features(type.features, dim, mix64(seed, 0x9d0f, t));
    }
  }
  Progress shown("smoothing the embedding tables (hops)", progress ? hops : -1);
  for (int64_t hop = 0; hop < hops; ++hop) {
    shown.update(hop);
    // Each hop reads the previous hop's rows of every type: a second array per type.
    std::vector<at::Tensor> next(types);
    for (size_t t = 0; t < types; ++t) {
      if (!x[t].defined()) continue;
      at::Tensor acc = at::zeros_like(x[t]);
      std::vector<int64_t> count(x[t].size(0), 0);
      for (const Relation& r : graph.relations) {
        if (r.dst_type != static_cast<int>(t) || !x[r.src_type].defined()) continue;
        if (r.graph.indices.scalar_type() == at::kInt) {
          add_neighbour_rows<int32_t>(r.graph, x[r.src_type], acc, count);
        } else {
          add_neighbour_rows<int64_t>(r.graph, x[r.src_type], acc, count);
        }
      }
      finish_mean_rows(x[t], count, acc);
      next[t] = std::move(acc);
    }
    x = std::move(next);
  }
  shown.finish();
  for (size_t t = 0; t < types; ++t) {
    if (!start[t].defined()) x[t] = at::Tensor();
  }
  return x;
}

}  // namespace directgnn
