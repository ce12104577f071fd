// Heterogeneous graphs as kinds of run on the one loop (train/run_loop.h). Node classification:
// each epoch shuffles the target type's training nodes (each rank takes its equal shard),
// samples typed blocks (HeteroLoader), gathers every featured type's input rows and steps on
// the seeds' cross-entropy; evaluation runs layer by layer over the whole graph
// (HeteroModel::infer). Link prediction is train/hetero_link_trainer.h. Featureless types may
// read learnable tables (train/hetero_tables.h), kept equal on every rank.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "graph/hetero_graph.h"
#include "loader/hetero_stores.h"
#include "loader/options.h"
#include "nn/hetero_model.h"
#include "sampling/hetero_sampler.h"
#include "train/checkpoint.h"
#include "train/hetero_tables.h"
#include "train/run_loop.h"
#include "train/run_options.h"
#include "train/training_run.h"

namespace directgnn {

// Trains with options.hetero's model and embeddings and options.loader's fan-outs (those of
// options.loader.relation_fanouts per relation) and placements (every featured type's table in
// its own, loader/hetero_stores.h). On a GPU the loader samples on the CPU and delivers each
// batch's blocks and rows on the device, gathered by each type's method; embedding rows are
// read from pinned tables by GPU threads (or copied from host ones) and their gradients come
// back to the host, where the tables are updated in place; evaluation runs on a CPU copy of the
// model.
// With ranks every rank evaluates the whole graph itself (the same result on each).
// The header's lines on the model's inputs: the learnable tables, and a warning, naming the
// type and the fix, for each node type whose nodes all look alike to the model (no input of
// its own: no features, no learnable table; and no relation ending at it). The tables' line
// says where they live and how long their smoothed start took (not in a resumed run).
void print_hetero_inputs(const HeteroDataset& ds, const HeteroModelConfig& config,
                         const EmbeddingOptions& e, const HeteroTables& tables, std::ostream& out);

RunReport train_hetero(const HeteroDataset& dataset, const TrainOptions& options,
                       std::ostream& out);

// The model's configuration for `dataset` from the run's options.
HeteroModelConfig hetero_model_config(const HeteroDataset& dataset, const TrainOptions& options);
// The sampler's fan-outs for `dataset` from the run's options.
HeteroSamplerOptions hetero_fanouts(const HeteroDataset& dataset, const TrainOptions& options);
// The blocks' tensors and the inputs moved to `device` (nothing on the CPU, nor for tensors
// the loader delivered there).
void hetero_batch_to_device(std::vector<HeteroBlock>& blocks, std::vector<at::Tensor>& x,
                            const c10::Device& device);
// "gat, 2 layers, hidden 64 x 8 heads, batch norm, residual" for a run's header.
std::string hetero_model_text(const HeteroModelConfig& config);
// "paper 736389 (128-d), author 1134649, ..."
std::string hetero_type_summary(const HeteroDataset& dataset);
// The header's line on a run's threads, ranks, prefetch and device.
std::string hetero_run_line(const LoaderSettings& settings, ProcessGroup* group);
// The header's line on where each type's table lives and how it is gathered ("" when no type
// has features): "Features: paper disk (...), cpu-copy; field host".
std::string hetero_features_line(const HeteroStores& stores);
// The featured types' tables, by type name, for the run loop's disk counters.
std::vector<NamedStore> named_stores(const HeteroStores& stores);

// What both heterogeneous kinds hold: the tables, the model (and a GPU run's CPU copy for
// evaluation and checkpoints), the optimiser, the ranks.
template <typename Model>
class HeteroTask : public RunTask {
 public:
  torch::nn::Module& model() override { return *model_; }
  const std::vector<at::Tensor>& parameters() const override { return params_; }
  torch::optim::Optimizer& optimizer() override { return *optimizer_; }
  std::vector<at::Tensor> digest_extras() const override { return tables_.weights(); }
  const FeatureStore* store() const override { return nullptr; }
  void save_extras(const std::string& dir, TrainingState& state) override {
    tables_.save_state(dir, state);
  }
  void extras_saved(const std::string& dir, const TrainingState& state) override {
    tables_.saved(dir, state);
  }
  void load_extras(const std::string& dir, const TrainingState& state) override {
    tables_.load_state(dir, state);
  }

 protected:
  HeteroTask(const HeteroDataset& ds, const TrainOptions& o, HeteroModelConfig& config)
      : o_(o),
        tables_(ds, o.hetero.embeddings, o.seed, config.in_dims),
        rank_(o.group != nullptr ? o.group->rank() : 0),
        ranks_(o.group != nullptr ? o.group->size() : 1) {}

  template <typename Make>
  void init_model(const Make& make, const c10::Device& device) {
    RunModel<Model> m = make_run_model<Model>(make, device, o_.seed, o_.group);
    model_ = std::move(m.model);
    cpu_model_ = std::move(m.cpu_copy);
    params_ = std::move(m.params);
    optimizer_ = make_optimizer(params_, o_);
  }
  // The tables' smoothed start over `graph` (HeteroTables::smooth), in a new run only: a
  // resumed one reads its tables from the training state; then their placement for a run on
  // `device`.
  void prepare_tables(const HeteroDataset& graph, const c10::Device& device) {
    if (o_.resume_dir.empty()) tables_.smooth(graph, o_.seed, rank_ == 0 && !o_.quiet, o_.group);
    tables_.place(device);
  }
  // The model evaluation and checkpoints read: a GPU model's CPU copy, brought up to date.
  Model& host_model() {
    if (cpu_model_ == nullptr) return *model_;
    copy_parameters(*model_, *cpu_model_);
    return *cpu_model_;
  }
  // Writes the best model's checkpoint: `meta` with what every heterogeneous checkpoint
  // records (the type and relation names of `ds`, which the model's configuration gives by
  // index); the tables first, as checkpoint.pt, written last, names the tables its model
  // was trained with.
  void write_checkpoint(const std::string& dir, int64_t epoch, const nlohmann::json& config,
                        const HeteroDataset& ds, nlohmann::json meta) {
    nlohmann::json types = nlohmann::json::array(), relations = nlohmann::json::array();
    for (const NodeType& t : ds.node_types) types.push_back(t.name);
    for (const Relation& r : ds.relations) relations.push_back({r.src, r.rel, r.dst});
    meta.update(nlohmann::json{{"task", run_kind_name(this->kind())},
                               {"graph", {{"node_types", types}, {"relations", relations}}},
                               {"options", options_json(o_, this->kind())},
                               {"model", config},
                               {"epoch", epoch},
                               {"seed", o_.seed},
                               {"run", o_.run_info}});
    tables_.save_checkpoint(dir, meta);
    directgnn::save_checkpoint(dir, host_model(), *optimizer_, meta);
  }
  const TrainOptions& o_;
  HeteroTables tables_;
  int rank_, ranks_;
  std::unique_ptr<Model> model_, cpu_model_;
  std::vector<at::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

}  // namespace directgnn
