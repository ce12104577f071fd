// torch.ops.directgnn.load_hetero, is_hetero and mag_dataset, and torch.classes.directgnn
// .HeteroGraph, .HeteroSampler and .HeteroLoader (hetero.h); PyG's sampler is in hetero_pyg.cc.
#include "hetero.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "classes.h"
#include "core/random.h"
#include "directgnn/error.h"
#include "errors.h"
#include "graph/hetero_link_split.h"
#include "graph/mag_generator.h"
#include "io/hetero_dir.h"
#include "loader/hetero_loader.h"
#include "loader/hetero_stores.h"
#include "passes.h"
#include "sampling/hetero_sampler.h"
#include "sampling/sampler.h"
#include "train/run_options.h"

namespace directgnn::ops {
namespace {

// "src,rel,dst" as a relation's names; throws naming the key when it has not three parts.
Relation relation_of(const std::string& key) {
  Relation r;
  const size_t a = key.find(','), b = key.find(',', a == std::string::npos ? a : a + 1);
  DGNN_CHECK_ARG(
      a != std::string::npos && b != std::string::npos && key.find(',', b + 1) == std::string::npos,
      "relations", "'", key, "' is not 'src,rel,dst' (three names, no commas in them)");
  r.src = key.substr(0, a);
  r.rel = key.substr(a + 1, b - a - 1);
  r.dst = key.substr(b + 1);
  return r;
}

void add_types(HeteroDataset& ds, const std::vector<std::string>& types,
               const std::vector<int64_t>& counts,
               const c10::List<std::optional<at::Tensor>>& features) {
  DGNN_CHECK_ARG(types.size() == counts.size() && types.size() == features.size(), "node_types",
                 "needs a count and a feature table (or None) per node type; got ", types.size(),
                 " types, ", counts.size(), " counts and ", features.size(), " tables");
  for (size_t t = 0; t < types.size(); ++t) {
    NodeType type;
    type.name = types[t];
    type.count = counts[t];
    const std::optional<at::Tensor> table = features.get(t);
    if (table) {
      DGNN_CHECK_TYPE(table->is_cpu(), "directgnn.HeteroDataset: the features of node type '",
                      type.name, "' must be a CPU tensor");
      type.features = *table;
    }
    ds.node_types.push_back(std::move(type));
  }
}

void add_relations(HeteroDataset& ds, const std::vector<std::string>& keys,
                   const std::vector<at::Tensor>& indptrs, const std::vector<at::Tensor>& indices) {
  DGNN_CHECK_ARG(keys.size() == indptrs.size() && keys.size() == indices.size(), "relations",
                 "needs an indptr and indices per relation; got ", keys.size(), " relations, ",
                 indptrs.size(), " indptrs and ", indices.size(), " indices");
  for (size_t r = 0; r < keys.size(); ++r) {
    Relation rel = relation_of(keys[r]);
    DGNN_CHECK_TYPE(indptrs[r].is_cpu() && indices[r].is_cpu(), "directgnn.HeteroDataset: the ",
                    "CSR of relation ", keys[r], " must be CPU tensors");
    rel.graph = CsrGraph{indptrs[r].contiguous(), indices[r].contiguous(), {}};
    ds.relations.push_back(std::move(rel));
  }
}

HeteroFields load(c10::string_view path_in, bool add_inverse_edges, int64_t feature_part,
                  int64_t feature_parts) {
  const std::string path(path_in);
  HeteroImportOptions options;
  options.add_inverse_edges = add_inverse_edges;
  HeteroDataset ds;
  if (is_hetero_dir(path)) {
    ds = load_hetero_dir(path, feature_part, feature_parts);
    if (add_inverse_edges) add_reverse_relations(ds);
  } else if (looks_like_ogb_hetero(path)) {
    ds = import_ogb_hetero(path, options);
  } else {
    DGNN_CHECK_ARG(std::filesystem::exists(path + "/nodes.csv"), "path", path,
                   " is not a heterogeneous dataset directory, OGB heterogeneous raw layout or "
                   "directory of typed CSV edge lists (nodes.csv); see docs/formats.md");
    ds = import_hetero_csv(path, options);
  }
  return as_fields(ds);
}

// A heterogeneous source load_hetero reads (convert's test, apps/cmd_convert.cc).
bool is_hetero(c10::string_view path_in) {
  namespace fs = std::filesystem;
  const std::string path(path_in);
  if (!fs::is_directory(path)) return false;
  return is_hetero_dir(path) || looks_like_ogb_hetero(path) ||
         (!fs::exists(path + "/meta.json") && fs::exists(path + "/nodes.csv"));
}

// feat_dim and num_classes 0 take the shape's defaults.
HeteroFields mag(double scale, int64_t seed, int64_t feat_dim, int64_t num_classes,
                 c10::string_view shape_in) {
  const std::string shape(shape_in);
  DGNN_CHECK_ARG(shape == "ogbn-mag" || shape == "mag240m", "shape", "'", shape,
                 "': use ogbn-mag or mag240m");
  MagOptions o = mag_shape_defaults(shape == "mag240m" ? MagShape::kMag240m : MagShape::kOgbnMag);
  o.scale = scale;
  o.seed = static_cast<uint64_t>(seed);
  if (feat_dim != 0) o.feat_dim = feat_dim;
  if (num_classes != 0) o.num_classes = num_classes;
  check_mag_options(o);
  return as_fields(generate_mag(o));
}

// The sample as Python reads it: input nodes per type; then per block (outermost first)
// num_src and num_dst per type, and indptr and indices per relation, flattened block by block.
using HeteroSampleResult =
    std::tuple<std::vector<at::Tensor>, std::vector<int64_t>, std::vector<int64_t>,
               std::vector<at::Tensor>, std::vector<at::Tensor>>;

HeteroSampleResult as_sample(const HeteroMiniBatch& batch) {
  HeteroSampleResult out;
  std::get<0>(out) = batch.input_nodes;
  for (const HeteroBlock& block : batch.blocks) {
    auto& [nodes, num_src, num_dst, indptrs, indices] = out;
    num_src.insert(num_src.end(), block.num_src.begin(), block.num_src.end());
    num_dst.insert(num_dst.end(), block.num_dst.begin(), block.num_dst.end());
    for (const Block& b : block.relations) {
      indptrs.push_back(b.indptr);
      indices.push_back(b.indices);
    }
  }
  return out;
}

int type_arg(const HeteroDataset& ds, int64_t type) {
  DGNN_CHECK_INDEX(type >= 0 && type < static_cast<int64_t>(ds.node_types.size()),
                   "node type index ", type, " is out of range for ", ds.node_types.size(),
                   " node types");
  return static_cast<int>(type);
}

// torch.classes.directgnn.HeteroSampler: typed blocks, each layer drawn anew (DGL's).
class HeteroSamplerHolder : public torch::CustomClassHolder {
 public:
  HeteroSamplerHolder(c10::intrusive_ptr<HeteroGraphHolder> graph,
                      std::vector<std::vector<int64_t>> fanouts)
      : graph_(std::move(graph)),
        sampler_(graph_->dataset(),
                 {checked_hetero_fanouts(graph_->dataset(), fanouts, "directgnn.HeteroSampler")}) {}

