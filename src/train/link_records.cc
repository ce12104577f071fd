// The link trainer's records: metrics, options and reports as JSON, and back.
#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "core/random.h"
#include "directgnn/error.h"
#include "train/link_trainer.h"

namespace directgnn {

// " | Val AUC 0.9012 | Val AP 0.8977 | Val Hits@50 0.4120" (the metrics the layout gives).
std::string link_metrics_text(const char* split, const LinkMetrics& m, int64_t k) {
  std::string out;
  char part[64];
  for (const auto& [name, value] : {std::pair<std::string, double>{"AUC", m.roc_auc},
                                    {"AP", m.ap},
                                    {"MRR", m.mrr},
                                    {"Hits@" + std::to_string(k), m.hits}}) {
    if (std::isnan(value)) continue;
    std::snprintf(part, sizeof(part), " | %s %s %.4f", split, name.c_str(), value);
    out += part;
  }
  return out;
}

at::Tensor shuffled_rows(const at::Tensor& rows, uint64_t seed) {
  at::Tensor order = at::arange(rows.size(0), at::kLong);
  seeded_shuffle(order.data_ptr<int64_t>(), order.numel(), seed);
  return rows.index_select(0, order);
}

Evaluation link_evaluation(const LinkEvalResult& r, LinkNegatives layout, int64_t hits_k) {
  Evaluation e;
  e.metrics = {{"val", metrics_json(r.val)}, {"test", metrics_json(r.test)}};
  e.record = e.metrics;
  e.value = primary_value(r.val, layout);
  e.text = link_metrics_text("Val", r.val, hits_k) + link_metrics_text("Test", r.test, hits_k);
  return e;
}

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
