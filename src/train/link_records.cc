// The link trainer's records: metrics, options and reports as JSON, and back.
#include <cmath>
#include <utility>

#include "directgnn/error.h"
#include "train/link_trainer.h"

namespace directgnn {

std::string primary_link_metric(LinkNegatives layout) {
  return layout == LinkNegatives::kPerSource ? "mrr" : "roc_auc";
}

nlohmann::json metrics_json(const LinkMetrics& m) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] :
       {std::pair{"roc_auc", m.roc_auc}, {"ap", m.ap}, {"hits", m.hits}, {"mrr", m.mrr}}) {
    if (!std::isnan(value)) out[name] = value;
  }
  return out;
}

LinkMetrics metrics_from_json(const nlohmann::json& j) {
  LinkMetrics m;
  for (const auto& [name, value] :
       {std::pair{"roc_auc", &m.roc_auc}, {"ap", &m.ap}, {"hits", &m.hits}, {"mrr", &m.mrr}}) {
    if (j.contains(name)) *value = j.at(name).get<double>();
  }
  return m;
}

double primary_value(const LinkMetrics& m, LinkNegatives layout) {
  return layout == LinkNegatives::kPerSource ? m.mrr : m.roc_auc;
}

nlohmann::json link_options_json(const LinkTrainOptions& o) {
  return {{"decoder", decoder_kind_name(o.decoder)},
          {"decoder_layers", o.decoder_layers},
          {"neg_sampling", negative_mode_name(o.sampling.mode)},
          {"neg_ratio", o.sampling.neg_ratio},
          {"neg_dist", negative_dist_name(o.sampling.dist)},
          {"exact_negatives", o.sampling.exact_negatives},
          {"exclude_seed_edges", o.sampling.exclude_seed_edges},
          {"hits_k", o.hits_k},
          {"use_val_edges", o.use_val_edges},
          {"steps_per_epoch", o.steps_per_epoch}};
}

LinkTrainOptions link_options_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    LinkTrainOptions o;
    o.decoder = parse_decoder_kind(j.at("decoder").get<std::string>());
    o.decoder_layers = j.at("decoder_layers").get<int64_t>();
    o.sampling.mode = parse_negative_mode(j.at("neg_sampling").get<std::string>());
    o.sampling.neg_ratio = j.at("neg_ratio").get<int64_t>();
    o.sampling.dist = parse_negative_dist(j.at("neg_dist").get<std::string>());
    o.sampling.exact_negatives = j.at("exact_negatives").get<bool>();
    o.sampling.exclude_seed_edges = j.at("exclude_seed_edges").get<bool>();
    o.hits_k = j.at("hits_k").get<int64_t>();
    o.use_val_edges = j.at("use_val_edges").get<bool>();
    o.steps_per_epoch = j.value("steps_per_epoch", int64_t{0});  // absent before it existed
    return o;
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": the link options are incomplete or mistyped: ", e.what());
  }
}

nlohmann::json LinkTrainReport::to_json() const {
  return {{"task", "link"},
          {"best_epoch", best_epoch},
          {"primary_metric", primary_metric},
          {"val", metrics_json(best_val)},
          {"test", metrics_json(test)},
          {"epochs", epochs},
          {"steps_per_epoch", steps_per_epoch},
          {"epoch_time_s", epoch_time_s},
          {"sample_s", sample_s},
          {"gather_s", gather_s},
          {"compute_s", compute_s},
          {"wait_s", wait_s},
          {"eval_time_s", eval_s},
          {"device", device},
          {"mode", mode},
          {"split", split_description},
          {"param_digest", param_digest}};
}

}  // namespace directgnn