  HeteroSampleResult sample(int64_t seed_type, const at::Tensor& seeds, int64_t seed) const {
    const int type = type_arg(graph_->dataset(), seed_type);
    return as_sample(sampler_.sample(type, seeds.cpu(), static_cast<uint64_t>(seed)));
  }

 private:
  c10::intrusive_ptr<HeteroGraphHolder> graph_;
  HeteroSampler sampler_;
};

// seeds, x per node type (None when featureless), the seeds' labels, the sample.
using HeteroLoaderBatch = std::tuple<at::Tensor, c10::List<std::optional<at::Tensor>>,
                                     std::optional<at::Tensor>, HeteroSampleResult>;

// torch.classes.directgnn.HeteroLoader: loader/hetero_loader.h over the graph's target type.
class HeteroLoaderHolder : public torch::CustomClassHolder {
 public:
  HeteroLoaderHolder(c10::intrusive_ptr<HeteroGraphHolder> graph,
                     std::vector<std::vector<int64_t>> fanouts, int64_t batch_size,
                     int64_t prefetch, int64_t workers, c10::Dict<std::string, std::string> choices,
                     bool disk_direct, double feature_cache_gib)
      : graph_(std::move(graph)) {
    const HeteroDataset& ds = graph_->dataset();
    DGNN_CHECK_ARG(ds.target_type >= 0, "data",
                   "has no target node type; the loader's seeds are nodes of the labelled type");
    // As the command line's flags are set (train/run_options.h); prefetch -1 is auto.
    const LoaderNumbers numbers{{}, batch_size, prefetch, workers, disk_direct, feature_cache_gib};
    const LoaderSettings settings =
        resolve_hetero_loader(loader_options_arg(choices, numbers, RunKind::kHetero), ds);
    note_ = settings.note;
    loader_ = std::make_unique<HeteroLoader>(
        ds, HeteroSamplerOptions{checked_hetero_fanouts(ds, fanouts, "fanouts")}, settings);
  }

