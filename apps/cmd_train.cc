#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "core/signals.h"
#include "directgnn/error.h"
#include "options.h"
#include "train/checkpoint.h"

namespace directgnn::cli {

void register_train(CLI::App& app) {
  struct Args {
    TrainingArgs train;
    std::string dataset;
    std::string resume;
    bool keep_self_loops = false;
    int threads = 0;
    DistArgs dist;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand(
      "train", "train a GNN (no --dataset: a built-in synthetic planted-partition graph)");
  c->add_option("--dataset", args->dataset, "dataset directory or .npz file");
  add_training_options(c, &args->train);
  c->add_option("--metrics", args->train.train.metrics_path,
                "write per-epoch metrics as JSON lines");
  c->add_option("--checkpoint", args->train.train.checkpoint_dir,
                "save the best-validation model and the training state into this directory");
  c->add_option("--checkpoint-every", args->train.train.checkpoint_every,
                "also save the training state every N steps (0: only when stopped by a signal)")
      ->default_val(0);
  c->add_option("--resume", args->resume,
                "continue the run whose training state is in DIR (saved on SIGINT/SIGTERM or "
                "by --checkpoint-every); dataset and options come from it");
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  add_dist_options(c, &args->dist);
  add_threads_option(c, &args->threads);
  c->get_option("--threads")
      ->description(
          "CPU threads (0 = the cores other processes leave free, re-checked every epoch; the "
          "count changes the order of floating-point sums, so give N for bitwise-reproducible "
          "runs)");
  c->callback([args, c] {
    TrainOptions options = args->train.options();
    options.adapt_threads = args->threads == 0;
    std::string dataset = args->dataset;
    bool keep_self_loops = args->keep_self_loops;
    if (!args->resume.empty()) {
      // The stored run decides everything that shapes the result; --epochs may extend it.
      for (const char* fixed :
           {"--dataset", "--model", "--layers", "--hidden", "--dropout", "--optimizer", "--lr",
            "--weight-decay", "--batch-size", "--fan-out", "--features", "--eval-every", "--seed",
            "--split", "--keep-self-loops", "--device", "--gather", "--sampler", "--graph"}) {
        DGNN_CHECK(c->count(fixed) == 0, fixed,
                   " cannot be given with --resume: the run continues with the options it was "
                   "saved with (see ",
                   training_state_path(args->resume), ")");
      }
      const nlohmann::json state = read_training_state(args->resume);
      const std::string where = training_state_path(args->resume);
      DGNN_CHECK(state.contains("options") && state.contains("run"), where,
                 ": not a training state (no options)");
      const int64_t epochs = options.epochs;
      apply_training_options_json(state["options"], options, where);
      if (c->count("--epochs") != 0) options.epochs = epochs;
      const nlohmann::json& run = state["run"];
      dataset = run.value("dataset", std::string());
      keep_self_loops = run.value("keep_self_loops", false);
      options.resume_dir = args->resume;
      if (options.checkpoint_dir.empty()) options.checkpoint_dir = args->resume;
    }
    // An absolute path, so a run resumes from any working directory.
    const std::string dataset_path =
        dataset.empty() ? dataset : std::filesystem::absolute(dataset).lexically_normal().string();
    options.run_info = {{"dataset", dataset_path}, {"keep_self_loops", keep_self_loops}};
    install_stop_handlers();
    const std::unique_ptr<ProcessGroup> group = join_ranks(args->dist, options.placement.device);
    options.group = group.get();
    const Dataset ds = dataset_or_default(dataset, import_options(keep_self_loops));
    train(ds, options, std::cout);
    if (group != nullptr) group->barrier();
    if (dataset.empty() && (group == nullptr || group->rank() == 0) && !options.quiet) {
      std::cout << "\nThat was the built-in synthetic graph. To train on a real dataset:\n"
                   "  directgnn train --dataset PATH   (a dataset directory or an .npz file,\n"
                   "  e.g. cora.npz from the gnn-benchmark repository; see docs/formats.md)\n";
    }
  });
}

}  // namespace directgnn::cli
