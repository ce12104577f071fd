#include "train/run_options.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

#include "directgnn/error.h"

namespace directgnn {
namespace {

using json = nlohmann::json;

// The kinds an option applies to, as bits.
enum Kinds : unsigned {
  kNodeRun = 1,
  kLinkRun = 2,
  kHeteroRun = 4,
  kHeteroLinkRun = 8,
  kHomogeneous = kNodeRun | kLinkRun,
  kHeteroAll = kHeteroRun | kHeteroLinkRun,
  kLinkAll = kLinkRun | kHeteroLinkRun,
  kAll = kHomogeneous | kHeteroAll,
};

unsigned bit(RunKind kind) { return 1u << static_cast<unsigned>(kind); }

struct Spec {
  const char* name;
  unsigned kinds;
  OnResume resume;
  std::function<json(const TrainOptions&)> get;
  std::function<void(TrainOptions&, const json&)> set;
};

// --- values, from JSON or from the text a command line gives ------------------------------

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return v.dump();  // a choice such as prefetch's depth
  fail("'", v.dump(), "' is not text");
}

template <typename T>
T number_of(const json& v) {
  if (v.is_number_integer() || (v.is_number() && !std::is_integral_v<T>)) return v.get<T>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    size_t used = 0;
    T value{};
    try {
      if constexpr (std::is_integral_v<T>) {
        value = static_cast<T>(std::stoll(s, &used));
      } else {
        value = static_cast<T>(std::stod(s, &used));
      }
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == s.size() && !s.empty()) return value;
  }
  fail("'", v.is_string() ? v.get<std::string>() : v.dump(), "' is not ",
       std::is_integral_v<T> ? "an integer" : "a number");
}

bool flag_of(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string() && (v == "true" || v == "false")) return v == "true";
  fail("'", v.dump(), "' is not true or false");
}

// Fan-outs as text, each checked (their count is checked against the layers when a run starts,
// which may be set after them).
std::vector<int64_t> fanouts_of(const json& v) {
  const std::string text = text_of(v);
  if (text.empty()) return {};
  const auto count = static_cast<int64_t>(std::count(text.begin(), text.end(), ',') + 1);
  return parse_fanouts(text, count);
}

// --- the table's entries --------------------------------------------------------------------

template <typename T, typename At>
Spec number(const char* name, unsigned kinds, OnResume resume, At at) {
  return {name, kinds, resume,
          [at](const TrainOptions& o) { return json(at(const_cast<TrainOptions&>(o))); },
          [at](TrainOptions& o, const json& v) { at(o) = number_of<T>(v); }};
}

template <typename At>
Spec boolean(const char* name, unsigned kinds, OnResume resume, At at, bool negated = false) {
  return {name, kinds, resume,
          [at, negated](const TrainOptions& o) {
            return json(at(const_cast<TrainOptions&>(o)) != negated);
          },
          [at, negated](TrainOptions& o, const json& v) { at(o) = flag_of(v) != negated; }};
}

// A choice: `parse` reads its text, `name_of` writes it.
template <typename At, typename Parse, typename Name>
Spec choice(const char* name, unsigned kinds, OnResume resume, At at, Parse parse, Name name_of) {
  return {name, kinds, resume,
          [at, name_of](const TrainOptions& o) {
            return json(std::string(name_of(at(const_cast<TrainOptions&>(o)))));
          },
          [at, parse](TrainOptions& o, const json& v) { at(o) = parse(text_of(v)); }};
}

#define DGNN_AT(expr) \
  [](TrainOptions & o) -> auto& { return o.expr; }

std::string prefetch_name(const std::optional<int>& p) {
  return p ? std::to_string(*p) : std::string("auto");
}

HeteroModelKind hetero_model_of(const std::string& name) {
  // The command line's default model is sage, which is hsage on a heterogeneous graph.
  return parse_hetero_model_kind(name == "sage" ? "hsage" : name);
}

// "TRAIN,VAL,TEST" as --link-split takes it (VAL and TEST are what the split keeps).
std::string link_fractions_text(const LinkSplitOptions& s) {
  char text[96];
  std::snprintf(text, sizeof(text), "%g,%g,%g", 1 - s.val - s.test, s.val, s.test);
  return text;
}

