// The training state of heterogeneous training, for `directgnn train --resume DIR`: the model,
// Adam's state and the CPU random generator in DIR/state.pt (train/checkpoint.h), with the
// description every kind of run writes (TrainingState, train/run_state.h), and each embedding
// table with its optimiser state in DIR/state-embeddings-N/ (.npy files). state.pt names its
// directory and is written after it, so a crash at any moment leaves a state.pt whose tables are
// complete; older directories are removed once the new state.pt is in place. Resuming gives bitwise
// the run that was not stopped.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "feature/embedding_table.h"
#include "graph/hetero_graph.h"
#include "train/hetero_trainer.h"
#include "train/run_options.h"
#include "train/run_state.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace directgnn {

// `tables[t]` is type t's table or null; `names[t]` the type's name. The state's extras name
// the tables' directory.
void save_hetero_state(const std::string& dir, torch::nn::Module& model,
                       torch::optim::Optimizer& optimizer,
                       const std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                       const std::vector<std::string>& names, TrainingState state);
// Where a run's state goes: the directory it resumed from, else its checkpoint directory, else
// kDefaultStateDir.
std::string hetero_state_dir(const TrainOptions& options);
// The state of the run `options` resume (check_resumed_run's checks for `kind`, one rank, the
// dataset's `num_nodes` and `steps_per_epoch`), with its model, optimiser, random generator
// and tables restored. A finished run is extended by more epochs, not run again.
TrainingState load_hetero_state(const TrainOptions& options, RunKind kind, int64_t num_nodes,
                                int64_t steps_per_epoch, torch::nn::Module& model,
                                torch::optim::Optimizer& optimizer,
                                std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                                const std::vector<std::string>& names);

}  // namespace directgnn
