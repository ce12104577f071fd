#include "io/dataset_reorder.h"

#include <ATen/ATen.h>

#include <utility>

namespace directgnn {
namespace {

// Node ids (any shape, int64 or int32) mapped through `inverse`, keeping shape and dtype.
at::Tensor map_ids(const at::Tensor& ids, const at::Tensor& inverse) {
  if (!ids.defined()) return ids;
  return inverse.index_select(0, ids.reshape(-1).to(at::kLong))
      .reshape(ids.sizes())
      .to(ids.scalar_type());
}

}  // namespace

at::Tensor reorder_dataset(Dataset& ds, NodeOrder how, MetisOrder metis) {
  metis.directed = ds.directed;
  const at::Tensor order = node_order(ds.graph, how, metis);
  renumber_dataset(ds, order, node_order_name(how));
  return order;
}

void renumber_dataset(Dataset& ds, const at::Tensor& order, const std::string& name) {
  const at::Tensor inverse = inverse_order(order);
  ds.graph = renumber_graph(ds.graph, order, inverse);
  if (ds.has_labels()) ds.labels = ds.labels.index_select(0, order);
  for (Split& s : ds.splits) {
    s.train = map_ids(s.train, inverse);
    s.val = map_ids(s.val, inverse);
    s.test = map_ids(s.test, inverse);
  }
  if (ds.link.defined()) {
    LinkSplit& l = ds.link;
    for (at::Tensor* ids : {&l.train, &l.val, &l.test, &l.val_neg, &l.test_neg}) {
      *ids = map_ids(*ids, inverse);
    }
  }
  ds.node_ids = ds.node_ids.defined() ? ds.node_ids.index_select(0, order) : order;
  ds.node_order = name;
  // A renumbered partition no longer gives each part a contiguous range.
  ds.partition = PartitionBook{};
}

FeatureStream permuted_features(const at::Tensor& x, const at::Tensor& order,
                                at::ScalarType dtype) {
  FeatureStream stream = feature_stream_of(x, dtype);
  stream.fill = [x, order](int64_t begin, int64_t end, float* rows) {
    at::from_blob(rows, {end - begin, x.size(1)}, at::kFloat)
        .copy_(x.index_select(0, order.narrow(0, begin, end - begin)));
  };
  return stream;
}

at::Tensor stored_of_original(const Dataset& ds) {
  if (!ds.node_ids.defined()) return at::arange(ds.num_nodes(), at::kLong);
  return inverse_order(ds.node_ids);
}

}  // namespace directgnn
