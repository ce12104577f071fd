#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "core/signals.h"
#include "directgnn/error.h"
#include "options.h"
#include "train/checkpoint.h"
#include "train/link_trainer.h"

namespace directgnn::cli {

namespace {

// The options that shape a run's result, as the command line names them, with where each is
// kept in a training state (the run's options, or its run record).
struct FixedOption {
  const char* flag;
  const char* section;
  const char* path;
};
constexpr FixedOption kFixedOptions[] = {
    {"--dataset", "run", "/dataset"},
    {"--keep-self-loops", "run", "/keep_self_loops"},
    {"--model", "options", "/model/arch"},
    {"--layers", "options", "/model/layers"},
    {"--hidden", "options", "/model/hidden"},
    {"--dropout", "options", "/model/dropout"},
    {"--norm", "options", "/model/norm"},
    {"--residual", "options", "/model/residual"},
    {"--heads", "options", "/model/heads"},
    {"--attn-dropout", "options", "/model/attn_dropout"},
    {"--optimizer", "options", "/optimizer"},
    {"--lr", "options", "/lr"},
    {"--weight-decay", "options", "/weight_decay"},
    {"--batch-size", "options", "/batch_size"},
    {"--fan-out", "options", "/fanout"},
    {"--features", "options", "/features"},
    {"--eval-every", "options", "/eval_every"},
    {"--seed", "options", "/seed"},
    {"--split", "options", "/split"},
    {"--device", "options", "/device"},
    {"--gather", "options", "/gather"},
    {"--sampler", "options", "/sampler"},
    {"--graph", "options", "/graph"},
    {"--weighted-sampling", "options", "/weighted_sampling"},
    {"--task", "link", "/task"},
    {"--decoder", "link", "/decoder"},
    {"--decoder-layers", "link", "/decoder_layers"},
    {"--neg-sampling", "link", "/neg_sampling"},
    {"--neg-ratio", "link", "/neg_ratio"},
    {"--neg-dist", "link", "/neg_dist"},
    {"--exact-negatives", "link", "/exact_negatives"},
    {"--keep-seed-edges", "link", "/keep_seed_edges"},
    {"--hits-k", "link", "/hits_k"},
    {"--use-val-edges", "link", "/use_val_edges"},
    {"--steps-per-epoch", "link", "/steps_per_epoch"},
    {"--no-eval", "link", "/no_eval"},
};

// The task and link options as a resumed run compares them: link_options_json's, with the task
// and the two flags that say "not" (--keep-seed-edges, --no-eval) as the flags say them.
nlohmann::json link_section(nlohmann::json link_options, const std::string& task, bool evaluate) {
  link_options["task"] = task;
  link_options["no_eval"] = !evaluate;
  if (link_options.contains("exclude_seed_edges")) {
    link_options["keep_seed_edges"] = !link_options["exclude_seed_edges"].get<bool>();
  }
  return link_options;
}

std::string shown(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// A resumed run may be given the options it was saved with, as people rerun the command that
// started it; an option given with another value is refused, naming saved and given values.
// `saved_options` holds the state's options as this build reads them (an option the state predates
// holds its default).
// `given_link` is link_section() of the command line's link options.
void refuse_changed_options(const CLI::App& c, const nlohmann::json& state,
                            const TrainOptions& given, const TrainOptions& saved_options,
                            const nlohmann::json& given_link, const std::string& dataset,
                            bool keep_self_loops, const std::string& where) {
  const nlohmann::json now = {
      {"options", training_options_json(given)},
      {"run", {{"dataset", absolute_path(dataset)}, {"keep_self_loops", keep_self_loops}}},
      {"link", given_link}};
  const nlohmann::json then = {{"options", training_options_json(saved_options)},
                               {"run", state["run"]},
                               {"link", link_section(state.value("link", nlohmann::json::object()),
                                                     state.value("task", std::string("node")),
                                                     state.value("evaluate", true))}};
  std::string changed;
  for (const FixedOption& o : kFixedOptions) {
    if (c.count(o.flag) == 0) continue;
    const nlohmann::json::json_pointer at(o.path);
    const nlohmann::json saved = then[o.section].value(at, nlohmann::json());
    const nlohmann::json value = now[o.section][at];
    if (saved == value) continue;
    changed += std::string("\n  ") + o.flag + ": saved " +
               (saved.is_null() ? "(not recorded)" : shown(saved)) + ", given " + shown(value);
  }
  DGNN_CHECK(
      changed.empty(), where,
      ": --resume continues the run with the options it was saved "
      "with; these differ:",
      changed,
      "\nGive them as saved, or leave them out (--epochs, --metrics and --threads may change; "
      "a changed run needs a new --checkpoint directory).");
}

// --task link's flags, parsed once the command line is complete.
struct LinkArgs {
  std::string task = "node", decoder = "dot", neg_sampling = "binary", neg_dist = "uniform";
  int64_t neg_ratio = 1, hits_k = 50, decoder_layers = 2, steps_per_epoch = 0;
  bool exact_negatives = false, keep_seed_edges = false, use_val_edges = false, no_eval = false;

  LinkTrainOptions options() const {
    LinkTrainOptions o;
    o.decoder = parse_decoder_kind(decoder);
    o.decoder_layers = decoder_layers;
    o.sampling.mode = parse_negative_mode(neg_sampling);
    o.sampling.dist = parse_negative_dist(neg_dist);
    o.sampling.neg_ratio = neg_ratio;
    o.sampling.exact_negatives = exact_negatives;
    o.sampling.exclude_seed_edges = !keep_seed_edges;
    o.hits_k = hits_k;
    o.use_val_edges = use_val_edges;
    o.steps_per_epoch = steps_per_epoch;
    return o;
  }
};

void add_link_options(CLI::App* c, LinkArgs* a) {
  c->add_option("--task", a->task, "node (classification) or link (prediction)")
      ->capture_default_str()
      ->check(CLI::IsMember({"node", "link"}));
  c->add_option("--decoder", a->decoder,
                "link: dot (the embeddings' dot product) or mlp (an MLP on their Hadamard "
                "product, as OGB's baselines)")
      ->capture_default_str();
  c->add_option("--decoder-layers", a->decoder_layers, "link, mlp decoder: its linear layers")
      ->capture_default_str();
  c->add_option("--neg-sampling", a->neg_sampling,
                "link: binary (K random pairs per positive) or triplet (K random destinations "
                "per positive's source), as PyG's")
      ->capture_default_str();
  c->add_option("--neg-ratio", a->neg_ratio, "link: K, negatives per positive")
      ->capture_default_str();
  c->add_option("--neg-dist", a->neg_dist,
                "link: uniform, or degree (degree^0.75, as word2vec and PinSage)")
      ->capture_default_str();
  c->add_flag("--exact-negatives", a->exact_negatives,
              "link: redraw a negative that is an edge of the graph");
  c->add_flag("--keep-seed-edges", a->keep_seed_edges,
              "link: keep a batch's positive edges in its sampled neighbourhoods");
  c->add_option("--hits-k", a->hits_k, "link: K of Hits@K")->capture_default_str();
  c->add_flag("--use-val-edges", a->use_val_edges,
              "link: test scores pass messages over the validation edges too");
  c->add_option("--steps-per-epoch", a->steps_per_epoch,
                "link: batches per epoch at most, the first of each shuffle (0 = every training "
                "edge once)")
      ->capture_default_str();
  c->add_flag("--no-eval", a->no_eval,
              "link: no evaluation (timing runs, or splits too large to score in memory); with "
              "--checkpoint the last epoch's model is saved, for embed");
}

// Link prediction's flags given without --task link: refused, not ignored.
void refuse_link_flags_without_link(const CLI::App& c, const LinkArgs& a) {
  if (a.task == "link") return;
  for (const CLI::Option* option : c.get_options()) {
    const std::string name = option->get_name();
    if (option->count() == 0 || option->get_description().rfind("link", 0) != 0) continue;
    fail(name, " is a link prediction option; add --task link, or leave it out");
  }
}

// The link options of a resumed run: a link run's come from its state (refuse_changed_options
// compares link flags given again); a node run takes none. Sets `evaluate` as the run started.
std::optional<LinkTrainOptions> resumed_link_options(const CLI::App& c, const LinkArgs& a,
                                                     const nlohmann::json& state,
                                                     const std::string& where, bool& evaluate) {
  if (state.value("task", "") != "link") {
    refuse_link_flags_without_link(c, a);
    return std::nullopt;
  }
  DGNN_CHECK(state.contains("link"), where, ": a link prediction state without its link options");
  evaluate = state.value("evaluate", true);
  return link_options_from_json(state["link"], where);
}

}  // namespace

void register_train(CLI::App& app) {
  struct Args {
    TrainingArgs train;
    std::string dataset;
    std::string resume;
    bool keep_self_loops = false;
    int threads = 0;
    DistArgs dist;
    LinkArgs link;
    HeteroArgs hetero;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand(
      "train", "train a GNN (no --dataset: a built-in synthetic planted-partition graph)");
  c->add_option("--dataset", args->dataset, "dataset directory or .npz file");
  add_training_options(c, &args->train);
  add_link_options(c, &args->link);
  c->add_option("--metrics", args->train.train.metrics_path,
                "write per-epoch metrics as JSON lines");
  c->add_option("--checkpoint", args->train.train.checkpoint_dir,
                "save the best-validation model and the training state into this directory");
  c->add_option("--checkpoint-every", args->train.train.checkpoint_every,
                "also save the training state every N steps (0: only when stopped by a signal)")
      ->default_val(0);
  c->add_option("--resume", args->resume,
                "continue the run whose training state is in DIR (saved on SIGINT/SIGTERM or "
                "by --checkpoint-every); dataset and options come from it, and options given "
                "again must equal the saved ones");
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  add_hetero_options(c, &args->hetero);
  add_dist_options(c, &args->dist);
  add_threads_option(c, &args->threads);
  c->get_option("--threads")
      ->description(
          "CPU threads (0 = the cores other processes leave free, re-checked every epoch; the "
          "count changes the order of floating-point sums, so give N for bitwise-reproducible "
          "runs)");
  c->callback([args, c] {
    if (!args->resume.empty() && resumes_hetero(args->resume)) {
      install_stop_handlers(StopAction::kSaveState);
      resume_hetero_command(*c, args->resume, args->train.train.epochs,
                            args->train.train.metrics_path);
      return;
    }
    if (args->resume.empty()) refuse_link_flags_without_link(*c, args->link);
    if (is_hetero_dataset(args->dataset) || args->hetero.node_embeddings > 0) {
      install_stop_handlers(StopAction::kSaveState);
      const LinkTrainOptions link = args->link.options();
      train_hetero_command(*c, args->dataset, args->train, args->hetero,
                           args->link.task == "link" ? &link : nullptr);
      return;
    }
    for (const char* flag : {"--fan-out-rel", "--bases", "--embedding-optimizer", "--embedding-lr",
                             "--target-relation", "--link-split", "--eval-negatives"}) {
      DGNN_CHECK(c->count(flag) == 0, flag,
                 " applies to heterogeneous datasets (a heterogeneous dataset directory, or "
                 "mag:SCALE) and to --node-embeddings only; leave it out");
    }
    TrainOptions options = args->train.options();
    options.adapt_threads = args->threads == 0;
    std::string dataset = args->dataset;
    bool keep_self_loops = args->keep_self_loops;
    std::optional<LinkTrainOptions> link;
    if (args->link.task == "link") link = args->link.options();
    options.evaluate = !args->link.no_eval;
    if (!args->resume.empty()) {
      // The stored run decides everything that shapes the result. The command that started it
      // may be given again (options equal to the saved ones); --epochs may extend it.
      const nlohmann::json state = read_training_state(args->resume);
      const std::string where = training_state_path(args->resume);
      DGNN_CHECK(state.contains("options") && state.contains("run"), where,
                 ": not a training state (no options)");
      const TrainOptions given = options;
      link = resumed_link_options(*c, args->link, state, where, options.evaluate);
      apply_training_options_json(state["options"], options, where);
      refuse_changed_options(
          *c, state, given, options,
          link_section(link_options_json(args->link.options()), args->link.task, given.evaluate),
          args->dataset, args->keep_self_loops, where);
      if (c->count("--epochs") != 0) options.epochs = given.epochs;
      const nlohmann::json& run = state["run"];
      dataset = run.value("dataset", std::string());
      keep_self_loops = run.value("keep_self_loops", false);
      options.resume_dir = args->resume;
      if (options.checkpoint_dir.empty()) options.checkpoint_dir = args->resume;
    }
    // An absolute path, so a run resumes from any working directory.
    const std::string dataset_path = absolute_path(dataset);
    options.run_info = {{"dataset", dataset_path}, {"keep_self_loops", keep_self_loops}};
    install_stop_handlers(StopAction::kSaveState);
    const std::unique_ptr<ProcessGroup> group = join_ranks(args->dist, options.loader.device);
    options.group = group.get();
    const Dataset ds = dataset_or_default(dataset, import_options(keep_self_loops));
    if (link) {
      train_links(ds, options, *link, std::cout);
      if (group != nullptr) group->barrier();
      return;
    }
    train(ds, options, std::cout);
    if (group != nullptr) group->barrier();
    if (dataset.empty() && (group == nullptr || group->rank() == 0) && !options.quiet) {
      std::cout << "\nThat was the built-in synthetic graph. To train on a real dataset:\n"
                   "  directgnn train --dataset PATH   (a dataset directory or an .npz file,\n"
                   "  e.g. cora.npz from the gnn-benchmark repository; see docs/formats.md)\n";
    }
  });
}

}  // namespace directgnn::cli
