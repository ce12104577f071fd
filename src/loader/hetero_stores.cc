#include "loader/hetero_stores.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>

#include "core/clock.h"
#include "core/progress.h"
#include "core/resources.h"
#include "directgnn/error.h"

namespace directgnn {
namespace {

std::unique_ptr<FeatureStore> make_type_store(const NodeType& t, Placement p,
                                              const LoaderSettings& s) {
  if (!t.has_features()) return nullptr;
  if (p != Placement::kDisk) return std::make_unique<FeatureStore>(t.features, p, s.index());
  DGNN_CHECK(!t.features_path.empty(), "heterogeneous loader: node type '", t.name,
             "' is placed on disk, but its table was not loaded from a file");
  return std::make_unique<FeatureStore>(
      FeatureStore::on_disk(t.features, t.features_path, s.disk, s.index()));
}

template <typename Id>
void count_type_ids_into(const Id* ids, int64_t n, int64_t* counts) {
  for (int64_t i = 0; i < n; ++i) ++counts[static_cast<int64_t>(ids[i])];
}

void count_type_ids(const at::Tensor& ids, at::Tensor& counts) {
  const at::Tensor c = ids.contiguous();
  if (c.scalar_type() == at::kInt) {
    count_type_ids_into(c.data_ptr<int32_t>(), c.numel(), counts.data_ptr<int64_t>());
  } else {
    count_type_ids_into(c.data_ptr<int64_t>(), c.numel(), counts.data_ptr<int64_t>());
  }
}

// Per disk-backed type (undefined for the others): its in-degrees, and the ranking's counts,
// pre-sampled minibatch counts or the in-degrees themselves, over the ids its cache may hold:
// every id, or a sharded table's owner's part, [begin, begin + len), held at the store's rows
// from `first` on.
struct CacheCounts {
  std::vector<at::Tensor> degrees, counts;
  std::vector<int64_t> begin, first;
};

// Counts `ids` (global) that fall in [begin, begin + counts.numel()) into `counts`.
void count_in_range(const at::Tensor& ids, int64_t begin, at::Tensor& counts) {
  const at::Tensor all = ids.cpu().to(at::kLong);
  const at::Tensor in = all.ge(begin).logical_and_(all.lt(begin + counts.numel()));
  count_type_ids(all.masked_select(in) - begin, counts);
}

CacheCounts cache_counts(const HeteroStores& stores, const HeteroDataset& graph,
                         const HeteroPresample& presample, const disk::CacheOptions& options,
                         bool show_progress) {
  CacheCounts c;
  c.degrees.resize(stores.size());
  c.counts.resize(stores.size());
  c.begin.assign(stores.size(), 0);
  c.first.assign(stores.size(), 0);
  const bool by_degree = options.ranking == disk::CacheRanking::kDegree;
  for (size_t t = 0; t < stores.size(); ++t) {
    const FeatureStore* s = stores.store(t);
    if (s == nullptr || s->placement() != Placement::kDisk) continue;
    // An owner's cache serves every rank's requests for its part, and only those.
    int64_t end = graph.node_types[t].count;
    if (const FeatureExchange* e = stores.exchange(t)) {
      std::tie(c.begin[t], end) = e->own_range();
      c.first[t] = e->first_row();
    }
    c.degrees[t] =
        hetero_in_degrees(graph, static_cast<int>(t)).narrow(0, c.begin[t], end - c.begin[t]);
    c.counts[t] = by_degree ? c.degrees[t] : at::zeros({end - c.begin[t]}, at::kLong);
  }
  if (by_degree) return c;
  Progress bar("Pre-sampling for the feature cache", show_progress ? presample.steps : -1);
  for (int64_t step = 0; step < presample.steps; ++step) {
    const std::vector<at::Tensor> inputs = presample.inputs_of(step);
    for (size_t t = 0; t < c.counts.size(); ++t) {
      if (c.counts[t].defined()) count_in_range(inputs[t], c.begin[t], c.counts[t]);
    }
    bar.update(step + 1);
  }
  bar.finish();
  return c;
}

struct CacheShare {
  at::Tensor ranked;  // the rows of the type the budget takes, best first
  int64_t rows = 0;
};

// Ranks the rows of every type with counts together (count, then degree, then type order,
// then id; each row costs its type's row bytes) and takes the best until `budget` bytes are
// spent. Memory: one int64 key and one sort of all disk-backed rows, then the taken prefix.
std::vector<CacheShare> share_cache(const HeteroStores& stores, const CacheCounts& c,
                                    int64_t budget) {
  const size_t types = c.counts.size();
  int64_t span = 1;
  for (const at::Tensor& d : c.degrees) {
    if (d.defined() && d.numel() > 0) span = std::max(span, d.max().item<int64_t>() + 1);
  }
  // Type t's rows are [offset[t], offset[t + 1]) of the concatenation, in type order.
  std::vector<int64_t> offset(types + 1, 0), row_bytes(types, 0);
  std::vector<at::Tensor> keys;
  for (size_t t = 0; t < types; ++t) {
    offset[t + 1] = offset[t];
    if (!c.counts[t].defined()) continue;
    offset[t + 1] += c.counts[t].numel();
    row_bytes[t] = std::max<int64_t>(1, stores.store(t)->row_bytes());
    keys.push_back(c.counts[t] * span + c.degrees[t]);
  }
  at::Tensor order = at::cat(keys);
  keys.clear();
  // A stable sort over the concatenation keeps ties in type order, then id order.
  order = std::get<1>(order.sort(/*stable=*/true, 0, /*descending=*/true));
  std::vector<CacheShare> shares(types);
  const int64_t* o = order.data_ptr<int64_t>();
  int64_t spent = 0, taken = 0;
  for (; taken < order.numel(); ++taken) {
    size_t t = 0;
    while (o[taken] >= offset[t + 1]) ++t;
    if (spent + row_bytes[t] > budget) break;
    spent += row_bytes[t];
    ++shares[t].rows;
  }
  const at::Tensor prefix = order.narrow(0, 0, taken);
  for (size_t t = 0; t < types; ++t) {
    if (!c.counts[t].defined()) continue;
    const at::Tensor mine = prefix.ge(offset[t]).logical_and_(prefix.lt(offset[t + 1]));
    shares[t].ranked = prefix.masked_select(mine) - offset[t];
  }
  return shares;
}

}  // namespace

HeteroStores::HeteroStores(const HeteroDataset& dataset, const LoaderSettings& settings)
    : dataset_(dataset), settings_(settings) {
  DGNN_CHECK(settings_.type_features.size() == dataset.node_types.size() &&
                 settings_.type_gather.size() == dataset.node_types.size() &&
                 settings_.type_reasons.size() == dataset.node_types.size(),
             "heterogeneous loader: the settings place ", settings_.type_features.size(),
             " node types, but the dataset has ", dataset.node_types.size(),
             "; resolve them for this dataset");
  for (size_t t = 0; t < dataset.node_types.size(); ++t) {
    stores_.push_back(
        make_type_store(dataset.node_types[t], settings_.type_features[t], settings_));
  }
}

void HeteroStores::use_exchanges(std::vector<std::shared_ptr<FeatureExchange>> exchanges) {
  DGNN_CHECK(exchanges.size() == stores_.size(), "heterogeneous loader: ", exchanges.size(),
             " exchanges for ", stores_.size(), " node types; give one per type (null: none)");
  for (size_t t = 0; t < stores_.size(); ++t) {
    if (exchanges[t] == nullptr) continue;
    DGNN_CHECK(stores_[t] != nullptr && exchanges[t]->num_rows() == dataset_.node_types[t].count &&
                   exchanges[t]->dim() == stores_[t]->dim(),
               "heterogeneous loader: the exchange of node type '", type_name(t),
               "' serves a table of ", exchanges[t]->num_rows(), " x ", exchanges[t]->dim(),
               " rows, but the type has ", dataset_.node_types[t].count, " nodes",
               stores_[t] != nullptr ? " of " + std::to_string(stores_[t]->dim()) + " values"
                                     : " and no table");
  }
  exchanges_ = std::move(exchanges);
}

std::vector<std::shared_ptr<FeatureExchange>> hetero_part_exchanges(
    const HeteroDataset& ds, int rank, const HeteroStores& stores,
    const std::function<std::unique_ptr<ProcessGroup>(const std::string& type)>& group_for) {
  std::vector<std::shared_ptr<FeatureExchange>> out(ds.node_types.size());
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    const NodeType& type = ds.node_types[t];
    if (stores.store(t) == nullptr) continue;
    const std::vector<int64_t>& offsets = type.partition.offsets;
    const int64_t first_row = type.feature_part >= 0 ? 0 : offsets[rank];
    out[t] = std::make_shared<FeatureExchange>(offsets, *stores.store(t), first_row,
                                               group_for(type.name));
  }
  return out;
}

