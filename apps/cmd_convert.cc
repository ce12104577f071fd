#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "directgnn/error.h"
#include "graph/partition.h"
#include "io/dataset_reorder.h"
#include "io/hetero_dir.h"
#include "options.h"

namespace directgnn::cli {

namespace {

struct Args {
  std::string input, output, feat_dtype = "keep", reorder = "none";
  ImportOptions import;
  int threads = 0;
  std::string link_split;
  int64_t eval_negatives = 0;
  int64_t parts = 0;
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
  // The split takes edges out, so a partition book no longer holds: the copy keeps the
  // renumbering and drops the book (partition it again).
  ds.partition = PartitionBook{};
}

// A heterogeneous source: a heterogeneous dataset directory, OGB's heterogeneous raw layout
// (ogbn-mag) or a directory of typed CSV edge lists (nodes.csv beside S___R___D.csv files).
bool is_hetero_input(const std::string& in) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(in)) return false;
  return is_hetero_dir(in) || looks_like_ogb_hetero(in) ||
         (!fs::exists(in + "/meta.json") && fs::exists(in + "/nodes.csv"));
}

NodeOrder parse_reorder(const Args& args) {
  const std::string& name = args.reorder;
  DGNN_CHECK(args.parts == 0 || name == "metis", "--parts ", args.parts,
             ": the parts are for --reorder metis");
  DGNN_CHECK(args.parts >= 0, "--parts ", args.parts,
             ": give a positive count, or 0 for one "
             "part per 16,384 nodes");
  if (name == "degree") return NodeOrder::kDegree;
  if (name == "rcm") return NodeOrder::kRcm;
  if (name == "metis") {
    DGNN_CHECK(metis_available(),
               "--reorder metis: this build has no METIS (install Debian's libmetis-dev, as "
               "scripts/install-deps.sh does, and configure again); degree and rcm need none");
    return NodeOrder::kMetis;
  }
  DGNN_CHECK(name == "none", "--reorder '", name, "': use none, degree, rcm or metis");
  return NodeOrder::kNone;
}

// What the summary line says of the order.
std::string order_note(NodeOrder order, const Args& args, int64_t num_nodes) {
  if (order == NodeOrder::kNone) return "";
  std::string note = ", nodes renumbered by " + args.reorder;
  if (order == NodeOrder::kMetis) {
    note += " (" + std::to_string(metis_order_parts(num_nodes, args.parts)) + " parts)";
  }
  return note;
}

void convert_hetero(const Args& args) {
  const ImportOptions& i = args.import;
  DGNN_CHECK(args.reorder == "none" && args.parts == 0, args.input,
             ": --reorder renumbers homogeneous graphs; a heterogeneous dataset keeps each "
             "type's ids");
  DGNN_CHECK(args.link_split.empty() && i.labels_path.empty() && i.label_column.empty() &&
                 i.id_column.empty() && i.features_path.empty() && !i.keep_self_loops,
             args.input,
             ": a heterogeneous source takes --add-inverse-edges and --feat-dtype; "
             "--link-split, --labels, --label-column, --id-column, --features and "
             "--keep-self-loops are for homogeneous graphs (self-loops are always kept)");
  HeteroImportOptions options;
  options.add_inverse_edges = i.add_inverse_edges;
  HeteroDataset ds;
  if (is_hetero_dir(args.input)) {
    ds = load_hetero_dir(args.input);
    if (options.add_inverse_edges) add_reverse_relations(ds);
  } else if (looks_like_ogb_hetero(args.input)) {
    ds = import_ogb_hetero(args.input, options);
  } else {
    ds = import_hetero_csv(args.input, options);
  }
  for (NodeType& t : ds.node_types) {
    if (!t.has_features() || args.feat_dtype == "keep") continue;
    t.features = t.features.to(args.feat_dtype == "float16" ? at::kHalf : at::kFloat);
  }
  save_hetero_dir(ds, args.output);
  std::cout << "Wrote " << args.output << ": heterogeneous, " << ds.node_types.size()
            << " node types (" << ds.num_nodes() << " nodes), " << ds.relations.size()
            << " relations (" << ds.num_edges() << " edges)";
  if (ds.target_type >= 0) {
    std::cout << ", target " << ds.target().name << " (" << ds.num_classes << " classes, "
              << ds.splits.size() << " split(s))";
  }
  std::cout << "\n";
}