const std::vector<Spec>& table() {
  using R = OnResume;
  static const std::vector<Spec> specs = {
      // The model.
      choice("model", kHomogeneous, R::kKeep, DGNN_AT(model.kind), parse_model_kind,
             model_kind_name),
      choice("model", kHeteroAll, R::kKeep, DGNN_AT(hetero.model), hetero_model_of,
             hetero_model_kind_name),
      number<int64_t>("layers", kAll, R::kKeep, DGNN_AT(model.layers)),
      number<int64_t>("hidden", kAll, R::kKeep, DGNN_AT(model.hidden)),
      number<double>("dropout", kAll, R::kKeep, DGNN_AT(model.dropout)),
      choice("norm", kAll, R::kKeep, DGNN_AT(model.norm), parse_norm, norm_name),
      boolean("residual", kAll, R::kKeep, DGNN_AT(model.residual)),
      number<int64_t>("heads", kAll, R::kKeep, DGNN_AT(model.heads)),
      number<double>("attn_dropout", kAll, R::kKeep, DGNN_AT(model.attn_dropout)),
      number<int64_t>("bases", kHeteroAll, R::kKeep, DGNN_AT(hetero.bases)),
      number<int64_t>("node_embeddings", kHeteroAll, R::kKeep, DGNN_AT(hetero.embeddings.dim)),
      choice("embedding_optimizer", kHeteroAll, R::kKeep, DGNN_AT(hetero.embeddings.optimizer),
             parse_sparse_optimizer, sparse_optimizer_name),
      number<double>("embedding_lr", kHeteroAll, R::kKeep, DGNN_AT(hetero.embeddings.lr)),
      number<double>("embedding_weight_decay", kHeteroAll, R::kKeep,
                     DGNN_AT(hetero.embeddings.weight_decay)),
      number<int64_t>("embedding_init_hops", kHeteroAll, R::kKeep,
                      DGNN_AT(hetero.embeddings.init_hops)),
      choice("embedding_placement", kHeteroAll, R::kGivenNow, DGNN_AT(hetero.embeddings.placement),
             parse_table_placement, table_placement_name),
      // Optimisation.
      choice("optimizer", kAll, R::kKeep, DGNN_AT(optimizer), parse_optimizer, optimizer_name),
      number<double>("lr", kAll, R::kKeep, DGNN_AT(lr)),
      number<double>("weight_decay", kAll, R::kKeep, DGNN_AT(weight_decay)),
      number<int64_t>("epochs", kAll, R::kExtend, DGNN_AT(epochs)),
      number<int64_t>("eval_every", kAll, R::kKeep, DGNN_AT(eval_every)),
      number<uint64_t>("seed", kAll, R::kKeep, DGNN_AT(seed)),
      number<int64_t>("split", kAll, R::kKeep, DGNN_AT(split)),
      // The data path.
      number<int64_t>("batch_size", kAll, R::kKeep, DGNN_AT(loader.batch_size)),
      {"fan_out", kAll, R::kKeep,
       [](const TrainOptions& o) { return json(fanout_text(resolved_fanouts(o))); },
       [](TrainOptions& o, const json& v) { o.loader.fanouts = fanouts_of(v); }},
      {"fan_out_rel", kHeteroAll, R::kKeep,
       [](const TrainOptions& o) { return json(relation_fanouts_text(o.loader.relation_fanouts)); },
       [](TrainOptions& o, const json& v) {
         o.loader.relation_fanouts = parse_relation_fanouts(text_of(v));
       }},
      choice("device", kAll, R::kKeep, DGNN_AT(loader.device), parse_device, device_choice_name),
      number<double>("gpu_memory_gib", kAll, R::kGivenNow, DGNN_AT(loader.gpu_memory_gib)),
      choice("features", kAll, R::kKeep, DGNN_AT(loader.features), parse_feature_placement,
             feature_placement_name),
      {"features_per_type", kHeteroAll, R::kKeep,
       [](const TrainOptions& o) { return json(type_placements_text(o.loader.type_features)); },
       [](TrainOptions& o, const json& v) {
         o.loader.type_features = parse_type_placements(text_of(v));
       }},
      choice("gather", kAll, R::kKeep, DGNN_AT(loader.gather.method), parse_gather_method,
             gather_method_name),
      choice("sampler", kAll, R::kKeep, DGNN_AT(loader.sampler), parse_sampler, sampler_name),
      choice("graph", kAll, R::kKeep, DGNN_AT(loader.graph), parse_graph_placement,
             graph_placement_name),
      boolean("weighted_sampling", kHomogeneous, R::kKeep, DGNN_AT(loader.weighted)),
      choice("prefetch", kAll, R::kGivenNow, DGNN_AT(loader.prefetch), parse_prefetch,
             prefetch_name),
      number<int>("sampler_workers", kAll, R::kGivenNow, DGNN_AT(loader.workers)),
      choice("disk_io", kAll, R::kGivenNow, DGNN_AT(loader.disk.backend), disk::parse_backend,
             disk::backend_name),
      boolean("disk_direct", kAll, R::kGivenNow, DGNN_AT(loader.disk.direct)),
      number<double>("feature_cache_gib", kAll, R::kGivenNow, DGNN_AT(loader.cache.gib)),
      choice("feature_cache_rank", kAll, R::kGivenNow, DGNN_AT(loader.cache.ranking),
             disk::parse_cache_ranking, disk::cache_ranking_name),
      choice("feature_cache_policy", kAll, R::kGivenNow, DGNN_AT(loader.cache.policy),
             disk::parse_cache_policy, disk::cache_policy_name),
      number<int>("lookahead_batches", kAll, R::kGivenNow, DGNN_AT(loader.cache.lookahead_batches)),
      choice("shard_features", kAll, R::kKeep, DGNN_AT(shard_features), parse_feature_sharding,
             feature_sharding_name),
      choice("shard_structure", kNodeRun, R::kKeep, DGNN_AT(shard_structure),
             parse_structure_sharding, feature_sharding_name),
      choice("seed_assignment", kAll, R::kKeep, DGNN_AT(seed_assignment), parse_seed_assignment,
             seed_assignment_name),
      number<double>("remote_cache_gib", kAll, R::kGivenNow, DGNN_AT(remote_cache_gib)),
      choice("exchange_device", kAll, R::kGivenNow, DGNN_AT(exchange_device), parse_exchange_device,
             exchange_device_name),
      // Link prediction.
      choice("decoder", kLinkAll, R::kKeep, DGNN_AT(link.decoder), parse_decoder_kind,
             decoder_kind_name),
      number<int64_t>("decoder_layers", kLinkAll, R::kKeep, DGNN_AT(link.decoder_layers)),
      choice("neg_sampling", kLinkAll, R::kKeep, DGNN_AT(link.sampling.mode), parse_negative_mode,
             negative_mode_name),
      number<int64_t>("neg_ratio", kLinkAll, R::kKeep, DGNN_AT(link.sampling.neg_ratio)),
      choice("neg_dist", kLinkAll, R::kKeep, DGNN_AT(link.sampling.dist), parse_negative_dist,
             negative_dist_name),
      boolean("exact_negatives", kLinkAll, R::kKeep, DGNN_AT(link.sampling.exact_negatives)),
      boolean("keep_seed_edges", kLinkAll, R::kKeep, DGNN_AT(link.sampling.exclude_seed_edges),
              /*negated=*/true),
      number<int64_t>("hits_k", kLinkAll, R::kKeep, DGNN_AT(link.hits_k)),
      boolean("use_val_edges", kLinkRun, R::kKeep, DGNN_AT(link.use_val_edges)),
      number<int64_t>("steps_per_epoch", kLinkAll, R::kKeep, DGNN_AT(link.steps_per_epoch)),
      boolean("no_eval", kAll, R::kKeep, DGNN_AT(evaluate), /*negated=*/true),
      boolean("eval_sampled", kHeteroRun, R::kKeep, DGNN_AT(eval_sampled)),
      {"target_relation", kHeteroLinkRun, R::kKeep,
       [](const TrainOptions& o) { return json(o.link.relation); },
       [](TrainOptions& o, const json& v) { o.link.relation = text_of(v); }},
      {"link_split", kHeteroLinkRun, R::kKeep,
       [](const TrainOptions& o) { return json(link_fractions_text(o.link.split)); },
       [](TrainOptions& o, const json& v) {
         const LinkSplitOptions s = parse_link_fractions(text_of(v));
         o.link.split.val = s.val;
         o.link.split.test = s.test;
       }},
      number<int64_t>("eval_negatives", kHeteroLinkRun, R::kKeep,
                      DGNN_AT(link.split.neg_per_source)),
  };
  return specs;
}

