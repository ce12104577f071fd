#include <ATen/ATen.h>

#include <iostream>

#include "directgnn/error.h"
#include "options.h"

namespace directgnn::cli {

void register_convert(CLI::App& app) {
  struct Args {
    std::string input, output, feat_dtype = "keep";
    ImportOptions import;
    int threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand("convert", "write a dataset as a dataset directory");
  c->add_option("IN", args->input, "dataset directory, .npz file, OGB raw directory or edge list")
      ->required();
  c->add_option("OUT", args->output, "new dataset directory (must not exist)")->required();
  c->add_flag("--keep-self-loops", args->import.keep_self_loops, "keep self-loops when importing");
  c->add_flag("--add-inverse-edges", args->import.add_inverse_edges,
              "OGB and edge lists: add the reverse of every edge (undirected graphs)");
  c->add_option("--labels", args->import.labels_path,
                "edge lists: node labels, a .npy of one integer per node or a CSV table with a "
                "header (required)");
  c->add_option("--label-column", args->import.label_column,
                "CSV labels: the column of class names (numbered in sorted order)");
  c->add_option("--id-column", args->import.id_column,
                "CSV labels: the column of node ids (default: 'id', else the first column)");
  c->add_option("--features", args->import.features_path,
                "edge lists: node features .npy (default: log-degree and a constant)");
  c->add_option("--feat-dtype", args->feat_dtype,
                "store features as float32 or float16 (halves the table), or keep them")
      ->capture_default_str();
  add_threads_option(c, &args->threads);
  c->callback([args] {
    DGNN_CHECK(args->feat_dtype == "keep" || args->feat_dtype == "float32" ||
                   args->feat_dtype == "float16",
               "--feat-dtype '", args->feat_dtype, "': use keep, float32 or float16");
    const Dataset ds = load_dataset(args->input, args->import);
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
