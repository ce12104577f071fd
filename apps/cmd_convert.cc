#include <ATen/ATen.h>

#include <iostream>

#include "directgnn/error.h"
#include "options.h"

namespace directgnn::cli {

namespace {

struct Args {
  std::string input, output, feat_dtype = "keep";
  ImportOptions import;
  int threads = 0;
  std::string link_split;
  int64_t eval_negatives = 0;
  uint64_t seed = 0;
};

// --link-split: the message-passing graph keeps the training edges (without weights, which
// link prediction does not use yet) and the dataset gains the split.
void split_links(Dataset& ds, const Args& args) {
  DGNN_CHECK(!ds.link.defined(), args.input,
             ": already stores a link split; --link-split would replace it");
  LinkSplitOptions o = parse_link_fractions(args.link_split);
  o.neg_per_source = args.eval_negatives;
  o.seed = args.seed;
  RandomLinkSplit split = random_link_split(ds.graph, ds.directed, o);
  ds.graph = std::move(split.graph);
  ds.link = std::move(split.split);
}

}  // namespace

void register_convert(CLI::App& app) {
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
  c->add_option("--link-split", args->link_split,
                "TRAIN,VAL,TEST fractions (such as 0.85,0.05,0.1): a seeded random link split, as "
                "PyG's RandomLinkSplit; validation and test edges leave the graph");
  c->add_option("--eval-negatives", args->eval_negatives,
                "with --link-split: 0 draws one shared negative pair per validation/test "
                "positive; K draws K negative destinations per positive's source")
      ->capture_default_str();
  c->add_option("--seed", args->seed, "with --link-split: the split's seed")->capture_default_str();
  add_threads_option(c, &args->threads);
  c->callback([args] {
    DGNN_CHECK(args->feat_dtype == "keep" || args->feat_dtype == "float32" ||
                   args->feat_dtype == "float16",
               "--feat-dtype '", args->feat_dtype, "': use keep, float32 or float16");
    Dataset ds = load_dataset(args->input, args->import);
    if (!args->link_split.empty()) split_links(ds, *args);
    const at::ScalarType dtype = args->feat_dtype == "float16"   ? at::kHalf
                                 : args->feat_dtype == "float32" ? at::kFloat
                                                                 : ds.features.scalar_type();
    const FeatureStream stream = feature_stream_of(ds.features, dtype);
    save_dataset_dir(ds, args->output, stream);
    std::cout << "Wrote " << args->output << ": " << ds.num_nodes() << " nodes, "
              << ds.graph.num_edges() << " edges, " << ds.feat_dim() << " features, "
              << ds.splits.size() << " split(s)";
    if (ds.link.defined()) {
      std::cout << ", link split of " << ds.link.train.size(0) << " / " << ds.link.val.size(0)
                << " / " << ds.link.test.size(0) << " edges";
    }
    std::cout << "\n";
  });
}

}  // namespace directgnn::cli
