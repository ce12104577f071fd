// Heterogeneous graphs at the Python boundary (python/directgnn/hetero.py):
// torch.classes.directgnn.HeteroGraph holds a HeteroDataset (graph/hetero_graph.h) built from
// the arrays Python's directgnn.HeteroDataset keeps, validated once; HeteroSampler (DGL's typed
// blocks), HeteroPygSampler (PyG's per-edge-type fields) and HeteroLoader read it in place.
// Registered by TORCH_LIBRARY_FRAGMENT(directgnn) in hetero.cc.
#pragma once

#include <ATen/Tensor.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "graph/hetero_graph.h"

namespace directgnn::ops {

// A heterogeneous dataset as Python holds it: name; node type names, counts and features
// (None for a featureless type); relation keys "src,rel,dst" and their CSRs by destination
// (indptr, indices); the target type ("" without labels), its labels (None without),
// num_classes and class names; the splits' train, val and test ids; per node type the .npy its
// features map ("" where none); per node type a partitioned dataset's original ids (None where
// the ids are as given); a partitioned dataset's books as JSON ({"method", "parts",
// "offsets": {type: [P + 1 ids]}, "feature_part": the part whose rows the tables hold, or -1}),
// "" for another.
using HeteroFields =
    std::tuple<std::string, std::vector<std::string>, std::vector<int64_t>,
               c10::List<std::optional<at::Tensor>>, std::vector<std::string>,
               std::vector<at::Tensor>, std::vector<at::Tensor>, std::string,
               std::optional<at::Tensor>, int64_t, std::vector<std::string>,
               std::vector<at::Tensor>, std::vector<at::Tensor>, std::vector<at::Tensor>,
               std::vector<std::string>, c10::List<std::optional<at::Tensor>>, std::string>;

HeteroFields as_fields(const HeteroDataset& dataset);

class HeteroGraphHolder : public torch::CustomClassHolder {
 public:
  // The fields of HeteroFields, in order (`feature_files` empty: none; `partition` "": none);
  // `features_checked`: the feature tables are known finite (they come from a reader that
  // checked them), so validation skips that scan.
  HeteroGraphHolder(std::string name, std::vector<std::string> types, std::vector<int64_t> counts,
                    c10::List<std::optional<at::Tensor>> features,
                    std::vector<std::string> relations, std::vector<at::Tensor> indptrs,
                    std::vector<at::Tensor> indices, std::string target,
                    std::optional<at::Tensor> labels, int64_t num_classes,
                    std::vector<std::string> class_names, std::vector<at::Tensor> train,
                    std::vector<at::Tensor> val, std::vector<at::Tensor> test,
                    std::vector<std::string> feature_files, bool features_checked,
                    const std::string& partition);
  // Writes a heterogeneous dataset directory (io/hetero_dir.h).
  void save(const std::string& out) const;
  const HeteroDataset& dataset() const { return dataset_; }

 private:
  HeteroDataset dataset_;
};

// Per-relation fan-outs from Python (fanouts[r][h], relations in the dataset's order), checked
// against the dataset: one list per relation, every list as long, each fan-out positive, -1
// (every neighbour) or 0 (none at that hop, as PyG allows).
std::vector<std::vector<int64_t>> checked_hetero_fanouts(
    const HeteroDataset& dataset, const std::vector<std::vector<int64_t>>& fanouts,
    const std::string& where);

void define_hetero_pyg(torch::Library& m);

}  // namespace directgnn::ops