#undef DGNN_AT

const Spec* find(RunKind kind, const std::string& name) {
  for (const Spec& s : table()) {
    if (name == s.name && (s.kinds & bit(kind)) != 0) return &s;
  }
  return nullptr;
}

// Which runs take an option that `kind` does not, in words for an error.
std::string kinds_text(unsigned kinds) {
  if (kinds == kLinkAll) return "link prediction";
  if (kinds == kHeteroAll) return "heterogeneous graphs (and learnable node embeddings)";
  if (kinds == kHeteroLinkRun) return "link prediction on heterogeneous graphs";
  if (kinds == kHomogeneous) return "homogeneous graphs (not yet heterogeneous ones)";
  if (kinds == kLinkRun) return "link prediction on homogeneous graphs";
  if (kinds == kHeteroRun) return "node classification on heterogeneous graphs";
  return "other runs";
}

}  // namespace

// The kinds of run, each with the defaults in which it differs from TrainOptions' (as option
// values). Link prediction scores pairs with the MLP decoder: on Cora, mean test ROC-AUC 0.952
// over seeds 0-2 against 0.861 with the dot product (docs/link-prediction.md, "Quality"); on
// mag:0.05's author-writes-paper after 3 epochs, 0.815 and 0.839 against 0.809 and 0.813
// (seeds 0, 1; docs/results/link-defaults-2026-11-28/het-*.log).
struct KindRegistration {
  RunKind kind;
  const char* name;
  const char* defaults;  // JSON {name: value}
};
constexpr KindRegistration kKindRegistrations[] = {
    {RunKind::kNode, "node", "{}"},
    {RunKind::kLink, "link", R"({"decoder": "mlp"})"},
    {RunKind::kHetero, "hetero", "{}"},
    {RunKind::kHeteroLink, "hetero_link", R"({"decoder": "mlp"})"},
};

