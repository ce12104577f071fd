#include "dist/feature_exchange.h"

#include <ATen/ATen.h>

#include "core/clock.h"
#include "directgnn/error.h"
#include "gpu/placement.h"
#include "gpu/runtime.h"

namespace directgnn {
namespace {

int parts_of(const std::unique_ptr<ProcessGroup>& group) {
  DGNN_CHECK(group != nullptr, "feature exchange: no process group");
  return group->size();
}

}  // namespace

FeatureExchange::FeatureExchange(std::vector<int64_t> offsets, FeatureStore local,
                                 std::unique_ptr<ProcessGroup> group)
    : offsets_(std::move(offsets), parts_of(group), "feature exchange"),
      owned_(std::move(local)),
      group_(std::move(group)) {
  local_ = &*owned_;
  check_shape();
}

FeatureExchange::FeatureExchange(std::vector<int64_t> offsets, const FeatureStore& table,
                                 int64_t first_row, std::unique_ptr<ProcessGroup> group)
    : offsets_(std::move(offsets), parts_of(group), "feature exchange"),
      local_(&table),
      first_row_(first_row),
      group_(std::move(group)) {
  check_shape();
}

void FeatureExchange::check_shape() {
  const int r = group_->rank();
  const int64_t rows = offsets_.size(r);
  DGNN_CHECK(first_row_ >= 0 && first_row_ + rows <= local_->num_rows(), "feature exchange: rank ",
             r, " serves its part's ", rows, " rows from row ", first_row_, " of a table of ",
             local_->num_rows());
}

void FeatureExchange::serve(FeatureStore local) {
  std::lock_guard<std::mutex> lock(mutex_);
  owned_.emplace(std::move(local));
  local_ = &*owned_;
  first_row_ = 0;
  cache_ids_ = at::Tensor();
  cache_rows_ = at::Tensor();
  check_shape();
}

void FeatureExchange::on_device(const c10::Device& device, const GatherOptions& options) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    DGNN_CHECK(device.is_cpu() || (device.is_cuda() && device.has_index()),
               "feature exchange: cannot exchange on ", device.str(), " (a GPU needs its index)");
    DGNN_CHECK(device.is_cuda() || group_->backend() != DistBackend::kNccl,
               "feature exchange: an NCCL group exchanges GPU tensors; give a CUDA device");
    // (Whether the copy was filled, not its size, which differs by rank.)
    DGNN_CHECK(!cache_ids_.defined(),
               "feature exchange: choose the device before caching remote rows");
    wire_ = device;
    serve_options_ = options;
  }
  // An NCCL group makes its communicator at its first collective: now, on the caller's thread,
  // every rank at once, not later on a loader's worker beside the training step's all-reduce.
  gather(at::empty({0}, at::kLong), wire_);
  clear_counts();
}

at::Tensor FeatureExchange::owners(const at::Tensor& ids) const { return offsets_.owners(ids); }

at::Tensor FeatureExchange::gather(const at::Tensor& ids, const c10::Device& device) {
  DGNN_CHECK(ids.dim() == 1 && ids.scalar_type() == at::kLong && ids.device().is_cpu(),
             "feature exchange: ids must be a 1-D int64 CPU tensor");
  check_ids_in_range(ids, num_rows());
  std::lock_guard<std::mutex> lock(mutex_);
  const auto start = Clock::now();
  int64_t remote = 0, hits = 0;
  at::Tensor rows;
  if (cached_rows() == 0) {
    rows = exchange(ids, remote);
  } else {
    // Rows in the cache are copied here; only the others are exchanged.
    const at::Tensor pos = at::searchsorted(cache_ids_, ids).clamp_max(cached_rows() - 1);
    const at::Tensor hit = cache_ids_.index_select(0, pos).eq(ids);
    const at::Tensor hit_at = at::nonzero(hit).squeeze(1);
    const at::Tensor miss_at = at::nonzero(hit.logical_not()).squeeze(1);
    hits = hit_at.numel();
    const at::Tensor fetched = exchange(ids.index_select(0, miss_at), remote);
    rows = at::empty({ids.numel(), dim()}, fetched.options());
    rows.index_copy_(0, miss_at.to(wire_), fetched);
    rows.index_copy_(0, hit_at.to(wire_),
                     cache_rows_.index_select(0, pos.index_select(0, hit_at).to(wire_)));
  }
  std::lock_guard<std::mutex> count_lock(counts_mutex_);
  counts_.gathers += 1;
  counts_.rows += ids.numel();
  counts_.remote_rows += remote + hits;
  counts_.cache_hits += hits;
  counts_.seconds += seconds_since(start);
  return rows.to(device);
}

