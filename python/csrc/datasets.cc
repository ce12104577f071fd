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
#include "graph/planted_partition.h"
#include "graph/rmat.h"
#include "graph/splits.h"
#include "io/dataset.h"
#include "ops.h"

namespace directgnn::ops {
namespace {

// name, indptr, indices, x, y, num_classes, directed, then per stored split train, val, test,
// then the path of the features' .npy file (a dataset directory's; empty otherwise) and the
// edge weights (when the dataset has them).
using DatasetTuple = std::tuple<std::string, at::Tensor, at::Tensor, at::Tensor, at::Tensor,
                                int64_t, bool, std::vector<at::Tensor>, std::vector<at::Tensor>,
                                std::vector<at::Tensor>, std::string, std::optional<at::Tensor>>;

DatasetTuple as_tuple(const Dataset& ds) {
  std::vector<at::Tensor> train, val, test;
  for (const Split& s : ds.splits) {
    train.push_back(s.train);
    val.push_back(s.val);
    test.push_back(s.test);
  }
  std::optional<at::Tensor> weights;
  if (ds.graph.weights.defined()) weights = ds.graph.weights;
  return {ds.name,
          ds.graph.indptr,
          ds.graph.indices,
          ds.features,
          ds.labels,
          ds.num_classes,
          ds.directed,
          train,
          val,
          test,
          ds.features_path,
          weights};
}

DatasetTuple load(c10::string_view path, bool keep_self_loops, bool add_inverse_edges) {
  ImportOptions options;
  options.keep_self_loops = keep_self_loops;
  options.add_inverse_edges = add_inverse_edges;
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
                                                     int64_t seed) {
  DGNN_CHECK_TYPE(labels.dim() == 1 && labels.scalar_type() == at::kLong && labels.is_cpu(),
                  "directgnn.Dataset.random_split: labels must be a CPU int64 1-D tensor");
  DGNN_CHECK_ARG(num_classes >= 1, "num_classes", "must be positive");
  const ChosenSplit chosen = random_split(labels, num_classes, static_cast<uint64_t>(seed));
  return {chosen.split.train, chosen.split.val, chosen.split.test};
}

}  // namespace

void define_datasets(torch::Library& m) {
  const std::string fields =
      " -> (str, Tensor, Tensor, Tensor, Tensor, int, bool, Tensor[], Tensor[], Tensor[], str, "
      "Tensor?)";
  const auto schema = [&fields](const char* head) { return std::string(head) + fields; };
  m.def(schema("load_dataset(str path, bool keep_self_loops=False, "
               "bool add_inverse_edges=False)")
            .c_str(),
        guarded<&load>);
  m.def(schema("synthetic_dataset(int nodes, float avg_degree, int feat_dim, int seed, "
               "int num_classes, float homophily, float train_fraction, float val_fraction)")
            .c_str(),
        guarded<&synthetic>);
  m.def("random_split(Tensor labels, int num_classes, int seed) -> (Tensor, Tensor, Tensor)",
        guarded<&split>);
  m.def(schema("rmat_dataset(int nodes, float edge_factor, int feat_dim, int seed, "
               "int num_classes, str dtype, float train_fraction)")
            .c_str(),
        guarded<&rmat>);
}

}  // namespace directgnn::ops