const char* run_kind_name(RunKind kind) {
  for (const KindRegistration& k : kKindRegistrations) {
    if (k.kind == kind) return k.name;
  }
  return "node";
}

RunKind parse_run_kind(const std::string& name) {
  for (const KindRegistration& k : kKindRegistrations) {
    if (name == k.name) return k.kind;
  }
  fail_argument("task", "'", name, "' is not a kind of run (node, link, hetero, hetero_link)");
}

RunKind run_kind(bool link, bool hetero) {
  if (hetero) return link ? RunKind::kHeteroLink : RunKind::kHetero;
  return link ? RunKind::kLink : RunKind::kNode;
}

TrainOptions default_options(RunKind kind) {
  TrainOptions o;
  for (const KindRegistration& k : kKindRegistrations) {
    if (k.kind != kind) continue;
    // The parsed defaults must outlive the loop: items() refers to them.
    const json defaults = json::parse(k.defaults);
    for (const auto& [name, value] : defaults.items()) set_option(o, kind, name, value);
  }
  return o;
}

std::string hetero_refusal(const std::string& name) {
  static const std::pair<const char*, const char*> kWhy[] = {
      {"weighted_sampling",
       "the relations of a heterogeneous dataset carry no edge weights to draw neighbours by"},
  };
  for (const auto& [option, why] : kWhy) {
    if (name == option) return why;
  }
  return "";
}

bool takes_option(RunKind kind, const std::string& name) { return find(kind, name) != nullptr; }

