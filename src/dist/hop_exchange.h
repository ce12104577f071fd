// A graph's structure partitioned over ranks by a partition book (graph/partition.h): rank r
// holds the in-edges of the nodes it owns (rows offsets[r] .. offsets[r+1]-1, in global ids),
// and a sampler hop whose frontier holds other ranks' nodes asks their owners for their picks
// with four all-to-alls (how many rows each rank asks and with which random seed; the frontier
// ids grouped by owner; each row's pick count back; the picks back), as the feature exchange
// does for rows (dist/feature_exchange.h). The owners draw with the sampler's keyed draws and
// the asker's seed, so a node's picks do not depend on who draws them: a partitioned run
// samples the very neighbours a one-process run does.
//
// Every draw is a collective (sampling/sampler.h, HopSource); the exchange runs on a group of
// its own (ProcessGroup::subgroup).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "dist/part_offsets.h"
#include "dist/process_group.h"
#include "graph/csr_graph.h"
#include "sampling/sampler.h"

namespace directgnn {

// What the draws of a run moved, since the last clear.
struct HopCounts {
  int64_t draws = 0;
  int64_t rows = 0;         // frontier rows drawn
  int64_t remote_rows = 0;  // of those, rows other ranks own
  int64_t bytes_sent = 0, bytes_received = 0;
  double seconds = 0;
};

class HopExchange final : public HopSource {
 public:
  // `offsets`: P+1 ascending node offsets, P = the group's size. `graph` has every node's row
  // (N = offsets[P]) but the edges of this rank's nodes only (partitioned_rows makes one); it
  // must outlive the exchange. `weighted`: owners draw by the graph's edge weights. Makes the
  // whole graph's degrees with one exchange (a collective).
  HopExchange(std::vector<int64_t> offsets, const CsrGraph& graph, bool weighted,
              std::unique_ptr<ProcessGroup> group);

  HopPicks draw(const at::Tensor& frontier, int64_t fanout, uint64_t seed, uint64_t hop) override;
  const at::Tensor& degrees() const override { return degrees_; }

  HopCounts counts() const;
  void clear_counts();

 private:
  PartOffsets offsets_;
  const CsrGraph& graph_;
  bool weighted_;
  std::unique_ptr<ProcessGroup> group_;
  at::Tensor degrees_;
  std::mutex mutex_;  // one draw at a time
  mutable std::mutex counts_mutex_;
  HopCounts counts_;
};

// `graph` (whole) cut to the rows of nodes [begin, end): every node keeps its row, the others
// empty. What a rank of a partitioned structure holds, for tests and for loading one part.
CsrGraph partitioned_rows(const CsrGraph& graph, int64_t begin, int64_t end);

}  // namespace directgnn
