#include "graph/planted_partition.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <vector>

#include "core/aligned_tensor.h"
#include "core/random.h"
#include "directgnn/error.h"
#include "graph/class_features.h"
#include "graph/coo_builder.h"

namespace directgnn {
Dataset make_planted_partition(const PlantedPartitionOptions& o) {
  DGNN_CHECK(o.num_nodes >= 2 * o.num_classes && o.num_classes >= 2,
             "synthetic graph needs at least 2 classes and 2 nodes per class");
  DGNN_CHECK(o.avg_degree > 0 && o.feat_dim > 0 && o.homophily >= 0 && o.homophily <= 1,
             "synthetic graph needs a positive degree and feature dimension, homophily in [0, 1]");
  const int64_t n = o.num_nodes, c = o.num_classes;
  Dataset ds;
  ds.name = "planted-partition";
  ds.source = "synthetic planted-partition graph (" + std::to_string(n) + " nodes, " +
              std::to_string(c) + " classes)";
  ds.num_classes = c;
  // Classes in equal shares, assigned to a seeded permutation of the nodes.
  ds.labels = at::empty({n}, at::kLong);
  int64_t* lab = ds.labels.data_ptr<int64_t>();
  std::vector<int64_t> perm(n);
  for (int64_t v = 0; v < n; ++v) perm[v] = v;
  SplitRng rng(mix64(o.seed, 1));
  for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  std::vector<std::vector<int64_t>> members(c);
  for (int64_t i = 0; i < n; ++i) {
    lab[perm[i]] = i % c;
    members[i % c].push_back(perm[i]);
  }
  // Each undirected edge: a uniform endpoint, then a partner from its class (homophily) or
  // from anywhere. Edge e draws from its own stream, so threads do not change the result.
  const auto m = static_cast<int64_t>(std::llround(n * o.avg_degree / 2));
  at::Tensor src = at::empty({m}, at::kLong), dst = at::empty({m}, at::kLong);
  int64_t* s = src.data_ptr<int64_t>();
  int64_t* d = dst.data_ptr<int64_t>();
  at::parallel_for(0, m, 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      SplitRng r(mix64(o.seed, 2, e));
      const int64_t u = static_cast<int64_t>(r.below(n));
      s[e] = u;
      if (r.uniform() < o.homophily) {
        const auto& same = members[lab[u]];
        d[e] = same[r.below(same.size())];
      } else {
        d[e] = static_cast<int64_t>(r.below(n));
      }
    }
  });
  ds.graph = build_csr_from_coo(std::move(src), std::move(dst), n, {true, true}, "synthetic graph");
  // Features: mean of the class (fixed per seed) plus unit Gaussian noise.
  ds.features = empty_aligned({n, o.feat_dim}, at::kFloat);
  ClassFeatures(c, o.feat_dim, o.signal, o.seed).fill(lab, 0, n, ds.features.data_ptr<float>());
  // Split over a second permutation.
  for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  const auto n_train = static_cast<int64_t>(n * o.train_fraction);
  const auto n_val = static_cast<int64_t>(n * o.val_fraction);
  DGNN_CHECK(n_train > 0 && n_val > 0 && n_train + n_val < n,
             "synthetic split fractions leave a split empty");
  const at::Tensor order = at::tensor(perm, at::kLong);
  ds.splits.push_back({std::get<0>(order.narrow(0, 0, n_train).sort()),
                       std::get<0>(order.narrow(0, n_train, n_val).sort()),
                       std::get<0>(order.narrow(0, n_train + n_val, n - n_train - n_val).sort())});
  return ds;
}

}  // namespace directgnn
