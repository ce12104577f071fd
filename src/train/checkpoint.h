// Checkpoints. A checkpoint directory holds up to two files, each written to a temporary name,
// fsynced and renamed, and each carrying its length and CRC-32 in a 24-byte header that
// loading verifies, so a crash at any moment leaves the previous complete file or the new one
// and a damaged file is named, never half-read:
// - checkpoint.pt: the model at the best validation epoch, its optimiser state and a JSON
//   description (model configuration, epoch, seed, split, metrics); meta.json is a
//   human-readable copy of that description. `directgnn eval` reads it.
// - state.pt: the latest training state for `directgnn train --resume DIR`: parameters,
//   optimiser, the CPU random generator, and a JSON description of the run and its progress.
#pragma once

#include <ATen/core/Tensor.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace torch::optim {
class Optimizer;
}
namespace torch::nn {
class Module;
}

namespace directgnn {

class GnnModel;

// `model`: a GnnModel, or a module holding one (LinkModel: encoder and decoder).
void save_checkpoint(const std::string& dir, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, const nlohmann::json& meta);

// The description stored in DIR/checkpoint.pt; throws naming the file when it is missing,
// damaged or unreadable.
nlohmann::json read_checkpoint_meta(const std::string& dir);

// Loads parameters (and, when given, the optimiser state) from DIR/checkpoint.pt.
void load_checkpoint(const std::string& dir, torch::nn::Module& model,
                     torch::optim::Optimizer* optimizer);

// The training state (DIR/state.pt).
std::string training_state_path(const std::string& dir);
bool has_training_state(const std::string& dir);
void save_training_state(const std::string& dir, torch::nn::Module& model,
                         torch::optim::Optimizer& optimizer, const nlohmann::json& state);
nlohmann::json read_training_state(const std::string& dir);
// Restores parameters, optimiser state and the CPU random generator. Tensors are loaded onto
// the model's device.
void load_training_state(const std::string& dir, torch::nn::Module& model,
                         torch::optim::Optimizer& optimizer);

// The container both files use: "DGNNCKPT", format version, CRC-32 and length of the payload,
// then the payload. Writing is atomic; reading throws naming `path` when the header, length
// or checksum does not match.
constexpr size_t kCheckpointHeaderBytes = 24;
// CRC-32 (hex) of the parameters' bytes, in order, wherever they live: equal digests mean
// bitwise-equal models (TrainReport::param_digest).
std::string parameter_digest(const std::vector<at::Tensor>& params);

void write_checksummed_file(const std::string& path, std::string_view payload);
std::string read_checksummed_file(const std::string& path);

}  // namespace directgnn
