#include "train/hetero_tables.h"

#include <ATen/ATen.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "core/clock.h"
#include "core/random.h"
#include "core/resources.h"
#include "directgnn/error.h"
#include "train/table_init.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTablesPrefix = "state-embeddings-";

// The serial of the newest tables directory in `dir` (0 when none).
int64_t newest_serial(const std::string& dir) {
  int64_t newest = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kTablesPrefix, 0) != 0) continue;
    try {
      newest =
          std::max<int64_t>(newest, std::stoll(name.substr(std::string(kTablesPrefix).size())));
    } catch (const std::exception&) {
    }
  }
  return newest;
}

// Every rank's `ids` and `rows` one after another in rank order, the same on every rank: each
// rank fills its own part of zeroed buffers and they are summed (x + 0 is exact).
std::pair<at::Tensor, at::Tensor> all_ranks_rows(ProcessGroup& group, const at::Tensor& ids,
                                                 const at::Tensor& rows) {
  const int64_t n = ids.numel();
  std::vector<at::Tensor> counts{at::zeros({group.size()}, at::kLong)};
  counts[0][group.rank()] = n;
  group.all_reduce_sum(counts);
  const at::Tensor ends = counts[0].cumsum(0);
  const int64_t total = ends[-1].item<int64_t>();
  const int64_t start = ends[group.rank()].item<int64_t>() - n;
  std::vector<at::Tensor> all{at::zeros({total}, at::kLong),
                              at::zeros({total, rows.size(1)}, rows.options())};
  all[0].narrow(0, start, n).copy_(ids);
  all[1].narrow(0, start, n).copy_(rows);
  group.all_reduce_sum(all);
  return {all[0], all[1]};
}

}  // namespace

HeteroTables::HeteroTables(const HeteroDataset& ds, const EmbeddingOptions& options, uint64_t seed,
                           std::vector<int64_t>& in_dims)
    : tables_(ds.node_types.size()) {
  for (const NodeType& t : ds.node_types) names_.push_back(t.name);
  DGNN_CHECK_ARG(options.init_hops >= 0, "embedding_init_hops", "must be 0 or more, got ",
                 options.init_hops);
  DGNN_CHECK_ARG(std::isfinite(options.weight_decay) && options.weight_decay >= 0,
                 "embedding_weight_decay", "must be a finite number, 0 or more, got ",
                 options.weight_decay);
  if (options.dim <= 0) return;
  init_hops_ = options.init_hops;
  placement_ = options.placement;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    if (ds.node_types[t].has_features()) continue;
    tables_[t] =
        std::make_unique<EmbeddingTable>(ds.node_types[t].count, options, mix64(seed, 0xe3b0, t));
    in_dims[t] = options.dim;
  }
}

void HeteroTables::smooth(const HeteroDataset& graph, uint64_t seed, bool progress,
                          ProcessGroup* group) {
  if (init_hops_ == 0 || smooth_seconds_ || !any()) return;
  const Clock::time_point start_time = Clock::now();
  std::vector<at::Tensor> tables(tables_.size());
  int64_t bytes = 0;
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (!tables_[t]) continue;
    tables[t] = tables_[t]->weight();
    bytes += tables[t].nbytes();
  }
  // A hop's new rows take as much memory again as the tables: refused up front where that is
  // not free, rather than ending in the out-of-memory killer.
  const int64_t available = host_memory().available;
  DGNN_CHECK_ARG(available == 0 || bytes <= available, "embedding_init_hops",
                 "smoothing the tables needs another ", gib_text(bytes),
                 " of memory for a hop's "
                 "new rows, but only ",
                 gib_text(available),
                 " is available; set it to 0 (the "
                 "tables keep their random start) or train on a machine with more memory");
  SumOverRanks sum;
  if (group != nullptr) {
    sum = [group](at::Tensor& x) {
      std::vector<at::Tensor> one{x};
      group->all_reduce_sum(one);
      if (!one[0].is_same(x)) x.copy_(one[0]);
    };
  }
  smooth_rows_in_place(graph, tables, init_hops_, mix64(seed, 0x5e0f), progress, sum);
  // The allocator keeps freed memory for the next batch (core/threads.cc); the smoothing's
  // arrays are freed for good, so their pages go back to the system now.
  malloc_trim(0);
  smooth_seconds_ = seconds_since(start_time);
}

