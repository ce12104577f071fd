// Command-line pieces shared by the subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "dist/process_group.h"
#include "graph/hetero_graph.h"
#include "io/dataset.h"
#include "train/run_options.h"
#include "train/trainer.h"

namespace directgnn::cli {

// --threads, applied before the subcommand runs.
void add_threads_option(CLI::App* command, int* threads);

// The run options (train/run_options.h) as flags of `command`, one per option that any of
// `kinds` takes, with the default of the first kind that takes it.
void add_run_options(CLI::App* command, const std::vector<RunKind>& kinds);
// {name: value} of the run options given on the command line: true for a flag, else its text
// (for make_options, which parses it).
nlohmann::json given_options(const CLI::App& command);

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
// The same for an error of the run options (the flags of train and bench train).
std::string flag_message(const InvalidArgument& error);
// The flag of a library parameter or run option: --snake-case, but for the few named otherwise.
std::string flag_of(const std::string& parameter);
// What a user types to resume from a saved training state ("; resume with: directgnn train
// --resume DIR"), or "" when nothing was saved.
std::string resume_hint(const std::string& state_dir);

// The dataset and the run record of a training command (train/cmd_train.cc and its
// heterogeneous half, cmd_train_hetero.cc).
struct TrainTarget {
  std::string dataset;  // a path, mag:SCALE, or empty: the built-in synthetic graph
  bool keep_self_loops = false;
};
// A heterogeneous dataset directory, or mag:SCALE (the generator in memory).
bool is_hetero_dataset(const std::string& dataset);
// Trains a heterogeneous run (options.hetero, options.link for link prediction): on a
// heterogeneous dataset, or on a homogeneous one with learnable embeddings as its input.
void train_hetero_command(RunKind kind, const TrainTarget& target, TrainOptions options);
// What `eval` found for a checkpoint, whatever its kind: each kind prints its line of named
// metrics and returns this; finish_eval says whether training recorded the same.
struct EvalScore {
  // kind, epoch, split (where one is described), val and test metrics by name, the metric
  // compared, and what training recorded of it (null: it ran without evaluation)
  nlohmann::json record;
  std::string metric_words;  // the compared metric as the message names it
};
// Prints whether the test metric matches the recorded one; writes the record, with "matches",
// to `json_path` (atomically) unless empty.
void finish_eval(EvalScore score, const std::string& json_path);
// `eval` of a heterogeneous checkpoint (meta: its description) on `dataset` (empty: the one it
// was trained on).
EvalScore eval_hetero_command(const nlohmann::json& meta, const std::string& dir,
                              const std::string& dataset);
// The same for a heterogeneous link prediction checkpoint: its split rebuilt from the seed.
EvalScore eval_hetero_link_command(const nlohmann::json& meta, const std::string& dir,
                                   const std::string& dataset);
// `embed` of a heterogeneous checkpoint: the last layer's rows of every node of each type its
// model emits (a node model: the target type's logits; a link model: the relation's end
// types) as OUT/TYPE.npy, or with `type` only that type's, as the file OUT.
struct HeteroEmbedArgs {
  std::string checkpoint, dataset, type, out;
  at::ScalarType dtype = at::kFloat;
};
void embed_hetero_command(RunKind kind, const nlohmann::json& meta, const HeteroEmbedArgs& args);
// PATH made absolute, so a stored run resumes from any working directory.
std::string absolute_path(const std::string& path);

// The subcommands.
void register_train(CLI::App& app);
void register_eval(CLI::App& app);
void register_embed(CLI::App& app);
void register_convert(CLI::App& app);
void register_partition(CLI::App& app);
// `info`'s lines for a partitioned dataset: parts, method, edge cut, and each part's range.
void print_partition(const Dataset& ds);
// The same for a partitioned heterogeneous dataset (apps/cmd_info.cc).
void print_hetero_partition(const HeteroDataset& ds);
void register_generate(CLI::App& app);
void register_launch(CLI::App& app);
void register_info(CLI::App& app);
void register_bench(CLI::App& app);
void register_bench_gather(CLI::App* bench);

}  // namespace directgnn::cli
