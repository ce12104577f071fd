#include <iostream>
#include <memory>

#include "options.h"

namespace directgnn::cli {

void register_train(CLI::App& app) {
  struct Args {
    TrainOptions train;
    std::string dataset;
    bool keep_self_loops = false;
    int threads = 0;
    int dist_timeout = 300;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand(
      "train", "train a GNN (no --dataset: a built-in synthetic planted-partition graph)");
  c->add_option("--dataset", args->dataset, "dataset directory or .npz file");
  add_training_options(c, &args->train);
  c->add_option("--metrics", args->train.metrics_path, "write per-epoch metrics as JSON lines");
  c->add_option("--checkpoint", args->train.checkpoint_dir,
                "save model and optimiser at the best validation epoch into this directory");
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  add_dist_options(c, &args->dist_timeout);
  add_threads_option(c, &args->threads);
  c->callback([args] {
    const std::unique_ptr<ProcessGroup> group = join_ranks(args->dist_timeout);
    TrainOptions options = args->train;
    options.group = group.get();
    const Dataset ds = dataset_or_default(args->dataset, import_options(args->keep_self_loops));
    train(ds, options, std::cout);
    if (group != nullptr) group->barrier();
    if (args->dataset.empty() && (group == nullptr || group->rank() == 0)) {
      std::cout << "\nThat was the built-in synthetic graph. To train on a real dataset:\n"
                   "  directgnn train --dataset PATH   (a dataset directory or an .npz file,\n"
                   "  e.g. cora.npz from the gnn-benchmark repository; see docs/formats.md)\n";
    }
  });
}

}  // namespace directgnn::cli