std::vector<at::Tensor> HeteroStores::gather(const std::vector<at::Tensor>& input_nodes) const {
  std::vector<at::Tensor> x;
  for (size_t t = 0; t < stores_.size(); ++t) {
    if (stores_[t] == nullptr) {
      x.emplace_back();
    } else if (exchange(t) != nullptr) {
      // Every rank takes part in every type's exchange, in type order, batch after batch.
      x.push_back(
          exchanges_[t]->gather(input_nodes[t].to(at::kCPU).to(at::kLong),
                                settings_.gpu() ? settings_.device : c10::Device(c10::kCPU)));
    } else if (settings_.gpu()) {
      x.push_back(stores_[t]->gather(input_nodes[t], settings_.device, gather_options(t)));
    } else {
      x.push_back(stores_[t]->gather(input_nodes[t]));
    }
  }
  return x;
}

bool HeteroStores::has_disk() const {
  return std::any_of(stores_.begin(), stores_.end(),
                     [](const auto& s) { return s != nullptr && s->row_file() != nullptr; });
}

std::string HeteroStores::description() const {
  std::string out;
  for (size_t t = 0; t < stores_.size(); ++t) {
    if (stores_[t] == nullptr) continue;
    out += (out.empty() ? "" : "; ") + type_name(t) + " " + stores_[t]->description();
    if (settings_.gpu()) out += ", " + gather_method_name(settings_.type_gather[t]);
    if (!settings_.type_reasons[t].empty()) out += " (auto: " + settings_.type_reasons[t] + ")";
  }
  return out;
}

