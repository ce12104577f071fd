// The block the nn benchmarks aggregate over: the outermost block of a minibatch of 1024 seeds,
// fan-out 15,10,5, on the 100k-node planted-partition graph of the CPU benchmarks.
#pragma once

#include <ATen/ATen.h>

#include "graph/planted_partition.h"
#include "sampling/sampler.h"

namespace directgnn::bench {

inline const Block& outer_block_100k() {
  static const Block block = [] {
    PlantedPartitionOptions o;
    o.num_nodes = 100000;
    o.avg_degree = 20;
    o.feat_dim = 1;
    static const Dataset ds = make_planted_partition(o);
    const Sampler sampler(ds.graph, {{15, 10, 5}});
    return sampler.sample(at::randperm(ds.num_nodes(), at::kLong).narrow(0, 0, 1024), 7).blocks[0];
  }();
  return block;
}

}  // namespace directgnn::bench
