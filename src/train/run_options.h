// The options of every kind of run in one table: each option has a name (the command line's
// flag without its dashes, with underscores: "batch_size"; Python's keyword), the kinds of run
// that take it, what a resumed run may do with it, and how it is read from and written to
// JSON. The command line and Python set options through set_option, the training state stores
// options_json and a resumed run reads it back with apply_options_json, and the comparison of
// a resumed run's options with the saved ones (changed_options) follows from the table: there
// is no second list of options anywhere.
//
// Values are JSON: numbers, booleans, and text for choices and lists ("sage", "15,10,5",
// "paper,cites,paper=15,10"), which set_option parses once; the text of a number is accepted
// too, as a command line gives it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "train/trainer.h"

namespace directgnn {

// What a run trains: the task on a homogeneous or a heterogeneous graph.
enum class RunKind { kNode, kLink, kHetero, kHeteroLink };
// "node", "link", "hetero" or "hetero_link" (a checkpoint's and a training state's task).
const char* run_kind_name(RunKind kind);
RunKind parse_run_kind(const std::string& name);
inline bool is_link(RunKind kind) { return kind == RunKind::kLink || kind == RunKind::kHeteroLink; }
inline bool is_hetero(RunKind kind) {
  return kind == RunKind::kHetero || kind == RunKind::kHeteroLink;
}
// The kind a task ("node" or "link") is on a graph of either sort.
RunKind run_kind(bool link, bool hetero);

// What a resumed run does with an option.
enum class OnResume {
  kKeep,      // the saved value; given again, it must be equal
  kExtend,    // the saved value unless given (epochs: train further)
  kGivenNow,  // the value given now (how batches are prepared, never what they hold)
};

// The options a kind of run starts from: TrainOptions' defaults with the few the kind sets
// otherwise (its registration in run_options.cc).
TrainOptions default_options(RunKind kind);

// Sets option `name` of a `kind` run from `value`. Throws InvalidArgument naming the option
// when the value is bad, or when the option does not apply to the kind (saying to which kinds
// it does).
void set_option(TrainOptions& options, RunKind kind, const std::string& name,
                const nlohmann::json& value);
// Whether `kind` takes option `name`, and whether any kind does.
bool takes_option(RunKind kind, const std::string& name);
bool is_option(const std::string& name);
// Why an option of homogeneous runs does not apply to heterogeneous ones, in words for an error
// ("" for any other option).
std::string hetero_refusal(const std::string& name);
OnResume on_resume(const std::string& name);
// The names of `kind`'s options, in the table's order.
std::vector<std::string> option_names(RunKind kind);

// A kind's default options with `values` ({name: value}, as the command line and Python give
// them) set: the one way front ends build options. Throws as set_option.
TrainOptions make_options(RunKind kind, const nlohmann::json& values);

// Every option of `kind` as {name: value}.
nlohmann::json options_json(const TrainOptions& options, RunKind kind);
// Sets every option `json` holds (a training state's or a checkpoint's options); an option of
// the kind that `json` lacks keeps its value. Throws naming `where` and the option.
void apply_options_json(const nlohmann::json& json, TrainOptions& options, RunKind kind,
                        const std::string& where);

// The kind of run that wrote a checkpoint (its description's task; node before there were
// others): where eval and embed learn what they read.
RunKind checkpoint_kind(const nlohmann::json& meta);
// The options a checkpoint's description (`meta`, train/checkpoint.h) records: its "options",
// or in a checkpoint written before the table, the fields the trainers wrote then (the seed,
// the split, and a link run's "link" object). Throws naming `where`.
TrainOptions checkpoint_options(const nlohmann::json& meta, RunKind kind, const std::string& where);

// An option a resumed run was given with another value than it was saved with.
struct ChangedOption {
  std::string name;
  nlohmann::json saved, given;
};
// The kKeep options among `given_names` whose value in `given` differs from `saved` (both
// options_json of the kind).
std::vector<ChangedOption> changed_options(const nlohmann::json& saved, const nlohmann::json& given,
                                           RunKind kind,
                                           const std::vector<std::string>& given_names);

}  // namespace directgnn