at::Tensor FeatureExchange::exchange(const at::Tensor& ids, int64_t& remote) {
  const int parts = group_->size(), r = group_->rank();
  const std::vector<int64_t> ones(static_cast<size_t>(parts), 1);
  const at::TensorOptions on_wire = at::TensorOptions().device(wire_);
  // The ids grouped by owner (a stable sort keeps each owner's in request order).
  const at::Tensor owner = owners(ids);
  const at::Tensor order = std::get<1>(at::sort(owner, /*stable=*/true, 0, false));
  const at::Tensor asked = ids.index_select(0, order).to(wire_);
  const at::Tensor send_counts = at::bincount(owner, {}, parts).to(at::kLong);
  at::Tensor recv_counts = at::empty({parts}, on_wire.dtype(at::kLong));
  group_->all_to_all(recv_counts, send_counts.to(wire_), ones, ones);
  const std::vector<int64_t> sent = to_vector(send_counts), received = to_vector(recv_counts);
  int64_t total = 0;
  for (int64_t c : received) total += c;
  at::Tensor wanted = at::empty({total}, on_wire.dtype(at::kLong));
  group_->all_to_all(wanted, asked, received, sent);
  // Serve the rows asked of this rank onto the wire, then send each asker its rows back.
  const at::Tensor served =
      local_->gather(wanted - (offsets_[r] - first_row_), wire_, serve_options_).contiguous();
  const int64_t row_bytes = local_->row_bytes();
  at::Tensor back = at::empty({ids.numel(), row_bytes}, on_wire.dtype(at::kByte));
  group_->all_to_all(back, served.view(at::kByte), sent, received);
  at::Tensor rows = at::empty({ids.numel(), dim()}, served.options());
  rows.index_copy_(0, order.to(wire_), back.view(served.scalar_type()));
  const int64_t remote_out = ids.numel() - sent[static_cast<size_t>(r)];
  const int64_t remote_in = total - received[static_cast<size_t>(r)];
  remote = remote_out;
  std::lock_guard<std::mutex> count_lock(counts_mutex_);
  counts_.bytes_sent += remote_out * 8 + remote_in * row_bytes + 8 * (parts - 1);
  counts_.bytes_received += remote_in * 8 + remote_out * row_bytes + 8 * (parts - 1);
  return rows;
}

void FeatureExchange::cache_remote_rows(const at::Tensor& ranked, int64_t max_rows) {
  DGNN_CHECK(ranked.dim() == 1 && ranked.scalar_type() == at::kLong,
             "feature exchange: the ranking must be 1-D int64 ids");
  const int r = group_->rank();
  const at::Tensor remote = ranked.index_select(0, at::nonzero(owners(ranked).ne(r)).squeeze(1));
  const at::Tensor ids = std::get<0>(at::sort(
      remote.narrow(0, 0, std::min<int64_t>(std::max<int64_t>(max_rows, 0), remote.numel()))));
  cache_ids_ = at::Tensor();
  cache_rows_ = at::Tensor();
  // Each rank's copy has its own size, and each GPU its own free memory: a rank without room
  // says so on every rank, so none is left waiting in the fill's collectives.
  group_->check_on_every_rank(
      [&] {
        if (!wire_.is_cuda()) return;
        // While it fills, the rows arrive in a byte buffer and are then copied into the copy.
        gpu::check_fits_on_device(2 * ids.numel() * local_->row_bytes(), wire_.index(),
                                  "remote_cache_gib",
                                  "filling the copy of " + std::to_string(ids.numel()) +
                                      " remote rows (twice their size while the rows arrive)",
                                  "give less, or exchange on the CPU (exchange_device cpu)");
      },
      "a copy of remote rows");
  at::Tensor rows = gather(ids, wire_);  // a collective: every rank fills its cache at once
  // The loader's worker reads the copy on its own stream: let the fill finish first.
  if (wire_.is_cuda()) gpu::synchronize_current_stream(wire_.index());
  cache_ids_ = ids;
  if (ids.numel() > 0) cache_rows_ = std::move(rows);
  clear_counts();
}

ExchangeCounts FeatureExchange::counts() const {
  std::lock_guard<std::mutex> lock(counts_mutex_);
  return counts_;
}

void FeatureExchange::clear_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex_);
  counts_ = ExchangeCounts();
}

}  // namespace directgnn