  // Ranks and fills the shared cache of the types on disk by one pass over `seeds` (in this
  // order; batch i drawn with a seed mixed from `seed` and i); the header's line, or "".
  std::string fill_cache(const at::Tensor& seeds, int64_t seed, bool show_progress) {
    const LoaderSettings& s = loader_->settings();
    if (s.cache.gib <= 0) return "";
    passes_.clear();
    const HeteroDataset& ds = graph_->dataset();
    const at::Tensor order = seeds.cpu().to(at::kLong).contiguous();
    check_seeds(order, ds.target().count);
    return fill_hetero_feature_cache(loader_->mutable_stores(), ds,
                                     loader_->presample(order, static_cast<uint64_t>(seed)),
                                     s.cache, show_progress);
  }

  // Where each type's table lives and how it is gathered.
  std::string placements() const { return loader_->stores().description(); }
  std::string device() const { return loader_->settings().device.str(); }
  std::string note() const { return note_; }
  ~HeteroLoaderHolder() override { passes_.clear(); }

  // Starts a pass over `seeds` (target-type ids, in this order); batch i draws with a seed
  // mixed from `seed` and i.
  int64_t start(const at::Tensor& seeds, int64_t seed) {
    DGNN_CHECK_TYPE(
        seeds.dim() == 1 && (seeds.scalar_type() == at::kLong || seeds.scalar_type() == at::kInt),
        "directgnn.HeteroLoader: seeds must be a 1-D int64 or int32 tensor");
    const at::Tensor order = seeds.cpu().to(at::kLong).contiguous();
    check_seeds(order, graph_->dataset().target().count);
    const auto base = static_cast<uint64_t>(seed);
    return passes_.add(loader_->epoch(
        order, [base](int64_t step) { return mix64(base, 0x4e7, static_cast<uint64_t>(step)); }));
  }

  bool has_next(int64_t pass) const { return passes_.has_next(pass); }

  HeteroLoaderBatch next(int64_t pass) {
    const auto epoch = passes_.get(pass);
    DGNN_CHECK(epoch != nullptr && !epoch->done(),
               "directgnn.HeteroLoader: no minibatch left in this pass; start another");
    const HeteroBatch b = epoch->next();
    c10::List<std::optional<at::Tensor>> x;
    for (const at::Tensor& rows : b.x) {
      x.push_back(rows.defined() ? std::optional<at::Tensor>(rows) : std::nullopt);
    }
    std::optional<at::Tensor> labels;
    if (b.labels.defined()) labels = b.labels;
    return {b.sample.seeds, x, labels, as_sample(b.sample)};
  }

  void finish(int64_t pass) { passes_.finish(pass); }
  int64_t steps(int64_t num_seeds) const { return loader_->steps(num_seeds); }

