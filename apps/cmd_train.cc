// `directgnn train`: node classification or link prediction, on a homogeneous or a
// heterogeneous dataset (cmd_train_hetero.cc), new or resumed from a training state.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "options.h"
#include "train/checkpoint.h"
#include "train/link_trainer.h"
#include "train/run_state.h"

namespace directgnn::cli {

namespace {

struct TrainArgs {
  std::string dataset, resume, task = "node", metrics, checkpoint;
  int64_t checkpoint_every = 0;
  bool keep_self_loops = false, verbose = false;
  int threads = 0;
  DistArgs dist;
};

// An option of link prediction on heterogeneous datasets given for a homogeneous one: refused,
// saying how a homogeneous dataset gets its split and negatives.
[[noreturn]] void refuse_heterogeneous_link_option(const std::string& name,
                                                   const nlohmann::json& value) {
  const std::string flag = flag_of(name);
  const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  const std::string convert = name == "eval_negatives"
                                  ? "--link-split 0.85,0.05,0.1 --eval-negatives " + text
                              : name == "link_split" ? "--link-split " + text
                                                     : "";
  if (convert.empty()) {
    fail(flag, " applies to link prediction on heterogeneous datasets; leave it out");
  }
  fail(flag,
       " applies to link prediction on heterogeneous datasets; a homogeneous dataset stores its "
       "link split and negatives: make them with `directgnn convert IN OUT ",
       convert, "`, train on OUT and leave ", flag, " out");
}

// A run option given on the command line that `kind` does not take: refused, saying to which
// runs it belongs.
void refuse_other_kinds(const nlohmann::json& given, RunKind kind) {
  for (const auto& [name, value] : given.items()) {
    if (takes_option(kind, name)) continue;
    const std::string flag = flag_of(name);
    const bool node = takes_option(RunKind::kNode, name) || takes_option(RunKind::kHetero, name);
    const bool homogeneous =
        takes_option(RunKind::kNode, name) || takes_option(RunKind::kLink, name);
    if (!node && !is_link(kind)) {
      fail(flag, " is a link prediction option; add --task link, or leave it out");
    }
    if (name == "use_val_edges") {
      fail(flag,
           " is not offered on heterogeneous datasets (the test split is scored over the "
           "training edges); leave it out");
    }
    if (!node && !homogeneous) refuse_heterogeneous_link_option(name, value);
    if (is_link(kind) && takes_option(RunKind::kNode, name)) {
      fail(flag, " applies to node classification, not to --task link",
           name == "shard_structure"
               ? " (link prediction keeps each rank's graph whole: excluding a batch's seed "
                 "edges and --exact-negatives read every part's edges)"
               : "",
           "; leave it out");
    }
    if (is_link(kind) && takes_option(RunKind::kHetero, name)) {
      fail(flag,
           " applies to node classification on heterogeneous datasets, not to --task link; "
           "leave it out");
    }
    if (is_hetero(kind)) {
      const std::string why = hetero_refusal(name);
      fail(flag, " does not apply to heterogeneous datasets", why.empty() ? "" : ": " + why,
           "; leave it out");
    }
    fail(flag,
         " applies to heterogeneous datasets (a heterogeneous dataset directory, or mag:SCALE) "
         "and to --node-embeddings only; leave it out");
  }
}

// The kind a new run is: its task, on a heterogeneous dataset or with learnable embeddings.
RunKind new_run_kind(const TrainArgs& a, const nlohmann::json& given) {
  bool embeddings = false;
  if (given.contains("node_embeddings")) {
    embeddings = make_options(RunKind::kHetero, {{"node_embeddings", given["node_embeddings"]}})
                     .hetero.embeddings.dim > 0;
  }
  return run_kind(a.task == "link", is_hetero_dataset(a.dataset) || embeddings);
}

std::string shown(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// A resumed run: its kind, options and dataset from the state. The command that started it may
// be given again: an option (or the dataset) given with another value is refused, naming saved
// and given values; epochs may extend the run, and how batches are prepared may change.
RunKind resumed_run(const CLI::App& c, TrainArgs& a, const nlohmann::json& given,
                    TrainOptions& options) {
  const std::string where = training_state_path(a.resume);
  const TrainingState state = TrainingState::from_json(read_training_state(a.resume), where);
  const RunKind kind = parse_run_kind(state.task);
  DGNN_CHECK(c.count("--task") == 0 || run_kind(a.task == "link", is_hetero(kind)) == kind, where,
             ": holds a ", state.task, " run; --task ", a.task, " does not continue it");
  refuse_other_kinds(given, kind);
  options = default_options(kind);
  apply_options_json(state.options, options, kind, where);
  for (const auto& [name, value] : given.items()) set_option(options, kind, name, value);
  std::vector<std::string> names;
  for (const auto& item : given.items()) names.push_back(item.key());
  std::string changed;
  for (const ChangedOption& o :
       changed_options(state.options, options_json(options, kind), kind, names)) {
    changed += "\n  " + flag_of(o.name) + ": saved " + shown(o.saved) + ", given " + shown(o.given);
  }
  const nlohmann::json& run = state.run;
  const std::string saved_dataset = run.value("dataset", std::string());
  if (c.count("--dataset") != 0) {
    const std::string now = is_hetero_dataset(a.dataset) && a.dataset.rfind("mag:", 0) == 0
                                ? a.dataset
                                : absolute_path(a.dataset);
    if (now != saved_dataset) changed += "\n  --dataset: saved " + saved_dataset + ", given " + now;
  }
  if (c.count("--keep-self-loops") != 0 && run.value("keep_self_loops", false) != a.keep_self_loops)
    changed += "\n  --keep-self-loops: saved false, given true";
  DGNN_CHECK(
      changed.empty(), where,
      ": --resume continues the run with the options it was saved with; these differ:", changed,
      "\nGive them as saved, or leave them out (--epochs, --metrics and --threads may "
      "change; a changed run needs a new --checkpoint directory).");
  a.dataset = saved_dataset;
  a.keep_self_loops = run.value("keep_self_loops", false);
  // The files and the thread count it ran with, unless given now (the thread count orders
  // floating-point sums).
  if (c.count("--metrics") == 0) a.metrics = run.value("metrics", std::string());
  if (c.count("--checkpoint-every") == 0) a.checkpoint_every = run.value("checkpoint_every", 0);
  if (c.count("--threads") == 0 && run.value("threads", 0) > 0) {
    a.threads = run.value("threads", 0);
    configure_threads(a.threads);
  }
  options.resume_dir = a.resume;
  if (a.checkpoint.empty()) a.checkpoint = a.resume;
  return kind;
}

void train_homogeneous(RunKind kind, const TrainArgs& a, const TrainOptions& options) {
  ImportOptions import = import_options(a.keep_self_loops);
  if (options.group != nullptr && options.shard_features != FeatureSharding::kOff) {
    // A dataset stored by part in one part per rank: this rank loads its part's rows only.
    import.feature_part = options.group->rank();
    import.feature_parts = options.group->size();
  }
  if (kind == RunKind::kNode && options.group != nullptr &&
      options.shard_structure != FeatureSharding::kOff) {
    // The same for a structure stored by part: this rank loads its part's edges only.
    import.structure_part = options.group->rank();
    import.structure_parts = options.group->size();
  }
  const Dataset ds = dataset_or_default(a.dataset, import);
  if (kind == RunKind::kLink) {
    train_links(ds, options, std::cout);
  } else {
    train(ds, options, std::cout);
  }
  const bool leader = options.group == nullptr || options.group->rank() == 0;
  if (kind == RunKind::kNode && a.dataset.empty() && leader) {
    std::cout << "\nThat was the built-in synthetic graph. To train on a real dataset:\n"
                 "  directgnn train --dataset PATH   (a dataset directory or an .npz file,\n"
                 "  e.g. cora.npz from the gnn-benchmark repository; see docs/formats.md)\n";
  }
}

// --resume auto: the run in --checkpoint DIR goes on when DIR holds a training state, and a new
// run saving there starts otherwise, so one command serves a first start and every restart
// (torchrun --max-restarts).
void resolve_auto_resume(TrainArgs& a) {
  if (a.resume != "auto") return;
  if (a.checkpoint.empty()) {
    fail(
        "--resume auto: give --checkpoint DIR; the run resumes from DIR's training state when "
        "there is one and starts anew, saving there, when there is none");
  }
  a.resume = has_training_state(a.checkpoint) ? a.checkpoint : std::string();
}

void run_train(const CLI::App& c, TrainArgs a) {
  const nlohmann::json given = given_options(c);
  TrainOptions options;
  RunKind kind = RunKind::kNode;
  resolve_auto_resume(a);
  if (!a.resume.empty()) {
    kind = resumed_run(c, a, given, options);
  } else {
    kind = new_run_kind(a, given);
    refuse_other_kinds(given, kind);
    options = make_options(kind, given);
  }
  options.metrics_path = a.metrics;
  options.checkpoint_dir = a.checkpoint;
  options.checkpoint_every = a.checkpoint_every;
  options.verbose = a.verbose;
  // An absolute path, so a run resumes from any working directory; mag:SCALE as it is.
  const std::string dataset =
      a.dataset.rfind("mag:", 0) == 0 ? a.dataset : absolute_path(a.dataset);
  options.run_info = {{"dataset", dataset},
                      {"keep_self_loops", a.keep_self_loops},
                      {"metrics", a.metrics},
                      {"checkpoint_every", a.checkpoint_every},
                      {"threads", a.threads}};
  install_stop_handlers(StopAction::kSaveState);
  options.adapt_threads = a.threads == 0;
  const std::unique_ptr<ProcessGroup> group = join_ranks(a.dist, options.loader.device);
  options.group = group.get();
  if (is_hetero(kind)) {
    train_hetero_command(kind, {a.dataset, a.keep_self_loops}, std::move(options));
  } else {
    train_homogeneous(kind, a, options);
  }
  if (group != nullptr) group->barrier();
}

}  // namespace

void register_train(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* c = app.add_subcommand(
      "train", "train a GNN (no --dataset: a built-in synthetic planted-partition graph)");
  c->add_option("--dataset", args->dataset,
                "dataset directory, .npz file, heterogeneous dataset directory, or mag:SCALE");
  c->add_option("--task", args->task, "node (classification) or link (prediction)")
      ->capture_default_str()
      ->check(CLI::IsMember({"node", "link"}));
  add_run_options(c, {RunKind::kNode, RunKind::kLink, RunKind::kHetero, RunKind::kHeteroLink});
  c->add_option("--metrics", args->metrics, "write per-epoch metrics as JSON lines");
  c->add_option("--checkpoint", args->checkpoint,
                "save the best-validation model and the training state into this directory");
  c->add_option("--checkpoint-every", args->checkpoint_every,
                "also save the training state every N steps (0: only when stopped by a signal)")
      ->default_val(0);
  c->add_option("--resume", args->resume,
                "continue the run whose training state is in DIR (saved on SIGINT/SIGTERM or "
                "by --checkpoint-every); dataset and options come from it, and options given "
                "again must equal the saved ones. auto: continue the run in --checkpoint DIR "
                "when it holds a state, else start a new one there (one command for the first "
                "start and every restart, as torchrun --max-restarts runs it)");
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  c->add_flag("--verbose", args->verbose,
              "say more about the run's set-up (why it trains on the CPU when no GPU is usable)");
  add_dist_options(c, &args->dist);
  add_threads_option(c, &args->threads);
  c->get_option("--threads")
      ->description(
          "CPU threads (0 = the cores other processes leave free, re-checked every epoch; the "
          "count changes the order of floating-point sums, so give N for bitwise-reproducible "
          "runs)");
  c->callback([args, c] { run_train(*c, *args); });
}

}  // namespace directgnn::cli
