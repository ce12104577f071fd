#include <iostream>

#include "options.h"

namespace directgnn::cli {

void register_convert(CLI::App& app) {
  struct Args {
    std::string input, output;
    bool keep_self_loops = false;
    int threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand("convert", "write a dataset as a dataset directory");
  c->add_option("IN", args->input, "dataset directory or .npz file")->required();
  c->add_option("OUT", args->output, "new dataset directory (must not exist)")->required();
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  add_threads_option(c, &args->threads);
  c->callback([args] {
    const Dataset ds = load_dataset(args->input, {args->keep_self_loops});
    save_dataset_dir(ds, args->output);
    std::cout << "Wrote " << args->output << ": " << ds.num_nodes() << " nodes, "
              << ds.graph.num_edges() << " edges, " << ds.feat_dim() << " features, "
              << ds.splits.size() << " split(s)\n";
  });
}

}  // namespace directgnn::cli
