// The learnable embedding tables of a heterogeneous run (one per featureless node type, with
// --node-embeddings D): their batch rows read as leaves of the step, their sparse updates, and
// their place in checkpoints and training states. Tables live in host memory (pinned on a GPU run
// unless told otherwise) and are never part of the model's payload (feature/embedding_table.h).
// Internal to train/.
//
// With data-parallel ranks every rank applies the same update after every step: all ranks'
// batch rows and gradients are exchanged (two all-reduces of zero-padded buffers, exact), rows
// met by several ranks are summed in rank order, and the sum is divided by the ranks, as the
// dense gradients are averaged; so every rank's tables stay bitwise equal.
//
// In a training state the tables go to DIR/state-embeddings-N/ (.npy files, each written
// atomically); state.pt names that directory and is written after it, so a crash at any moment
// leaves a state.pt whose tables are complete. Older directories are removed once the new
// state.pt is in place (saved()).
#pragma once

#include <c10/core/Device.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dist/process_group.h"
#include "feature/embedding_table.h"
#include "graph/hetero_graph.h"
#include "train/run_state.h"

namespace directgnn {

class HeteroTables {
 public:
  // A table per featureless type of `ds` when options.dim > 0, seeded from `seed`; in_dims[t]
  // becomes the width of each type given a table.
  HeteroTables(const HeteroDataset& ds, const EmbeddingOptions& options, uint64_t seed,
               std::vector<int64_t>& in_dims);

  // With options.init_hops > 0, each table's rows are smoothed over that many hops of `graph`
  // (train/table_init.h): for node classification the dataset's graph, for link prediction
  // the training graph, which leaves the held-out edges out. Called once, before training (a
  // resumed run reads its tables from the training state instead); `progress` draws a progress
  // line on a terminal. `group`: a sharded run's ranks, which sum the projections of the
  // featured types they hold one part of (train/table_init.h); null otherwise.
  void smooth(const HeteroDataset& graph, uint64_t seed, bool progress,
              ProcessGroup* group = nullptr);
  // The seconds smooth() took; nullopt when it did not run.
  std::optional<double> smooth_seconds() const { return smooth_seconds_; }

  // Puts the tables where options.placement says for a run on `device` (embedding_table.h):
  // a GPU run's pinned (or auto) tables are registered in place. Refuses pinned on the CPU.
  void place(const c10::Device& device);
  // Where place() put the tables, in words for the header ("" before it ran).
  const std::string& placement() const { return placed_; }
  // Whether the run has any table.
  bool any() const {
    return std::any_of(tables_.begin(), tables_.end(), [](const auto& t) { return t != nullptr; });
  }

  // x[t] for each table: its rows of input_nodes[t], read now, on `device`, as leaves whose
  // gradient update() applies.
  void read_rows(const std::vector<at::Tensor>& input_nodes, const c10::Device& device,
                 std::vector<at::Tensor>& x) const;
  // One optimiser step on the rows the batch read (see above for ranks).
  void update(const std::vector<at::Tensor>& input_nodes, const std::vector<at::Tensor>& x,
              ProcessGroup* group);

  // Per type of `ds`: the whole-graph input, its table's weight where it has one, else its
  // features.
  std::vector<at::Tensor> inputs(const HeteroDataset& ds) const;
  // The tables' weights (the run's digest covers them).
  std::vector<at::Tensor> weights() const;

  // A checkpoint's tables: DIR/embeddings/NAME.npy, named in meta["embeddings"].
  void save_checkpoint(const std::string& dir, nlohmann::json& meta) const;
  // A training state's tables (see above), named in state.extras.
  void save_state(const std::string& dir, TrainingState& state) const;
  void saved(const std::string& dir, const TrainingState& state) const;
  void load_state(const std::string& dir, const TrainingState& state) const;

 private:
  std::vector<std::unique_ptr<EmbeddingTable>> tables_;  // per type; null without a table
  std::vector<std::string> names_;
  int64_t init_hops_ = 0;
  TablePlacement placement_ = TablePlacement::kAuto;
  std::string placed_;
  std::optional<double> smooth_seconds_;
};

}  // namespace directgnn