void HeteroTables::place(const c10::Device& device) {
  const TablePlacement asked = placement_;
  DGNN_CHECK_ARG(asked != TablePlacement::kPinned || device.is_cuda(), "embedding_placement",
                 "pinned tables are read by GPU threads, but this run trains on the CPU, where "
                 "they are read in host memory; use host or auto");
  const bool pin = device.is_cuda() && asked != TablePlacement::kHost;
  placed_ = pin ? "pinned host memory, read by GPU threads (aligned zero-copy)"
                : (device.is_cuda() ? "host memory, rows copied to the GPU" : "host memory");
  if (asked == TablePlacement::kAuto && device.is_cuda()) placed_ += " (auto: a GPU run)";
  if (!pin) return;
  for (auto& table : tables_) {
    if (table) table->pin(device.index());
  }
}

void HeteroTables::read_rows(const std::vector<at::Tensor>& input_nodes, const c10::Device& device,
                             std::vector<at::Tensor>& x) const {
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (tables_[t]) x[t] = tables_[t]->gather(input_nodes[t], device).requires_grad_(true);
  }
}

void HeteroTables::update(const std::vector<at::Tensor>& input_nodes,
                          const std::vector<at::Tensor>& x, ProcessGroup* group) {
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (!tables_[t]) continue;
    const bool has_grad = x[t].grad().defined();
    if (group == nullptr) {
      if (has_grad) tables_[t]->update(input_nodes[t], x[t].grad().cpu());
      continue;
    }
    // Every rank takes part, also one whose batch gave this table no gradient.
    const at::Tensor ids = input_nodes[t].to(at::kCPU, at::kLong);
    const at::Tensor grad =
        has_grad ? x[t].grad().cpu() : at::zeros({ids.numel(), tables_[t]->dim()});
    const auto [all_ids, all_rows] = all_ranks_rows(*group, ids, grad);
    if (all_ids.numel() == 0) continue;
    const auto [distinct, inverse, counts] = at::_unique2(all_ids, true, true, false);
    at::Tensor summed = at::zeros({distinct.numel(), grad.size(1)}, grad.options());
    summed.index_add_(0, inverse, all_rows);
    tables_[t]->update(distinct, summed.div_(static_cast<double>(group->size())));
  }
}

std::vector<at::Tensor> HeteroTables::inputs(const HeteroDataset& ds) const {
  std::vector<at::Tensor> out;
  for (size_t t = 0; t < ds.node_types.size(); ++t)
    out.push_back(tables_[t] ? tables_[t]->weight() : ds.node_types[t].features);
  return out;
}

std::vector<at::Tensor> HeteroTables::weights() const {
  std::vector<at::Tensor> out;
  for (const auto& table : tables_) {
    if (table) out.push_back(table->weight());
  }
  return out;
}

void HeteroTables::save_checkpoint(const std::string& dir, nlohmann::json& meta) const {
  nlohmann::json named = nlohmann::json::object();
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (!tables_[t]) continue;
    fs::create_directories(dir + "/embeddings");
    tables_[t]->save(dir + "/embeddings", names_[t]);
    named[names_[t]] = {{"dim", tables_[t]->dim()}, {"file", "embeddings/" + names_[t] + ".npy"}};
  }
  if (!named.empty()) meta["embeddings"] = named;
}

void HeteroTables::save_state(const std::string& dir, TrainingState& state) const {
  fs::create_directories(dir);
  const std::string tables_dir = kTablesPrefix + std::to_string(newest_serial(dir) + 1);
  state.extras["embeddings_dir"] = tables_dir;
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (!tables_[t]) continue;
    fs::create_directories(dir + "/" + tables_dir);
    tables_[t]->save(dir + "/" + tables_dir, names_[t]);
  }
}

void HeteroTables::saved(const std::string& dir, const TrainingState& state) const {
  const std::string keep = state.extras.value("embeddings_dir", std::string());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kTablesPrefix, 0) == 0 && name != keep) fs::remove_all(entry.path(), ec);
  }
}

void HeteroTables::load_state(const std::string& dir, const TrainingState& state) const {
  const nlohmann::json& named = state.extras;
  DGNN_CHECK(named.contains("embeddings_dir") && named["embeddings_dir"].is_string(), dir,
             "/state.pt: the training state names no embedding tables' directory (written by "
             "another version?)");
  const std::string tables_dir = dir + "/" + named["embeddings_dir"].get<std::string>();
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (tables_[t]) tables_[t]->load(tables_dir, names_[t]);
  }
}

}  // namespace directgnn
