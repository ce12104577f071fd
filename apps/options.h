// Command-line pieces shared by the subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "io/dataset.h"
#include "train/trainer.h"

namespace directgnn::cli {

// --threads, applied before the subcommand runs.
void add_threads_option(CLI::App* command, int* threads);

// Model and optimisation flags of `train` and `bench train`.
void add_training_options(CLI::App* command, TrainOptions* options);

// The dataset at `path`, or the built-in synthetic graph when `path` is empty.
Dataset dataset_or_default(const std::string& path, const ImportOptions& import);

// The subcommands.
void register_train(CLI::App& app);
void register_eval(CLI::App& app);
void register_convert(CLI::App& app);
void register_generate(CLI::App& app);
void register_launch(CLI::App& app);
void register_info(CLI::App& app);
void register_bench(CLI::App& app);
void register_bench_gather(CLI::App* bench);

}  // namespace directgnn::cli
