// A stored link split (a dataset directory's link/ arrays) checked against its graph, as
// loading a dataset does: shapes, dtypes, ids in range, the negatives' layout, positives that
// must (training) or must not (validation, test) be edges, repeats and negatives that are
// edges. The graph is fixed: 16 nodes, i -> i+1 and i -> i+5 (mod 16). The first byte sets the
// split's flags: bit 0 directed, bits 1-2 the negatives (none, shared, per_source, none), bit 3
// eval_edges_in_graph, bit 4 published; the rest is an .npz archive of train, val, test,
// val_neg and test_neg.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "directgnn/error.h"
#include "fuzz_util.h"
#include "graph/coo_builder.h"
#include "graph/link_split.h"
#include "io/npz.h"

namespace {

constexpr int64_t kNodes = 16;

directgnn::CsrGraph fixed_graph(bool directed) {
  const at::Tensor i = at::arange(kNodes, at::kLong);
  const at::Tensor src = at::cat({i, i});
  const at::Tensor dst = at::cat({(i + 1) % kNodes, (i + 5) % kNodes});
  directgnn::CooBuildOptions options;
  options.symmetrize = !directed;
  return directgnn::build_csr_from_coo(src, dst, kNodes, options, "graph");
}

at::Tensor member(const directgnn::NpzFile& npz, const std::string& key) {
  return npz.contains(key) ? npz.get(key) : at::Tensor();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  directgnn::fuzz::single_threaded();
  if (size == 0) return 0;
  static const directgnn::CsrGraph graphs[2] = {fixed_graph(false), fixed_graph(true)};
  const uint8_t flags = data[0];
  const bool directed = (flags & 1) != 0;
  try {
    const directgnn::NpzFile npz(nullptr, data + 1, size - 1, "link.npz");
    directgnn::LinkSplit split;
    split.train = member(npz, "train");
    split.val = member(npz, "val");
    split.test = member(npz, "test");
    const int layout = (flags >> 1) & 3;
    split.negatives = layout == 1   ? directgnn::LinkNegatives::kShared
                      : layout == 2 ? directgnn::LinkNegatives::kPerSource
                                    : directgnn::LinkNegatives::kNone;
    if (split.negatives != directgnn::LinkNegatives::kNone) {
      split.val_neg = member(npz, "val_neg");
      split.test_neg = member(npz, "test_neg");
    }
    split.eval_edges_in_graph = (flags & 8) != 0;
    split.published = (flags & 16) != 0;
    // Loading refuses a missing member before the split is checked (load_required).
    if (!split.train.defined() || !split.val.defined() || !split.test.defined()) return 0;
    if (split.negatives != directgnn::LinkNegatives::kNone &&
        (!split.val_neg.defined() || !split.test_neg.defined())) {
      return 0;
    }
    directgnn::validate_link_split(split, graphs[directed ? 1 : 0], directed, "link");
    directgnn::fuzz::touch(split.val_neg);
  } catch (const directgnn::Error&) {
  }
  return 0;
}