  // Shards the featured types' tables over `group`'s ranks (a partitioned dataset, one part per
  // rank): each type's rows come over an exchange of its own, on a group made over `group`'s
  // store on the wire's backend; `steps`, this rank's minibatches per pass, must be every rank's.
  void shard(const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t timeout_s, int64_t steps,
             const std::string& wire_name) {
    const HeteroDataset& ds = graph_->dataset();
    DGNN_CHECK(ds.parts() > 0 && exchanges_.empty(),
               "directgnn.HeteroLoader: shard() is for a sharded loader, once");
    const int rank = group->getRank(), size = group->getSize();
    DGNN_CHECK_ARG(ds.parts() == size, "data", "the dataset has ", ds.parts(),
                   " parts and the process group ", size,
                   " ranks; partition it with one part per rank");
    for (const NodeType& t : ds.node_types) {
      DGNN_CHECK_ARG(t.feature_part < 0 || t.feature_part == rank, "data", "holds part ",
                     t.feature_part, "'s rows of node type '", t.name, "', but this is rank ", rank,
                     "; load it with shard=True on every rank");
    }
    const auto timeout = std::chrono::seconds(timeout_s);
    const std::string tag = loader_group_tag("hetero-loader");
    const char* who = "directgnn.HeteroLoader";
    const LoaderSettings& settings = loader_->stores().settings();
    const ExchangeWire wire = parse_exchange_wire(wire_name, settings, who);
    check_equal_steps(*wire_group(group, tag, timeout, wire), steps, who);
    exchanges_ = hetero_part_exchanges(ds, rank, loader_->stores(), [&](const std::string& type) {
      return wire_group(group, tag + "-" + type, timeout, wire);
    });
    for (size_t t = 0; wire.gpu && t < exchanges_.size(); ++t) {
      if (exchanges_[t] != nullptr) {
        exchanges_[t]->on_device(settings.device, loader_->stores().gather_options(t));
      }
    }
    loader_->mutable_stores().use_exchanges(exchanges_);
  }

  // What the exchanges moved since the last call, every type's summed.
  c10::Dict<std::string, double> exchange_counts() {
    ExchangeCounts total;
    for (const auto& e : exchanges_) {
      if (e == nullptr) continue;
      const ExchangeCounts c = e->counts();
      e->clear_counts();
      total.add_table(c);
    }
    return exchanges_.empty() ? c10::Dict<std::string, double>() : counts_dict(total);
  }

