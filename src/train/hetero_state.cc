#include "train/hetero_state.h"

#include <c10/util/Exception.h>

#include <filesystem>

#include "directgnn/error.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

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

nlohmann::json HeteroProgress::to_json() const {
  return {{"epoch", epoch},       {"steps_done", steps_done},
          {"loss", loss},         {"correct", correct},
          {"seen", seen},         {"best_epoch", best_epoch},
          {"best_val", best_val}, {"best_test", best_test}};
}

HeteroProgress HeteroProgress::from_json(const nlohmann::json& j, const std::string& where) {
  HeteroProgress p;
  p.epoch = get<int64_t>(j, "epoch", where);
  p.steps_done = get<int64_t>(j, "steps_done", where);
  p.loss = get<double>(j, "loss", where);
  p.correct = get<double>(j, "correct", where);
  p.seen = get<double>(j, "seen", where);
  p.best_epoch = get<int64_t>(j, "best_epoch", where);
  p.best_val = get<double>(j, "best_val", where);
  p.best_test = get<double>(j, "best_test", where);
  return p;
}

nlohmann::json hetero_options_to_json(const HeteroTrainOptions& o) {
  const EmbeddingOptions& e = o.embeddings;
  const HeteroModelConfig& m = o.model;
  return {{"model",
           {{"kind", hetero_model_kind_name(m.kind)},
            {"hidden", m.hidden},
            {"layers", m.layers},
            {"dropout", m.dropout},
            {"num_bases", m.num_bases}}},
          {"fanouts", o.sampler.fanouts},
          {"batch_size", o.loader.batch_size},
          {"prefetch", o.loader.prefetch},
          {"workers", o.loader.workers},
          {"embeddings",
           {{"dim", e.dim},
            {"optimizer", sparse_optimizer_name(e.optimizer)},
            {"lr", e.lr},
            {"eps", e.eps},
            {"beta1", e.beta1},
            {"beta2", e.beta2}}},
          {"lr", o.lr},
          {"weight_decay", o.weight_decay},
          {"epochs", o.epochs},
          {"eval_every", o.eval_every},
          {"evaluate", o.evaluate},
          {"seed", o.seed},
          {"split", o.split},
          {"metrics_path", o.metrics_path},
          {"checkpoint_dir", o.checkpoint_dir},
          {"checkpoint_every", o.checkpoint_every},
          {"device", o.device.str()}};
}

HeteroTrainOptions hetero_options_from_json(const nlohmann::json& j, const std::string& where) {
  HeteroTrainOptions o;
  const nlohmann::json m = get<nlohmann::json>(j, "model", where);
  o.model.kind = parse_hetero_model_kind(get<std::string>(m, "kind", where));
  o.model.hidden = get<int64_t>(m, "hidden", where);
  o.model.layers = get<int64_t>(m, "layers", where);
  o.model.dropout = get<double>(m, "dropout", where);
  o.model.num_bases = get<int64_t>(m, "num_bases", where);
  o.sampler.fanouts = get<std::vector<std::vector<int64_t>>>(j, "fanouts", where);
  o.loader.batch_size = get<int64_t>(j, "batch_size", where);
  o.loader.prefetch = get<int>(j, "prefetch", where);
  o.loader.workers = get<int>(j, "workers", where);
  const nlohmann::json e = get<nlohmann::json>(j, "embeddings", where);
  o.embeddings.dim = get<int64_t>(e, "dim", where);
  o.embeddings.optimizer = parse_sparse_optimizer(get<std::string>(e, "optimizer", where));
  o.embeddings.lr = get<double>(e, "lr", where);
  o.embeddings.eps = get<double>(e, "eps", where);
  o.embeddings.beta1 = get<double>(e, "beta1", where);
  o.embeddings.beta2 = get<double>(e, "beta2", where);
  o.lr = get<double>(j, "lr", where);
  o.weight_decay = get<double>(j, "weight_decay", where);
  o.epochs = get<int64_t>(j, "epochs", where);
  o.eval_every = get<int64_t>(j, "eval_every", where);
  o.evaluate = get<bool>(j, "evaluate", where);
  o.seed = get<uint64_t>(j, "seed", where);
  o.split = get<int64_t>(j, "split", where);
  o.metrics_path = get<std::string>(j, "metrics_path", where);
  o.checkpoint_dir = get<std::string>(j, "checkpoint_dir", where);
  o.checkpoint_every = get<int64_t>(j, "checkpoint_every", where);
  try {
    o.device = c10::Device(get<std::string>(j, "device", where));
  } catch (const c10::Error&) {
    fail(where, ": the training state's device is not a device name");
  }
  return o;
}

void save_hetero_state(const std::string& dir, torch::nn::Module& model,
                       torch::optim::Optimizer& optimizer,
                       const std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                       const std::vector<std::string>& names, const nlohmann::json& description) {
  fs::create_directories(dir);
  const std::string tables_dir = kTablesPrefix + std::to_string(newest_serial(dir) + 1);
  nlohmann::json state = description;
  state["embeddings_dir"] = tables_dir;
  for (size_t t = 0; t < tables.size(); ++t) {
    if (!tables[t]) continue;
    fs::create_directories(dir + "/" + tables_dir);
    tables[t]->save(dir + "/" + tables_dir, names[t]);
  }
  save_training_state(dir, model, optimizer, state);
  remove_older_tables(dir, tables_dir);
}

std::string hetero_state_dir(const HeteroTrainOptions& o) {
  if (!o.resume_dir.empty()) return o.resume_dir;
  return o.checkpoint_dir.empty() ? kDefaultStateDir : o.checkpoint_dir;
}

nlohmann::json load_hetero_state(const std::string& dir, const std::string& task, int64_t epochs,
                                 torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                                 std::vector<std::unique_ptr<EmbeddingTable>>& tables,
                                 const std::vector<std::string>& names) {
  const nlohmann::json state = read_training_state(dir);
  const std::string where = training_state_path(dir);
  DGNN_CHECK(state.value("task", "") == task, where, ": holds a '", state.value("task", ""),
             "' training state, not '", task, "'");
  const int64_t next = get<int64_t>(get<nlohmann::json>(state, "progress", where), "epoch", where);
  DGNN_CHECK(next <= epochs, where, ": the run stands at epoch ", next, " (", next - 1,
             " finished); set epochs to ", next, " or more to train further");
  load_training_state(dir, model, optimizer);
  const std::string tables_dir = dir + "/" + get<std::string>(state, "embeddings_dir", where);
  for (size_t t = 0; t < tables.size(); ++t) {
    if (tables[t]) tables[t]->load(tables_dir, names[t]);
  }
  return state;
}

}  // namespace directgnn
