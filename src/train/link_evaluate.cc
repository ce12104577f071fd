#include "train/link_evaluate.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include "directgnn/error.h"
#include "train/link_metrics.h"
#include "train/metrics.h"

namespace directgnn {

LinkMetrics link_metrics(const at::Tensor& pos, const at::Tensor& neg, LinkNegatives layout,
                         int64_t hits_k) {
  LinkMetrics m;
  if (layout == LinkNegatives::kShared) {
    const at::Tensor scores = at::cat({pos.view(-1), neg.view(-1)});
    const at::Tensor labels =
        at::cat({at::ones({pos.numel()}, at::kLong), at::zeros({neg.numel()}, at::kLong)});
    m.roc_auc = roc_auc(scores, labels);
    m.ap = average_precision(scores, labels);
    m.hits = hits_at_k(pos.view(-1), neg.view(-1), hits_k);
  } else if (layout == LinkNegatives::kPerSource) {
    const at::Tensor ranks = ranks_among_negatives(pos, neg);
    m.mrr = mean_reciprocal_rank(ranks);
    m.hits = hits_of_ranks(ranks, hits_k);
  }
  return m;
}

namespace {

// Decoder scores of pairs (src[i], dst[i]) whose endpoints' embeddings are rows of `h`
// (nodes: the sorted ids of those rows), `chunk` pairs at a time.
at::Tensor score_pairs(LinkDecoder& decoder, const at::Tensor& h, const at::Tensor& nodes,
                       const at::Tensor& src, const at::Tensor& dst, int64_t chunk) {
  at::Tensor out = at::empty({src.numel()}, at::kFloat);
  for (int64_t begin = 0; begin < src.numel(); begin += chunk) {
    const int64_t len = std::min(chunk, src.numel() - begin);
    const at::Tensor s = at::searchsorted(nodes, src.narrow(0, begin, len).contiguous());
    const at::Tensor d = at::searchsorted(nodes, dst.narrow(0, begin, len).contiguous());
    out.narrow(0, begin, len)
        .copy_(decoder.forward(h.index_select(0, s), h.index_select(0, d)).to(at::kFloat));
  }
  return out;
}

// One split's positives and negatives scored: pos [E]; neg [M] or [E, K].
std::pair<at::Tensor, at::Tensor> score_split(LinkDecoder& decoder, const at::Tensor& h,
                                              const at::Tensor& nodes, const at::Tensor& pos,
                                              const at::Tensor& neg, LinkNegatives layout,
                                              int64_t chunk) {
  const at::Tensor p = score_pairs(decoder, h, nodes, pos.select(1, 0), pos.select(1, 1), chunk);
  if (layout == LinkNegatives::kShared) {
    return {p, score_pairs(decoder, h, nodes, neg.select(1, 0), neg.select(1, 1), chunk)};
  }
  const at::Tensor src = pos.select(1, 0).view({-1, 1}).expand_as(neg).reshape(-1);
  return {p, score_pairs(decoder, h, nodes, src, neg.reshape(-1), chunk).view(neg.sizes())};
}

// Every node id the scores of the splits asked for read, sorted and unique.
at::Tensor needed_nodes(const LinkSplit& s, bool val, bool test) {
  std::vector<at::Tensor> ids;
  if (val) {
    ids.push_back(s.val.reshape(-1));
    ids.push_back(s.val_neg.reshape(-1));
  }
  if (test) {
    ids.push_back(s.test.reshape(-1));
    ids.push_back(s.test_neg.reshape(-1));
  }
  return std::get<0>(at::_unique(at::cat(ids)));
}

// The final-layer embeddings of `nodes` (sorted ids), each rank computing its share; a sharded
// table's rows come over its exchange (a rank with no share still takes part).
at::Tensor embed_nodes(GnnModel& model, const CsrGraph& graph, const at::Tensor& features,
                       const at::Tensor& nodes, const LinkEvalOptions& o) {
  InferHooks hooks;
  if (o.exchange != nullptr) {
    hooks.input_rows = [&o](const at::Tensor& ids) { return o.exchange->gather(ids); };
  }
  if (o.group == nullptr) return model.infer_nodes(graph, features, nodes, o.chunk, hooks);
  const int64_t n = nodes.numel(), rank = o.group->rank(), ranks = o.group->size();
  const int64_t lo = n * rank / ranks, hi = n * (rank + 1) / ranks;
  std::vector<at::Tensor> h{at::zeros({n, model.config().num_classes}, at::kFloat)};
  if (hi > lo) {
    h[0].narrow(0, lo, hi - lo)
        .copy_(model.infer_nodes(graph, features, nodes.narrow(0, lo, hi - lo), o.chunk, hooks));
  } else if (o.exchange != nullptr) {
    o.exchange->gather(at::empty({0}, at::kLong));
  }
  o.group->all_reduce_sum(h);
  return h[0];
}

}  // namespace

LinkEvalResult evaluate_links(GnnModel& model, LinkDecoder& decoder, const CsrGraph& graph,
                              const at::Tensor& features, const LinkSplit& split,
                              const LinkEvalOptions& o) {
  DGNN_CHECK(split.negatives != LinkNegatives::kNone,
             "link evaluation: the link split stores no validation and test negatives; give "
             "them (docs/formats.md), or make a random split, which draws them");
  torch::NoGradGuard no_grad;
  const bool was_training = decoder.is_training();
  decoder.eval();
  DGNN_CHECK(o.val || o.test, "link evaluation: score the validation or the test split");
  const at::Tensor nodes = needed_nodes(split, o.val, o.test);
  const at::Tensor h = embed_nodes(model, graph, features, nodes, o);
  LinkEvalResult r;
  if (o.val) {
    auto [vp, vn] =
        score_split(decoder, h, nodes, split.val, split.val_neg, split.negatives, o.chunk);
    r.val = link_metrics(vp, vn, split.negatives, o.hits_k);
  }
  if (o.test) {
    auto [tp, tn] =
        score_split(decoder, h, nodes, split.test, split.test_neg, split.negatives, o.chunk);
    r.test = link_metrics(tp, tn, split.negatives, o.hits_k);
  }
  decoder.train(was_training);
  return r;
}

}  // namespace directgnn
