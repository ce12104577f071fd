#include "train/run_state.h"

#include "directgnn/error.h"

namespace directgnn {

namespace {

constexpr const char* kStateKind = "directgnn training state";

}  // namespace

nlohmann::json TrainingState::to_json() const {
  return {{"kind", kStateKind},
          {"version", kTrainingStateVersion},
          {"task", task},
          {"options", options},
          {"run", run},
          {"ranks", ranks},
          {"num_nodes", num_nodes},
          {"steps_per_epoch", steps_per_epoch},
          {"epoch", epoch},
          {"progress", progress},
          {"totals", totals.to_json()},
          {"extras", extras}};
}

TrainingState TrainingState::from_json(const nlohmann::json& j, const std::string& where) {
  // Heterogeneous states of format 1 carried no kind; every state of format 1 no version.
  const bool ours = j.is_object() && (j.value("kind", "") == kStateKind || j.contains("task"));
  DGNN_CHECK(ours, where, ": is not a directgnn training state");
  const int version =
      j.contains("version") && j["version"].is_number_integer() ? j["version"].get<int>() : 1;
  DGNN_CHECK(version == kTrainingStateVersion, where, ": holds a training state of format ",
             version, ", written by ", version < kTrainingStateVersion ? "an earlier" : "a later",
             " directgnn; this one continues format ", kTrainingStateVersion,
             " only. Finish the run with the directgnn that started it, or start it again");
  TrainingState s;
  try {
    s.task = j.at("task").get<std::string>();
    s.options = j.at("options");
    s.run = j.at("run");
    s.ranks = j.at("ranks").get<int>();
    s.num_nodes = j.at("num_nodes").get<int64_t>();
    s.steps_per_epoch = j.at("steps_per_epoch").get<int64_t>();
    s.epoch = j.at("epoch").get<int64_t>();
    s.progress = j.at("progress").get<EpochProgress>();
    s.totals = RunTotals::from_json(j.at("totals"));
    s.extras = j.at("extras");
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": the training state is incomplete or mistyped: ", e.what());
  }
  return s;
}

}  // namespace directgnn
