#include <ATen/ATen.h>

#include <iostream>

#include "directgnn/error.h"
#include "options.h"

namespace directgnn::cli {

void register_convert(CLI::App& app) {
  struct Args {
    std::string input, output, feat_dtype = "keep";
    bool keep_self_loops = false;
    int threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand("convert", "write a dataset as a dataset directory");
  c->add_option("IN", args->input, "dataset directory or .npz file")->required();
  c->add_option("OUT", args->output, "new dataset directory (must not exist)")->required();
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  c->add_option("--feat-dtype", args->feat_dtype,
                "store features as float32 or float16 (halves the table), or keep them")
      ->capture_default_str();
  add_threads_option(c, &args->threads);
  c->callback([args] {
    DGNN_CHECK(args->feat_dtype == "keep" || args->feat_dtype == "float32" ||
                   args->feat_dtype == "float16",
               "--feat-dtype '", args->feat_dtype, "': use keep, float32 or float16");
    const Dataset ds = load_dataset(args->input, {args->keep_self_loops});
    const at::ScalarType dtype = args->feat_dtype == "float16"   ? at::kHalf
                                 : args->feat_dtype == "float32" ? at::kFloat
                                                                 : ds.features.scalar_type();
    const FeatureStream stream = feature_stream_of(ds.features, dtype);
    save_dataset_dir(ds, args->output, stream);
    std::cout << "Wrote " << args->output << ": " << ds.num_nodes() << " nodes, "
              << ds.graph.num_edges() << " edges, " << ds.feat_dim() << " features, "
              << ds.splits.size() << " split(s)\n";
  });
}

}  // namespace directgnn::cli