 private:
  c10::intrusive_ptr<HeteroGraphHolder> graph_;
  std::unique_ptr<HeteroLoader> loader_;
  std::vector<std::shared_ptr<FeatureExchange>> exchanges_;  // sharded: per type
  Passes<HeteroLoader::Epoch> passes_;
  std::string note_;
};

}  // namespace

namespace {

std::string partition_text(const HeteroDataset& ds) {
  if (ds.parts() == 0) return "";
  nlohmann::json offsets = nlohmann::json::object();
  for (const NodeType& t : ds.node_types) offsets[t.name] = t.partition.offsets;
  int64_t held = -1;  // the part whose rows the tables stored by part hold
  for (const NodeType& t : ds.node_types) held = std::max(held, t.feature_part);
  return nlohmann::json{{"method", ds.node_types[0].partition.method},
                        {"parts", ds.parts()},
                        {"offsets", offsets},
                        {"feature_part", held}}
      .dump();
}

// A partition's JSON (partition_text) set on `ds`'s types, checked as meta.json's books are.
void set_partition(HeteroDataset& ds, const std::string& text, const std::string& where) {
  if (text.empty()) return;
  const nlohmann::json book = nlohmann::json::parse(text, nullptr, false);
  DGNN_CHECK_ARG(book.is_object() && book.contains("offsets") && book["offsets"].is_object(),
                 "partition", where, ": must be a JSON object with offsets per node type");
  const int64_t part = book.value("feature_part", int64_t{-1});
  for (NodeType& t : ds.node_types) {
    DGNN_CHECK_ARG(book["offsets"].contains(t.name), "partition", where,
                   ": gives no offsets for node type '", t.name, "'");
    t.partition.method = book.value("method", std::string("random"));
    t.partition.offsets = book["offsets"][t.name].get<std::vector<int64_t>>();
    // A type's table holds its part's rows only when the dataset was loaded so.
    t.feature_part = t.has_features() && t.features.size(0) != t.count ? part : -1;
  }
}

}  // namespace

HeteroGraphHolder::HeteroGraphHolder(
    std::string name, std::vector<std::string> types, std::vector<int64_t> counts,
    c10::List<std::optional<at::Tensor>> features, std::vector<std::string> relations,
    std::vector<at::Tensor> indptrs, std::vector<at::Tensor> indices, std::string target,
    std::optional<at::Tensor> labels, int64_t num_classes, std::vector<std::string> class_names,
    std::vector<at::Tensor> train, std::vector<at::Tensor> val, std::vector<at::Tensor> test,
    std::vector<std::string> feature_files, bool features_checked, const std::string& partition) {
  const std::string where = "directgnn.HeteroDataset '" + name + "'";
  dataset_.name = std::move(name);
  dataset_.source = where;
  add_types(dataset_, types, counts, features);
  set_partition(dataset_, partition, where);
  DGNN_CHECK_ARG(feature_files.empty() || feature_files.size() == types.size(), "features_path",
                 "needs a file name (or \"\") per node type; got ", feature_files.size(), " for ",
                 types.size(), " types");
  for (size_t t = 0; t < feature_files.size(); ++t) {
    DGNN_CHECK_ARG(feature_files[t].empty() || dataset_.node_types[t].has_features(),
                   "features_path", "names ", feature_files[t], " for node type '", types[t],
                   "', which has no features");
    dataset_.node_types[t].features_path = feature_files[t];
  }
  add_relations(dataset_, relations, indptrs, indices);
  if (!target.empty()) dataset_.target_type = dataset_.type_index(target, where + " (target)");
  if (labels) dataset_.labels = labels->cpu();
  dataset_.num_classes = num_classes;
  dataset_.class_names = std::move(class_names);
  DGNN_CHECK_ARG(train.size() == val.size() && val.size() == test.size(), "splits",
                 "need as many train, val and test id arrays");
  for (size_t k = 0; k < train.size(); ++k) {
    dataset_.splits.push_back({train[k].cpu(), val[k].cpu(), test[k].cpu()});
  }
  validate_hetero(dataset_, where, features_checked);
}

void HeteroGraphHolder::save(const std::string& out) const { save_hetero_dir(dataset_, out); }

HeteroFields as_fields(const HeteroDataset& ds) {
  HeteroFields f;
  auto& [name, types, counts, features, relations, indptrs, indices, target, labels, num_classes,
         class_names, train, val, test, files, node_ids, partition] = f;
  name = ds.name;
  for (const NodeType& t : ds.node_types) {
    types.push_back(t.name);
    counts.push_back(t.count);
    features.push_back(t.has_features() ? std::optional<at::Tensor>(t.features) : std::nullopt);
  }
  for (const Relation& r : ds.relations) {
    relations.push_back(r.key());
    indptrs.push_back(r.graph.indptr);
    indices.push_back(r.graph.indices);
  }
  if (ds.target_type >= 0) target = ds.target().name;
  if (ds.labels.defined()) labels = ds.labels;
  num_classes = ds.num_classes;
  class_names = ds.class_names;
  for (const Split& s : ds.splits) {
    train.push_back(s.train);
    val.push_back(s.val);
    test.push_back(s.test);
  }
  for (const NodeType& t : ds.node_types) {
    files.push_back(t.features_path);
    node_ids.push_back(t.node_ids.defined() ? std::optional<at::Tensor>(t.node_ids) : std::nullopt);
  }
  partition = partition_text(ds);
  return f;
}

namespace {

// The seeded link split of `train --task link --target-relation` on `graph`: the
// message-passing graph's CSR per relation (indptrs, indices, in the dataset's order), then the
// split (train, val, test positives[, val_neg, test_neg]) as (source id, destination id) pairs.
std::tuple<std::vector<at::Tensor>, std::vector<at::Tensor>, std::vector<at::Tensor>>
hetero_link_split(const c10::intrusive_ptr<HeteroGraphHolder>& graph, c10::string_view relation,
                  double val, double test, int64_t neg_per_source, int64_t seed) {
  const HeteroDataset& ds = graph->dataset();
  const HeteroLinkTarget target =
      find_link_target(ds, std::string(relation), "directgnn.HeteroDataset.random_link_split");
  LinkSplitOptions options;
  options.val = val;
  options.test = test;
  options.neg_per_source = neg_per_source;
  options.seed = static_cast<uint64_t>(seed);
  check_link_split_options(options);
  const HeteroLinkSplit out = random_hetero_link_split(ds, target, options);
  std::vector<at::Tensor> indptrs, indices;
  for (const Relation& r : out.graph.relations) {
    indptrs.push_back(r.graph.indptr);
    indices.push_back(r.graph.indices);
  }
  std::vector<at::Tensor> link{out.split.train, out.split.val, out.split.test};
  if (out.split.negatives != LinkNegatives::kNone) {
    link.push_back(out.split.val_neg);
    link.push_back(out.split.test_neg);
  }
  return {indptrs, indices, link};
}

}  // namespace

std::vector<std::vector<int64_t>> checked_hetero_fanouts(
    const HeteroDataset& ds, const std::vector<std::vector<int64_t>>& fanouts,
    const std::string& where) {
  DGNN_CHECK_ARG(fanouts.size() == ds.relations.size(), "fanouts", where, " needs fan-outs for ",
                 ds.relations.size(), " relations, got ", fanouts.size());
  for (size_t r = 0; r < fanouts.size(); ++r) {
    const std::vector<int64_t>& f = fanouts[r];
    DGNN_CHECK_ARG(!f.empty() && f.size() == fanouts[0].size(), "fanouts", where, ": relation ",
                   ds.relations[r].key(), " has ", f.size(),
                   " fan-outs; give every relation one per hop (", fanouts[0].size(), ")");
    for (const int64_t k : f) {
      DGNN_CHECK_ARG(k >= -1, "fanouts", where, ": relation ", ds.relations[r].key(),
                     " has fan-out ", k,
                     "; use a positive count, -1 (every neighbour) or 0 (none)");
    }
  }
  return fanouts;
}

}  // namespace directgnn::ops

