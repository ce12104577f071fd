#include "train/hetero_state.h"

#include <c10/util/Exception.h>

#include <filesystem>

#include "directgnn/error.h"
#include "train/checkpoint.h"
#include "train/trainer.h"
#include "train/training_run.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTablesPrefix = "state-embeddings-";

template <typename T>
T get(const nlohmann::json& json, const char* key, const std::string& where) {
  DGNN_CHECK(json.contains(key), where, ": the training state has no '", key,
             "' (written by another version?)");
  try {
    return json.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": the training state's '", key, "' is invalid: ", e.what());
  }
}

// The serial of the newest tables directory in `dir` (0 when none).
int64_t newest_serial(const std::string& dir) {
  int64_t newest = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kTablesPrefix, 0) != 0) continue;
    try {
      newest =
          std::max<int64_t>(newest, std::stoll(name.substr(std::string(kTablesPrefix).size())));
    } catch (const std::exception&) {
    }
  }
  return newest;
}

void remove_older_tables(const std::string& dir, const std::string& keep) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kTablesPrefix, 0) == 0 && name != keep) fs::remove_all(entry.path(), ec);
  }
}

}  // namespace

void save_hetero_state(const std::string& dir, torch::nn::Module& model,
                       torch::optim::Optimizer& optimizer,
                       const std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                       const std::vector<std::string>& names, TrainingState state) {
  fs::create_directories(dir);
  const std::string tables_dir = kTablesPrefix + std::to_string(newest_serial(dir) + 1);
  state.extras["embeddings_dir"] = tables_dir;
  for (size_t t = 0; t < tables.size(); ++t) {
    if (!tables[t]) continue;
    fs::create_directories(dir + "/" + tables_dir);
    tables[t]->save(dir + "/" + tables_dir, names[t]);
  }
  save_training_state(dir, model, optimizer, state.to_json());
  remove_older_tables(dir, tables_dir);
}

std::string hetero_state_dir(const TrainOptions& o) {
  if (!o.resume_dir.empty()) return o.resume_dir;
  return o.checkpoint_dir.empty() ? kDefaultStateDir : o.checkpoint_dir;
}

TrainingState load_hetero_state(const TrainOptions& o, RunKind kind, int64_t num_nodes,
                                int64_t steps_per_epoch, torch::nn::Module& model,
                                torch::optim::Optimizer& optimizer,
                                std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                                const std::vector<std::string>& names) {
  const std::string where = training_state_path(o.resume_dir);
  const TrainingState state = TrainingState::from_json(read_training_state(o.resume_dir), where);
  check_resumed_run(state, o, kind, 1, num_nodes, steps_per_epoch, where);
  load_training_state(o.resume_dir, model, optimizer);
  const std::string tables_dir =
      o.resume_dir + "/" + get<std::string>(state.extras, "embeddings_dir", where);
  for (size_t t = 0; t < tables.size(); ++t) {
    if (tables[t]) tables[t]->load(tables_dir, names[t]);
  }
  return state;
}

}  // namespace directgnn