bool is_option(const std::string& name) {
  for (const Spec& s : table()) {
    if (name == s.name) return true;
  }
  return false;
}

OnResume on_resume(const std::string& name) {
  for (const Spec& s : table()) {
    if (name == s.name) return s.resume;
  }
  fail_argument(name, "is not an option");
}

std::vector<std::string> option_names(RunKind kind) {
  std::vector<std::string> names;
  for (const Spec& s : table()) {
    if ((s.kinds & bit(kind)) != 0) names.emplace_back(s.name);
  }
  return names;
}

void set_option(TrainOptions& options, RunKind kind, const std::string& name, const json& value) {
  const Spec* spec = find(kind, name);
  if (spec == nullptr) {
    unsigned kinds = 0;
    for (const Spec& s : table()) {
      if (name == s.name) kinds |= s.kinds;
    }
    DGNN_CHECK_ARG(kinds != 0, name, "is not an option of a training run");
    const std::string why = hetero_refusal(name);
    DGNN_CHECK_ARG(!is_hetero(kind) || why.empty(), name,
                   "does not apply to heterogeneous graphs: ", why, "; leave it out");
    fail_argument(name, "applies to ", kinds_text(kinds), " only, not to ", run_kind_name(kind),
                  " runs; leave it out");
  }
  try {
    spec->set(options, value);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(name, e.detail());
  } catch (const Error& e) {
    throw InvalidArgument(name, e.what());
  }
}

TrainOptions make_options(RunKind kind, const json& values) {
  TrainOptions o = default_options(kind);
  for (const auto& [name, value] : values.items()) set_option(o, kind, name, value);
  return o;
}

json options_json(const TrainOptions& options, RunKind kind) {
  json out = json::object();
  for (const Spec& s : table()) {
    if ((s.kinds & bit(kind)) != 0) out[s.name] = s.get(options);
  }
  return out;
}

void apply_options_json(const json& j, TrainOptions& options, RunKind kind,
                        const std::string& where) {
  DGNN_CHECK(j.is_object(), where, ": the options are not a JSON object");
  for (const auto& [name, value] : j.items()) {
    try {
      set_option(options, kind, name, value);
    } catch (const InvalidArgument& e) {
      fail(where, ": option ", name, " holds a bad value (", e.detail(), ")");
    }
  }
}

RunKind checkpoint_kind(const json& meta) {
  return parse_run_kind(meta.value("task", std::string("node")));
}

TrainOptions checkpoint_options(const json& meta, RunKind kind, const std::string& where) {
  TrainOptions o = default_options(kind);
  if (meta.contains("options")) {
    apply_options_json(meta.at("options"), o, kind, where);
    return o;
  }
  // Written before the table: the seed and split at the top, a link run's options in "link"
  // (with the seed edges' exclusion, and a heterogeneous run's relation and split, by the
  // names of then).
  json old = json::object();
  for (const char* key : {"seed", "split"}) {
    if (meta.contains(key)) old[key] = meta[key];
  }
  const json link = meta.value("link", json::object());
  for (const auto& [key, value] : link.items()) {
    if (key == "exclude_seed_edges") {
      old["keep_seed_edges"] = !value.get<bool>();
    } else if (key == "relation") {
      old["target_relation"] = value;
    } else if (key == "split") {
      o.link.split.val = value.value("val", o.link.split.val);
      o.link.split.test = value.value("test", o.link.split.test);
      old["eval_negatives"] = value.value("neg_per_source", int64_t{0});
    } else if (takes_option(kind, key)) {
      old[key] = value;
    }
  }
  apply_options_json(old, o, kind, where);
  return o;
}

std::vector<ChangedOption> changed_options(const json& saved, const json& given, RunKind kind,
                                           const std::vector<std::string>& given_names) {
  std::vector<ChangedOption> out;
  for (const std::string& name : given_names) {
    const Spec* spec = find(kind, name);
    if (spec == nullptr || spec->resume != OnResume::kKeep) continue;
    const json then = saved.value(name, json()), now = given.value(name, json());
    if (then != now) out.push_back({name, then, now});
  }
  return out;
}

}  // namespace directgnn