void hetero_blocks_to(std::vector<HeteroBlock>& blocks, const c10::Device& device) {
  if (device.is_cpu()) return;
  for (HeteroBlock& block : blocks) {
    for (Block& r : block.relations) {
      r.indptr = r.indptr.to(device);
      r.indices = r.indices.to(device);
      if (r.src_degree.defined()) r.src_degree = r.src_degree.to(device);
      if (r.dst_degree.defined()) r.dst_degree = r.dst_degree.to(device);
    }
  }
}

std::vector<at::Tensor> hetero_batch_tensors(const std::vector<HeteroBlock>& blocks,
                                             const std::vector<at::Tensor>& x) {
  std::vector<at::Tensor> all;
  for (const HeteroBlock& block : blocks) {
    for (const Block& r : block.relations) {
      all.insert(all.end(), {r.indptr, r.indices});
      for (const at::Tensor& d : {r.src_degree, r.dst_degree}) {
        if (d.defined()) all.push_back(d);
      }
    }
  }
  for (const at::Tensor& rows : x) {
    if (rows.defined()) all.push_back(rows);
  }
  return all;
}

at::Tensor hetero_in_degrees(const HeteroDataset& graph, int t) {
  at::Tensor counts = at::zeros({graph.node_types[static_cast<size_t>(t)].count}, at::kLong);
  for (const Relation& r : graph.relations) {
    if (r.src_type == t) count_type_ids(r.graph.indices, counts);
  }
  return counts;
}

