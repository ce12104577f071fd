#include "train/trainer.h"

#include <algorithm>
#include <cmath>

#include "directgnn/error.h"
#include "train/run_state.h"
#include "train/training_run.h"

namespace directgnn {
Optimizer parse_optimizer(const std::string& text) {
  if (text == "adam") return Optimizer::kAdam;
  if (text == "sgd") return Optimizer::kSgd;
  fail_argument("optimizer", "'", text, "' is not an optimizer; use adam or sgd");
}

std::string optimizer_name(Optimizer optimizer) {
  return optimizer == Optimizer::kAdam ? "adam" : "sgd";
}

namespace {

FeatureSharding parse_sharding(const std::string& text, const char* parameter) {
  if (text == "auto") return FeatureSharding::kAuto;
  if (text == "on") return FeatureSharding::kOn;
  if (text == "off") return FeatureSharding::kOff;
  fail_argument(parameter, "'", text, "' is not a choice; use auto, on or off");
}

}  // namespace

FeatureSharding parse_feature_sharding(const std::string& text) {
  return parse_sharding(text, "shard_features");
}

FeatureSharding parse_structure_sharding(const std::string& text) {
  return parse_sharding(text, "shard_structure");
}

std::string feature_sharding_name(FeatureSharding sharding) {
  return sharding == FeatureSharding::kAuto ? "auto"
         : sharding == FeatureSharding::kOn ? "on"
                                            : "off";
}

SeedAssignment parse_seed_assignment(const std::string& text) {
  if (text == "part") return SeedAssignment::kPart;
  if (text == "global") return SeedAssignment::kGlobal;
  fail_argument("seed_assignment", "'", text, "' is not a choice; use part or global");
}

std::string seed_assignment_name(SeedAssignment assignment) {
  return assignment == SeedAssignment::kPart ? "part" : "global";
}

ExchangeDevice parse_exchange_device(const std::string& text) {
  if (text == "auto") return ExchangeDevice::kAuto;
  if (text == "cpu") return ExchangeDevice::kCpu;
  if (text == "gpu") return ExchangeDevice::kGpu;
  fail_argument("exchange_device", "'", text, "' is not a choice; use auto, cpu or gpu");
}

std::string exchange_device_name(ExchangeDevice device) {
  return device == ExchangeDevice::kAuto ? "auto" : device == ExchangeDevice::kCpu ? "cpu" : "gpu";
}

std::vector<int64_t> resolved_fanouts(const TrainOptions& options) {
  if (!options.loader.fanouts.empty()) return options.loader.fanouts;
  return std::vector<int64_t>(static_cast<size_t>(std::max<int64_t>(0, options.model.layers)), 10);
}

nlohmann::json TrainReport::to_json() const {
  nlohmann::json out = {{"best_epoch", best_epoch},
                        {"val_acc", best_val_acc},
                        {"test_acc", test_acc},
                        {"epoch_time_s", epoch_time_s},
                        {"sample_s", sample_s},
                        {"gather_s", gather_s},
                        {"compute_s", compute_s},
                        {"wait_s", wait_s},
                        {"cpu_s", cpu_s},
                        {"eval_time_s", eval_s},
                        {"epochs", epochs},
                        {"timed_epochs", timed_epochs},
                        {"steps_per_epoch", steps_per_epoch},
                        {"seeds_per_epoch", seeds_per_epoch},
                        {"split", split_description},
                        {"param_digest", param_digest},
                        {"device", device},
                        {"mode", mode}};
  if (!std::isnan(test_roc_auc)) out["test_roc_auc"] = test_roc_auc;
  if (!test_class_acc.empty()) {
    nlohmann::json per_class = nlohmann::json::object();
    for (size_t k = 0; k < test_class_acc.size(); ++k) {
      per_class[k < class_names.size() ? class_names[k] : std::to_string(k)] =
          number_or_null(test_class_acc[k]);
    }
    out["test_acc_per_class"] = per_class;
  }
  if (disk_bytes_gathered > 0) {
    out["disk_bytes_gathered"] = disk_bytes_gathered;
    out["disk_bytes_asked"] = disk_bytes_asked;
    if (!std::isnan(disk_cache_hit_rate)) out["disk_cache_hit_rate"] = disk_cache_hit_rate;
    if (!feature_cache.empty()) out["feature_cache"] = feature_cache;
  }
  if (best_epoch < 0) {  // never evaluated (TrainOptions::evaluate off)
    out["val_acc"] = nullptr;
    out["test_acc"] = nullptr;
  }
  if (device != "cpu") {
    out["gpu_peak_bytes"] = gpu_peak_bytes;
    out["gpu_energy_j"] = number_or_null(gpu_energy_j);
    out["gpu_power_w"] = number_or_null(gpu_power_w);
  }
  return out;
}

}  // namespace directgnn
