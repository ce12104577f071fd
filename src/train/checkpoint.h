// Checkpoints: one file DIR/checkpoint.pt holding the model's parameters, the optimiser's
// state and a JSON description (model configuration, epoch, seed, split, metrics), plus a
// human-readable copy of that description in DIR/meta.json. Each file is written to a
// temporary name, flushed and renamed, so DIR always holds a complete checkpoint.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace torch::optim {
class Optimizer;
}

namespace directgnn {

class GnnModel;

void save_checkpoint(const std::string& dir, GnnModel& model, torch::optim::Optimizer& optimizer,
                     const nlohmann::json& meta);

// The description stored in DIR/checkpoint.pt; throws naming the file when it is missing
// or unreadable.
nlohmann::json read_checkpoint_meta(const std::string& dir);

// Loads parameters (and, when given, the optimiser state) from DIR/checkpoint.pt.
void load_checkpoint(const std::string& dir, GnnModel& model, torch::optim::Optimizer* optimizer);

}  // namespace directgnn