HeteroPresample presample_batches(
    at::Tensor rows, int64_t batch_size, int64_t steps,
    std::function<std::vector<at::Tensor>(const at::Tensor& part, int64_t step)> inputs) {
  return {steps, [rows = std::move(rows), batch_size, inputs = std::move(inputs)](int64_t step) {
            const int64_t start = step * batch_size;
            return inputs(rows.narrow(0, start, std::min(batch_size, rows.size(0) - start)), step);
          }};
}

std::string fill_hetero_feature_cache(HeteroStores& stores, const HeteroDataset& graph,
                                      const HeteroPresample& presample,
                                      const disk::CacheOptions& options, bool show_progress) {
  const auto start = Clock::now();
  const CacheCounts counted = cache_counts(stores, graph, presample, options, show_progress);
  const std::vector<at::Tensor>& counts = counted.counts;
  double table_bytes = 0;
  for (size_t t = 0; t < counts.size(); ++t) {
    if (counts[t].defined())
      table_bytes += static_cast<double>(counts[t].numel() * stores.store(t)->row_bytes());
  }
  // At most every disk-backed row (a larger budget, even inf, caches them all).
  const auto budget = static_cast<int64_t>(
      std::min(options.gib * static_cast<double>(int64_t{1} << 30), table_bytes));
  const HostMemory memory = host_memory();
  DGNN_CHECK_ARG(memory.available == 0 || budget < memory.available, "feature_cache_gib",
                 options.gib, " asks for ", gib_text(budget), " of RAM, but only ",
                 gib_text(memory.available), " are available; give a smaller cache");
  const std::vector<CacheShare> shares = share_cache(stores, counted, budget);
  int64_t total_rows = 0;
  for (const CacheShare& s : shares) total_rows += s.rows;
  Progress bar("Filling the feature cache (rows)", show_progress ? total_rows : -1);
  int64_t filled = 0, cached_bytes = 0;
  std::string parts;
  for (size_t t = 0; t < shares.size(); ++t) {
    if (!counts[t].defined()) continue;
    FeatureStore& store = *stores.mutable_store(t);
    const int64_t bytes = shares[t].rows * store.row_bytes();
    // Positions in the counted ids are the store's rows from first[t] on.
    store.cache_hot_rows(
        shares[t].ranked + counted.first[t], bytes,
        [&](int64_t done, int64_t) { bar.update(filled + done); }, options.policy);
    filled += shares[t].rows;
    cached_bytes += bytes;
    char part[160];
    std::snprintf(part, sizeof(part), "%s (%s, %.1f%% of %s)", stores.type_name(t).c_str(),
                  size_text(bytes).c_str(),
                  100.0 * static_cast<double>(shares[t].rows) /
                      static_cast<double>(std::max<int64_t>(1, counts[t].numel())),
                  stores.exchange(t) != nullptr ? "this rank's part" : "its rows");
    parts += (parts.empty() ? "" : ", ") + std::string(part);
  }
  bar.finish();
  const std::string how = options.ranking == disk::CacheRanking::kDegree
                              ? "by in-degree"
                              : "by pre-sampling " + std::to_string(presample.steps) +
                                    (presample.steps == 1 ? " minibatch" : " minibatches");
  char line[96];
  std::snprintf(line, sizeof(line), ", ready in %.1f s", seconds_since(start));
  return "Feature cache: " + size_text(cached_bytes) + " shared by " + parts + ", ranked " + how +
         cache_policy_text(options) + line;
}

}  // namespace directgnn