// Edges (u -> v) of a directed graph whose reverse (v -> u) is also in it.
int64_t reciprocal_edges(const CsrGraph& g) {
  const at::Tensor dst = at::repeat_interleave(g.degrees());
  const at::Tensor src = g.indices.to(at::kLong);
  const at::Tensor keys = src * g.num_nodes() + dst, reversed = dst * g.num_nodes() + src;
  return at::isin(keys, reversed).sum().item<int64_t>();
}

}  // namespace

void register_convert(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand("convert", "write a dataset as a dataset directory");
  c->add_option("IN", args->input,
                "dataset directory, .npz file, OGB raw directory (ogbn-mag's heterogeneous one "
                "too), edge list, or directory of typed CSV edge lists (nodes.csv and "
                "SRC___REL___DST.csv files)")
      ->required();
  c->add_option("OUT", args->output, "new dataset directory (must not exist)")->required();
  c->add_flag("--keep-self-loops", args->import.keep_self_loops, "keep self-loops when importing");
  c->add_flag("--add-inverse-edges", args->import.add_inverse_edges,
              "OGB and edge lists: add the reverse of every edge (undirected graphs); "
              "heterogeneous sources: add rev_REL relations and symmetrise relations within "
              "one type");
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
  c->add_option("--seed", args->seed, "the seed of --link-split's draw and of --reorder metis")
      ->capture_default_str();
  c->add_option("--reorder", args->reorder,
                "renumber the nodes so that rows sampled together share disk blocks: degree "
                "(largest in-degree first), rcm (reverse Cuthill-McKee: neighbours get nearby "
                "ids) or metis (METIS's parts one after another, each by in-degree); "
                "node_ids.npy keeps each node's original id, which embeddings and the default "
                "split follow")
      ->capture_default_str();
  c->add_option("--parts", args->parts,
                "with --reorder metis: the parts METIS cuts (0: one per 16,384 nodes, 2 to 256)")
      ->capture_default_str();
  add_threads_option(c, &args->threads);
  c->callback([args] {
    DGNN_CHECK(args->feat_dtype == "keep" || args->feat_dtype == "float32" ||
                   args->feat_dtype == "float16",
               "--feat-dtype '", args->feat_dtype, "': use keep, float32 or float16");
    if (is_hetero_input(args->input)) return convert_hetero(*args);
    Dataset ds = load_dataset(args->input, args->import);
    const NodeOrder order = parse_reorder(*args);
    if (!args->link_split.empty()) split_links(ds, *args);
    const at::ScalarType dtype = args->feat_dtype == "float16"   ? at::kHalf
                                 : args->feat_dtype == "float32" ? at::kFloat
                                                                 : ds.features.scalar_type();
    const FeatureStream stream =
        order == NodeOrder::kNone
            ? feature_stream_of(ds.features, dtype)
            : permuted_features(ds.features,
                                reorder_dataset(ds, order, {args->parts, true, args->seed}), dtype);
    save_dataset_dir(ds, args->output, stream);
    std::cout << "Wrote " << args->output << ": " << ds.num_nodes() << " nodes, "
              << ds.graph.num_edges() << " edges, " << ds.feat_dim() << " features, "
              << ds.splits.size() << " split(s)";
    if (ds.link.defined()) {
      std::cout << ", link split of " << ds.link.train.size(0) << " / " << ds.link.val.size(0)
                << " / " << ds.link.test.size(0) << " edges";
    }
    std::cout << order_note(order, *args, ds.num_nodes());
    std::cout << "\n";
    // Most edges one way only: likely an undirected graph listed once per edge.
    if (ds.directed && ds.graph.num_edges() > 0) {
      const int64_t both = reciprocal_edges(ds.graph), m = ds.graph.num_edges();
      if (both * 10 < m) {
        std::printf(
            "Note: %lld of %lld edges (%.1f%%) appear in both directions, so the graph is kept "
            "directed and each node receives messages only from the nodes its edges come "
            "from. If the graph is undirected, convert again with --add-inverse-edges.\n",
            static_cast<long long>(both), static_cast<long long>(m), 100.0 * both / m);
      }
    }
  });
}

}  // namespace directgnn::cli
