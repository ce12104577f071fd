// Command-line pieces shared by the subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "dist/process_group.h"
#include "io/dataset.h"
#include "train/link_trainer.h"
#include "train/trainer.h"

namespace directgnn::cli {

// --threads, applied before the subcommand runs.
void add_threads_option(CLI::App* command, int* threads);

// Model and optimisation flags of `train` and `bench train`: numbers straight into
// TrainOptions, choices as text, parsed by options() once the command line is complete.
struct TrainingArgs {
  TrainOptions train;
  std::string model = "sage", optimizer = "adam", fanout, device = "auto", features = "auto",
              gather = "auto", sampler = "auto", graph = "pinned", norm = "none", prefetch = "auto",
              disk_io = "auto", cache_rank = "presample";

  // `train` with the choices parsed; throws naming the flag on a bad value.
  TrainOptions options() const;
};
void add_training_options(CLI::App* command, TrainingArgs* args);

// --dist-timeout and --dist-backend, for commands that can run as ranks (under torchrun or
// `launch`).
struct DistArgs {
  int timeout_s = 300;
  std::string backend = "auto";
};
void add_dist_options(CLI::App* command, DistArgs* args);
// Joins the other ranks when the environment says there are any; nullptr for one process.
// `device` is the run's --device, which tells whether this rank can have a GPU of its own.
std::unique_ptr<ProcessGroup> join_ranks(const DistArgs& args, const DeviceChoice& device);

// The dataset at `path`, or the built-in synthetic graph when `path` is empty.
Dataset dataset_or_default(const std::string& path, const ImportOptions& import);

// Import options with only --keep-self-loops set.
inline ImportOptions import_options(bool keep_self_loops) {
  ImportOptions options;
  options.keep_self_loops = keep_self_loops;
  return options;
}

// The CLI's spelling of a library error about a parameter: "--batch-size: must be positive"
// where the command that ran has that flag, the library's words otherwise.
std::string flag_message(const InvalidArgument& error, const CLI::App& app);
// The same for an error of the training options (the flags of train and bench train).
std::string flag_message(const InvalidArgument& error);
// What a user types to resume from a saved training state ("; resume with: directgnn train
// --resume DIR"), or "" when nothing was saved.
std::string resume_hint(const std::string& state_dir);

// The subcommands.
// Heterogeneous training's own flags (--fan-out-rel, --bases) and learnable embeddings
// (--node-embeddings, --embedding-optimizer, --embedding-lr).
struct HeteroArgs {
  std::string fanout_rel;
  // --task link on a heterogeneous dataset: the relation predicted, its split's fractions and
  // the evaluation's negatives (0: a shared pair per positive; K: K per positive's source).
  std::string target_relation, link_split = "0.85,0.05,0.1";
  int64_t eval_negatives = 0;
  int64_t bases = 0;
  int64_t node_embeddings = 0;
  std::string embedding_optimizer = "adagrad";
  double embedding_lr = 0.01;
};
void add_hetero_options(CLI::App* command, HeteroArgs* args);
// A heterogeneous dataset directory, or mag:SCALE (the generator in memory).
bool is_hetero_dataset(const std::string& dataset);
// `train` on such a dataset, or on a homogeneous one with learnable embeddings as its input
// (apps/cmd_train_hetero.cc); refuses the flags it does not take.
// `link`: the link task's options with --task link (nullptr: node classification).
void train_hetero_command(const CLI::App& command, const std::string& dataset,
                          const TrainingArgs& args, const HeteroArgs& hetero,
                          const LinkTrainOptions* link);
// Whether DIR's training state is a heterogeneous run's, and continuing it (options from the
// state; `epochs` replaces the saved count when --epochs is given).
bool resumes_hetero(const std::string& dir);
// `eval` of a heterogeneous checkpoint (meta: its description) on `dataset` (empty: the one it
// was trained on).
void eval_hetero_command(const nlohmann::json& meta, const std::string& dir,
                         const std::string& dataset);
// The same for a heterogeneous link prediction checkpoint: its split rebuilt from the seed.
void eval_hetero_link_command(const nlohmann::json& meta, const std::string& dir,
                              const std::string& dataset);
void resume_hetero_command(const CLI::App& command, const std::string& dir, int64_t epochs,
                           const std::string& metrics);
// PATH made absolute, so a stored run resumes from any working directory.
std::string absolute_path(const std::string& path);

void register_train(CLI::App& app);
void register_eval(CLI::App& app);
void register_embed(CLI::App& app);
void register_convert(CLI::App& app);
void register_generate(CLI::App& app);
void register_launch(CLI::App& app);
void register_info(CLI::App& app);
void register_bench(CLI::App& app);
void register_bench_gather(CLI::App* bench);

}  // namespace directgnn::cli