TORCH_LIBRARY_FRAGMENT(directgnn, m) {
  using namespace directgnn::ops;  // NOLINT: registration reads as a table
  const std::string fields =
      " -> (str, str[], int[], Tensor?[], str[], Tensor[], Tensor[], str, Tensor?, int, str[], "
      "Tensor[], Tensor[], Tensor[], str[], Tensor?[], str)";
  m.def(("load_hetero(str path, bool add_inverse_edges=False, int feature_part=-1, "
         "int feature_parts=0)" +
         fields)
            .c_str(),
        guarded<&load>);
  m.def("is_hetero(str path) -> bool", guarded<&is_hetero>);
  m.def(("mag_dataset(float scale, int seed, int feat_dim, int num_classes, str shape)" + fields)
            .c_str(),
        guarded<&mag>);
  m.class_<HeteroGraphHolder>("HeteroGraph")
      .def(guarded_init<HeteroGraphHolder, std::string, std::vector<std::string>,
                        std::vector<int64_t>, c10::List<std::optional<at::Tensor>>,
                        std::vector<std::string>, std::vector<at::Tensor>, std::vector<at::Tensor>,
                        std::string, std::optional<at::Tensor>, int64_t, std::vector<std::string>,
                        std::vector<at::Tensor>, std::vector<at::Tensor>, std::vector<at::Tensor>,
                        std::vector<std::string>, bool, std::string>())
      .def("save", [](const c10::intrusive_ptr<HeteroGraphHolder>& self, std::string out) {
        translating([&] { self->save(out); });
      });
  // After the class, which its schema names.
  m.def(
      "random_hetero_link_split(__torch__.torch.classes.directgnn.HeteroGraph graph, "
      "str relation, float val, float test, int neg_per_source, int seed) "
      "-> (Tensor[], Tensor[], Tensor[])",
      guarded<&hetero_link_split>);
  m.class_<HeteroSamplerHolder>("HeteroSampler")
      .def(guarded_init<HeteroSamplerHolder, c10::intrusive_ptr<HeteroGraphHolder>,
                        std::vector<std::vector<int64_t>>>())
      .def("sample", guarded<&HeteroSamplerHolder::sample>);
  m.class_<HeteroLoaderHolder>("HeteroLoader")
      .def(guarded_init<HeteroLoaderHolder, c10::intrusive_ptr<HeteroGraphHolder>,
                        std::vector<std::vector<int64_t>>, int64_t, int64_t, int64_t,
                        c10::Dict<std::string, std::string>, bool, double>())
      .def("fill_cache", guarded<&HeteroLoaderHolder::fill_cache>)
      .def("placements", guarded<&HeteroLoaderHolder::placements>)
      .def("device", guarded<&HeteroLoaderHolder::device>)
      .def("note", guarded<&HeteroLoaderHolder::note>)
      .def("start", guarded<&HeteroLoaderHolder::start>)
      .def("has_next", guarded<&HeteroLoaderHolder::has_next>)
      .def("next", guarded<&HeteroLoaderHolder::next>)
      .def("finish", guarded<&HeteroLoaderHolder::finish>)
      .def("steps", guarded<&HeteroLoaderHolder::steps>)
      .def("shard", guarded<&HeteroLoaderHolder::shard>)
      .def("exchange_counts", guarded<&HeteroLoaderHolder::exchange_counts>);
  define_hetero_pyg(m);
}
