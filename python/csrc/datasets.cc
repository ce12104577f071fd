// torch.ops.directgnn.load_dataset, synthetic_dataset and rmat_dataset: the project's own
// readers and generators, returning a dataset's arrays to Python (features memory-mapped
// where the reader maps them).
#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "directgnn/error.h"
#include "errors.h"
#include "graph/node_order.h"
#include "graph/planted_partition.h"
#include "graph/rmat.h"
#include "graph/splits.h"
#include "io/dataset.h"
#include "ops.h"

namespace directgnn::ops {
namespace {

// name, indptr, indices, x, y (None without labels), num_classes, directed, then per stored
// split train, val, test, then the path of the features' .npy file (a dataset directory's;
// empty otherwise), the edge weights (when the dataset has them), the link split (train, val,
// test positives, then val_neg and test_neg unless the layout is "none"; empty when none is
// stored) and its negatives' layout, then a renumbered dataset's node_ids and node_order, and
// a partitioned dataset's book as JSON text (empty when none), and the part whose feature rows
// alone were loaded (-1: the whole table).
using DatasetTuple =
    std::tuple<std::string, at::Tensor, at::Tensor, at::Tensor, std::optional<at::Tensor>, int64_t,
               bool, std::vector<at::Tensor>, std::vector<at::Tensor>, std::vector<at::Tensor>,
               std::string, std::optional<at::Tensor>, std::vector<at::Tensor>, std::string, bool,
               bool, std::optional<at::Tensor>, std::string, std::string, int64_t>;

// A link split as the list above, and back.
std::vector<at::Tensor> link_list(const LinkSplit& s) {
  if (!s.defined()) return {};
  std::vector<at::Tensor> out{s.train, s.val, s.test};
  if (s.negatives != LinkNegatives::kNone) {
    out.push_back(s.val_neg);
    out.push_back(s.test_neg);
  }
  return out;
}

LinkSplit link_of(const std::vector<at::Tensor>& list, const std::string& negatives) {
  LinkSplit s;
  if (list.empty()) return s;
  s.negatives = parse_link_negatives(negatives, "link_negatives");
  const size_t want = s.negatives == LinkNegatives::kNone ? 3 : 5;
  DGNN_CHECK_ARG(list.size() == want, "link", "needs ", want, " arrays (train, val, test positives",
                 want == 5 ? ", val_neg, test_neg" : "", ") for negatives '", negatives, "', got ",
                 list.size());
  s.train = list[0];
  s.val = list[1];
  s.test = list[2];
  if (want == 5) {
    s.val_neg = list[3];
    s.test_neg = list[4];
  }
  return s;
}

DatasetTuple as_tuple(const Dataset& ds) {
  std::vector<at::Tensor> train, val, test;
  for (const Split& s : ds.splits) {
    train.push_back(s.train);
    val.push_back(s.val);
    test.push_back(s.test);
  }
  std::optional<at::Tensor> weights, labels, node_ids;
  if (ds.graph.weights.defined()) weights = ds.graph.weights;
  if (ds.node_ids.defined()) node_ids = ds.node_ids;
  if (ds.has_labels()) labels = ds.labels;
  return {ds.name,
          ds.graph.indptr,
          ds.graph.indices,
          ds.features,
          labels,
          ds.num_classes,
          ds.directed,
          train,
          val,
          test,
          ds.features_path,
          weights,
          link_list(ds.link),
          ds.link.defined() ? link_negatives_name(ds.link.negatives) : std::string(),
          ds.link.eval_edges_in_graph,
          ds.link.published,
          node_ids,
          ds.node_order,
          partition_book_text(ds.partition),
          ds.feature_part};
}

DatasetTuple load(c10::string_view path, bool keep_self_loops, bool add_inverse_edges,
                  bool skip_link_split_files, int64_t feature_part, int64_t feature_parts) {
  ImportOptions options;
  options.feature_part = feature_part;
  options.feature_parts = feature_parts;
  options.keep_self_loops = keep_self_loops;
  options.add_inverse_edges = add_inverse_edges;
  options.skip_link_split_files = skip_link_split_files;
  return as_tuple(load_dataset(std::string(path), options));
}

DatasetTuple synthetic(int64_t nodes, double avg_degree, int64_t feat_dim, int64_t seed,
                       int64_t num_classes, double homophily, double train_fraction,
                       double val_fraction) {
  DGNN_CHECK_ARG(nodes >= 16 && avg_degree > 0 && feat_dim >= 1, "nodes",
                 "need nodes >= 16, avg_degree > 0 and feat_dim >= 1 (got ", nodes, ", ",
                 avg_degree, ", ", feat_dim, ")");
  DGNN_CHECK_ARG(num_classes >= 2 && homophily >= 0 && homophily <= 1, "num_classes",
                 "need num_classes >= 2 and homophily in [0, 1]");
  DGNN_CHECK_ARG(train_fraction > 0 && val_fraction > 0 && train_fraction + val_fraction < 1,
                 "train_fraction",
                 "train_fraction and val_fraction must be positive and leave room for a test "
                 "split");
  PlantedPartitionOptions o;
  o.num_nodes = nodes;
  o.avg_degree = avg_degree;
  o.feat_dim = feat_dim;
  o.seed = static_cast<uint64_t>(seed);
  o.num_classes = num_classes;
  o.homophily = homophily;
  o.train_fraction = train_fraction;
  o.val_fraction = val_fraction;
  return as_tuple(make_planted_partition(o));
}

DatasetTuple rmat(int64_t nodes, double edge_factor, int64_t feat_dim, int64_t seed,
                  int64_t num_classes, c10::string_view dtype, double train_fraction) {
  RmatDatasetOptions o;
  o.graph.num_nodes = nodes;
  o.graph.edge_factor = edge_factor;
  o.graph.seed = static_cast<uint64_t>(seed);
  o.feat_dim = feat_dim;
  o.num_classes = num_classes;
  o.train_fraction = train_fraction;
  DGNN_CHECK_ARG(dtype == "float32" || dtype == "float16", "dtype", "'", std::string(dtype),
                 "' is not float32 or float16");
  o.feat_dtype = dtype == "float16" ? at::kHalf : at::kFloat;
  DGNN_CHECK_ARG(feat_dim >= 1, "feat_dim", "must be >= 1");
  check_rmat_options(o.graph);
  return as_tuple(make_rmat_dataset(o));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> split(const at::Tensor& labels, int64_t num_classes,
                                                     int64_t seed,
                                                     const std::optional<at::Tensor>& node_ids) {
  DGNN_CHECK_TYPE(labels.dim() == 1 && labels.scalar_type() == at::kLong && labels.is_cpu(),
                  "directgnn.Dataset.random_split: labels must be a CPU int64 1-D tensor");
  DGNN_CHECK_ARG(num_classes >= 1, "num_classes", "must be positive");
  const at::Tensor ids =
      node_ids ? checked_node_ids(node_ids->cpu(), labels.numel(), "directgnn.Dataset.node_ids")
               : at::Tensor();
  const ChosenSplit chosen = random_split(labels, num_classes, static_cast<uint64_t>(seed), ids);
  return {chosen.split.train, chosen.split.val, chosen.split.test};
}

// A seeded random link split: the message-passing graph (indptr, indices), then the split as
// link_list gives it (with negatives: shared pairs, or K per source when neg_per_source > 0).
std::tuple<at::Tensor, at::Tensor, std::vector<at::Tensor>> link_split(
    const at::Tensor& indptr, const at::Tensor& indices, bool directed, double val, double test,
    int64_t neg_per_source, int64_t seed) {
  CsrGraph graph{indptr.cpu().contiguous(), indices.cpu().contiguous(), {}};
  validate_csr(graph, "directgnn.Dataset.random_link_split");
  LinkSplitOptions o;
  o.val = val;
  o.test = test;
  o.neg_per_source = neg_per_source;
  o.seed = static_cast<uint64_t>(seed);
  RandomLinkSplit out = random_link_split(graph, directed, o);
  return {out.graph.indptr, out.graph.indices, link_list(out.split)};
}

// What a published split holds and a hand-written one may not (count_link_split_faults): the
// counts of evaluation positives in the graph, repeated ones, and negatives that are edges.
std::tuple<int64_t, int64_t, int64_t> link_faults(const at::Tensor& indptr,
                                                  const at::Tensor& indices, bool directed,
                                                  const std::vector<at::Tensor>& link,
                                                  c10::string_view negatives) {
  CsrGraph graph{indptr.cpu().contiguous(), indices.cpu().contiguous(), {}};
  validate_csr(graph, "directgnn.Dataset.link");
  LinkSplit s = link_of(link, std::string(negatives));
  DGNN_CHECK_ARG(s.defined(), "link", "needs the train, val and test positives");
  s.published = true;
  s.eval_edges_in_graph = true;
  validate_link_split(s, graph, directed, "directgnn.Dataset.link");
  const LinkSplitFaults f = count_link_split_faults(s, graph, directed);
  return {f.in_graph, f.repeated, f.negative_edges};
}

// Writes a dataset directory (validated first, as a loader would validate it).
void save(c10::string_view out, c10::string_view name, const at::Tensor& indptr,
          const at::Tensor& indices, const at::Tensor& x, const std::optional<at::Tensor>& y,
          bool directed, const std::vector<at::Tensor>& train, const std::vector<at::Tensor>& val,
          const std::vector<at::Tensor>& test, const std::optional<at::Tensor>& edge_weight,
          const std::vector<at::Tensor>& link, c10::string_view link_negatives,
          bool eval_edges_in_graph, bool published, const std::optional<at::Tensor>& node_ids,
          c10::string_view node_order) {
  DGNN_CHECK_ARG(train.size() == val.size() && val.size() == test.size(), "splits",
                 "need as many train, val and test id arrays");
  Dataset ds;
  ds.name = std::string(name);
  ds.source = std::string(out);
  ds.graph = {indptr.cpu().contiguous(), indices.cpu().contiguous(), {}};
  ds.features = x.cpu();
  if (y) ds.labels = y->cpu();
  ds.directed = directed;
  for (size_t k = 0; k < train.size(); ++k) ds.splits.push_back({train[k], val[k], test[k]});
  if (edge_weight) ds.graph.weights = edge_weight->cpu();
  ds.link = link_of(link, std::string(link_negatives));
  ds.link.eval_edges_in_graph = eval_edges_in_graph;
  ds.link.published = published;
  if (node_ids) {
    ds.node_ids = node_ids->cpu();
    ds.node_order = std::string(node_order);
  }
  validate_dataset(ds, ds.source);
  save_dataset_dir(ds, ds.source);
}

}  // namespace

void define_datasets(torch::Library& m) {
  const std::string fields =
      " -> (str, Tensor, Tensor, Tensor, Tensor?, int, bool, Tensor[], Tensor[], Tensor[], str, "
      "Tensor?, Tensor[], str, bool, bool, Tensor?, str, str, int)";
  const auto schema = [&fields](const char* head) { return std::string(head) + fields; };
  m.def(schema("load_dataset(str path, bool keep_self_loops=False, "
               "bool add_inverse_edges=False, bool skip_link_split_files=False, "
               "int feature_part=-1, int feature_parts=0)")
            .c_str(),
        guarded<&load>);
  m.def(schema("synthetic_dataset(int nodes, float avg_degree, int feat_dim, int seed, "
               "int num_classes, float homophily, float train_fraction, float val_fraction)")
            .c_str(),
        guarded<&synthetic>);
  m.def(
      "random_split(Tensor labels, int num_classes, int seed, Tensor? node_ids=None) -> "
      "(Tensor, Tensor, Tensor)",
      guarded<&split>);
  m.def(
      "random_link_split(Tensor indptr, Tensor indices, bool directed, float val, float test, "
      "int neg_per_source, int seed) -> (Tensor, Tensor, Tensor[])",
      guarded<&link_split>);
  m.def(
      "link_split_faults(Tensor indptr, Tensor indices, bool directed, Tensor[] link, "
      "str link_negatives) -> (int, int, int)",
      guarded<&link_faults>);
  m.def(
      "save_dataset(str out, str name, Tensor indptr, Tensor indices, Tensor x, Tensor? y, "
      "bool directed, Tensor[] train, Tensor[] val, Tensor[] test, Tensor? edge_weight, "
      "Tensor[] link, str link_negatives, bool eval_edges_in_graph=False, bool published=False, "
      "Tensor? node_ids=None, str node_order=\"\") -> ()",
      guarded<&save>);
  m.def(schema("rmat_dataset(int nodes, float edge_factor, int feat_dim, int seed, "
               "int num_classes, str dtype, float train_fraction)")
            .c_str(),
        guarded<&rmat>);
}

}  // namespace directgnn::ops
