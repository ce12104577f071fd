// The training state of heterogeneous training, for `directgnn train --resume DIR`: the model,
// Adam's state and the CPU random generator in DIR/state.pt (train/checkpoint.h), with a JSON
// description of the options and the progress, and each embedding table with its optimiser
// state in DIR/state-embeddings-N/ (.npy files). state.pt names its directory and is written
// after it, so a crash at any moment leaves a state.pt whose tables are complete; older
// directories are removed once the new state.pt is in place. Resuming gives bitwise the run
// that was not stopped.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "feature/embedding_table.h"
#include "graph/hetero_graph.h"
#include "train/hetero_trainer.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace directgnn {

// Where a run stands: the epoch it continues, the steps of that epoch already taken and their
// sums, and the best validation so far.
struct HeteroProgress {
  int64_t epoch = 1, steps_done = 0;
  double loss = 0, correct = 0, seen = 0;
  int64_t best_epoch = -1;
  double best_val = 0, best_test = 0;

  nlohmann::json to_json() const;
  static HeteroProgress from_json(const nlohmann::json& json, const std::string& where);
};

// The options that shape a run, and back (`where` names the state file in errors).
nlohmann::json hetero_options_to_json(const HeteroTrainOptions& options);
HeteroTrainOptions hetero_options_from_json(const nlohmann::json& json, const std::string& where);

// `tables[t]` is type t's table or null; `names[t]` the type's name. `run` holds what the front
// end needs to load the dataset again.
void save_hetero_state(const std::string& dir, torch::nn::Module& model,
                       torch::optim::Optimizer& optimizer,
                       const std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                       const std::vector<std::string>& names, const nlohmann::json& description);
// Where a run's state goes: the directory it resumed from, else its checkpoint directory, else
// kDefaultStateDir.
std::string hetero_state_dir(const HeteroTrainOptions& options);
// Restores the model, optimiser, random generator and tables of a `task` ("hetero" or
// "hetero_link") run with epochs left before `epochs` (a finished run is extended by more
// epochs, not run again; anything else is refused); returns the description.
nlohmann::json load_hetero_state(const std::string& dir, const std::string& task, int64_t epochs,
                                 torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                                 std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                                 const std::vector<std::string>& names);

}  // namespace directgnn
