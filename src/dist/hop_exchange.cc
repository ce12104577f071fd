#include "dist/hop_exchange.h"

#include <ATen/ATen.h>

#include "core/clock.h"
#include "directgnn/error.h"
#include "sampling/cpu/neighbor_sampler.h"

namespace directgnn {
namespace {

int hop_group_size(const std::unique_ptr<ProcessGroup>& group) {
  DGNN_CHECK(group != nullptr, "hop exchange: no process group");
  return group->size();
}

// Sums of `values` over consecutive segments of `lengths` entries (int64 [P]).
at::Tensor segment_sums(const at::Tensor& values, const std::vector<int64_t>& lengths) {
  at::Tensor out = at::zeros({static_cast<int64_t>(lengths.size())}, at::kLong);
  const int64_t* v = values.data_ptr<int64_t>();
  int64_t* o = out.data_ptr<int64_t>();
  int64_t at = 0;
  for (size_t k = 0; k < lengths.size(); ++k) {
    for (int64_t i = 0; i < lengths[k]; ++i) o[k] += v[at++];
  }
  return out;
}

// The CSR offsets (int64 [n + 1]) of per-row `counts`.
at::Tensor offsets_of(const at::Tensor& counts) {
  return at::cat({at::zeros({1}, at::kLong), counts.cumsum(0)});
}

}  // namespace

CsrGraph partitioned_rows(const CsrGraph& graph, int64_t begin, int64_t end) {
  const int64_t n = graph.num_nodes();
  DGNN_CHECK(begin >= 0 && begin <= end && end <= n, "partitioned rows: [", begin, ", ", end,
             ") is not a range of the graph's ", n, " nodes");
  const int64_t first = graph.indptr[begin].item<int64_t>();
  const int64_t last = graph.indptr[end].item<int64_t>();
  CsrGraph out;
  // Rows before `begin` are empty at 0, rows from `end` on empty at the part's edge count.
  out.indptr = at::cat({at::zeros({begin}, at::kLong),
                        graph.indptr.narrow(0, begin, end - begin + 1) - first,
                        at::full({n - end}, last - first, at::kLong)});
  out.indices = graph.indices.narrow(0, first, last - first).clone();
  if (graph.weights.defined()) out.weights = graph.weights.narrow(0, first, last - first).clone();
  return out;
}

HopExchange::HopExchange(std::vector<int64_t> offsets, const CsrGraph& graph, bool weighted,
                         std::unique_ptr<ProcessGroup> group)
    : offsets_(std::move(offsets), hop_group_size(group), "hop exchange"),
      graph_(graph),
      weighted_(weighted),
      group_(std::move(group)) {
  const int parts = group_->size(), r = group_->rank();
  DGNN_CHECK(graph.num_nodes() == offsets_.back(), "hop exchange: the graph has ",
             graph.num_nodes(), " rows, the partition ", offsets_.back(), " nodes");
  DGNN_CHECK(!weighted || graph.weights.defined(), "hop exchange: a weighted draw needs weights");
  // Every rank sends its nodes' degrees to every rank.
  const int64_t mine = offsets_.size(r);
  const at::Tensor own = graph.degrees().narrow(0, offsets_[r], mine).to(at::kFloat);
  std::vector<int64_t> sizes;
  for (int k = 0; k < parts; ++k) sizes.push_back(offsets_.size(k));
  degrees_ = at::empty({offsets_.back()}, at::kFloat);
  group_->all_to_all(degrees_, own.repeat({parts}), sizes,
                     std::vector<int64_t>(static_cast<size_t>(parts), mine));
}

HopPicks HopExchange::draw(const at::Tensor& frontier_in, int64_t fanout, uint64_t seed,
                           uint64_t hop) {
  const at::Tensor frontier = frontier_in.to(at::kLong).contiguous();
  std::lock_guard<std::mutex> lock(mutex_);
  const auto start = Clock::now();
  const int parts = group_->size(), r = group_->rank();
  const std::vector<int64_t> ones(static_cast<size_t>(parts), 1);
  // 1. The frontier grouped by owner (a stable sort keeps each owner's rows in order); each
  // owner learns how many rows every rank asks of it and the random seed it draws them with
  // (each rank's batch has its own).
  const at::Tensor owner = offsets_.owners(frontier);
  const at::Tensor order = std::get<1>(at::sort(owner, /*stable=*/true, 0, false));
  const at::Tensor send_counts = at::bincount(owner, {}, parts).to(at::kLong);
  const at::Tensor header =
      at::stack({send_counts, at::full({parts}, static_cast<int64_t>(seed), at::kLong)}, 1);
  at::Tensor got_header = at::empty({parts, 2}, at::kLong);
  group_->all_to_all(got_header, header, ones, ones);
  const std::vector<int64_t> sent = to_vector(send_counts);
  const std::vector<int64_t> received = to_vector(got_header.select(1, 0));
  const std::vector<int64_t> seeds = to_vector(got_header.select(1, 1));
  int64_t total = 0;
  for (int64_t c : received) total += c;
  at::Tensor wanted = at::empty({total}, at::kLong);
  group_->all_to_all(wanted, frontier.index_select(0, order), received, sent);
  // 2. The rows asked of this rank drawn here, each asker's with its seed; each row's count,
  // then the picks, sent back.
  if (total > 0) {
    DGNN_CHECK(wanted.min().item<int64_t>() >= offsets_[r] &&
                   wanted.max().item<int64_t>() < offsets_[r + 1],
               "hop exchange: rank ", r, " was asked for rows it does not own");
  }
  std::vector<at::Tensor> counts_of, picks_of;
  for (int64_t k = 0, begin = 0; k < parts; begin += received[static_cast<size_t>(k)], ++k) {
    const HopPicks p = cpu::draw_rows(graph_, wanted.narrow(0, begin, received[k]), fanout,
                                      static_cast<uint64_t>(seeds[k]), hop, weighted_);
    counts_of.push_back(p.offsets.narrow(0, 1, received[k]) - p.offsets.narrow(0, 0, received[k]));
    picks_of.push_back(p.picked);
  }
  HopPicks local;
  local.picked = at::cat(picks_of);
  const at::Tensor row_counts = at::cat(counts_of);
  at::Tensor got_counts = at::empty({frontier.numel()}, at::kLong);
  group_->all_to_all(got_counts, row_counts, sent, received);
  const std::vector<int64_t> edges_out = to_vector(segment_sums(row_counts, received));
  const std::vector<int64_t> edges_in = to_vector(segment_sums(got_counts, sent));
  int64_t edges = 0;
  for (int64_t e : edges_in) edges += e;
  at::Tensor got = at::empty({edges}, at::kLong);
  group_->all_to_all(got, local.picked, edges_in, edges_out);
  // 3. Back in frontier order: row order[i]'s picks are the i-th run of `got`.
  HopPicks out;
  at::Tensor counts = at::empty({frontier.numel()}, at::kLong);
  counts.index_copy_(0, order, got_counts);
  out.offsets = offsets_of(counts);
  const at::Tensor row_of_edge =
      at::repeat_interleave(at::arange(frontier.numel(), at::kLong), got_counts, {}, edges);
  const at::Tensor within =
      at::arange(edges, at::kLong) -
      offsets_of(got_counts).narrow(0, 0, frontier.numel()).index_select(0, row_of_edge);
  const at::Tensor dest = out.offsets.index_select(0, order.index_select(0, row_of_edge)) + within;
  out.picked = at::empty({edges}, at::kLong);
  out.picked.index_copy_(0, dest, got);
  // Bytes that cross between ranks (a rank's own rows are not counted): the ids asked, each
  // row's pick count and the picks, 8 bytes each, and the P-1 counts and seeds.
  const int64_t remote_out = frontier.numel() - sent[static_cast<size_t>(r)];
  const int64_t remote_in = total - received[static_cast<size_t>(r)];
  const int64_t picks_in = edges - edges_in[static_cast<size_t>(r)];
  const int64_t picks_out = local.picked.numel() - edges_out[static_cast<size_t>(r)];
  std::lock_guard<std::mutex> count_lock(counts_mutex_);
  counts_.draws += 1;
  counts_.rows += frontier.numel();
  counts_.remote_rows += remote_out;
  counts_.bytes_sent += 8 * (remote_out + remote_in + picks_out + 2 * (parts - 1));
  counts_.bytes_received += 8 * (remote_in + remote_out + picks_in + 2 * (parts - 1));
  counts_.seconds += seconds_since(start);
  return out;
}

HopCounts HopExchange::counts() const {
  std::lock_guard<std::mutex> lock(counts_mutex_);
  return counts_;
}

void HopExchange::clear_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex_);
  counts_ = HopCounts();
}

}  // namespace directgnn
