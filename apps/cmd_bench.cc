#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "bench_report.h"
#include "core/atomic_file.h"
#include "core/resources.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "gpu/runtime.h"
#include "graph/planted_partition.h"
#include "graph/rmat.h"
#include "options.h"
#include "sampling/sampler.h"

namespace directgnn::cli {
namespace {

PlantedPartitionOptions parse_synthetic(const std::string& text) {
  std::vector<double> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      values.push_back(std::stod(item));
    } catch (const std::exception&) {
      fail("--synthetic '", text, "': '", item, "' is not a number");
    }
  }
  DGNN_CHECK(values.size() == 3 && values[0] >= 16 && values[1] > 0 && values[2] >= 1,
             "--synthetic '", text, "': give nodes,avg-degree,feat-dim, e.g. 100000,20,128");
  PlantedPartitionOptions o;
  o.num_nodes = static_cast<int64_t>(values[0]);
  o.avg_degree = values[1];
  o.feat_dim = static_cast<int64_t>(values[2]);
  return o;
}

// --rmat NODES,EDGE_FACTOR,FEAT_DIM[,float16]: an R-MAT dataset (graph/rmat.h) made in memory.
RmatDatasetOptions parse_rmat(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  const std::string usage =
      "give nodes,edge-factor,feat-dim[,float32|float16], e.g. "
      "1000000,8,128,float16";
  DGNN_CHECK(items.size() == 3 || items.size() == 4, "--rmat '", text, "': ", usage);
  std::vector<double> values;
  for (size_t i = 0; i < 3; ++i) {
    try {
      size_t used = 0;
      values.push_back(std::stod(items[i], &used));
      DGNN_CHECK(used == items[i].size(), "");
    } catch (const std::exception&) {
      fail("--rmat '", text, "': '", items[i], "' is not a number; ", usage);
    }
  }
  DGNN_CHECK(values[0] >= 16 && values[1] > 0 && values[2] >= 1, "--rmat '", text, "': ", usage);
  RmatDatasetOptions o;
  o.graph.num_nodes = static_cast<int64_t>(values[0]);
  o.graph.edge_factor = values[1];
  o.feat_dim = static_cast<int64_t>(values[2]);
  if (items.size() == 4) {
    DGNN_CHECK(items[3] == "float32" || items[3] == "float16", "--rmat '", text, "': '", items[3],
               "' is not a feature type; ", usage);
    o.feat_dtype = items[3] == "float16" ? at::kHalf : at::kFloat;
  }
  check_rmat_options(o.graph);
  return o;
}

// The configurations of the side-by-side comparison (--modes).
enum class BenchMode { kConventional, kZeroCopy, kZeroCopyUnaligned, kAllInGpu, kCpu };
constexpr BenchMode kAllModes[] = {BenchMode::kConventional, BenchMode::kZeroCopy,
                                   BenchMode::kZeroCopyUnaligned, BenchMode::kAllInGpu,
                                   BenchMode::kCpu};

const char* bench_mode_name(BenchMode mode) {
  switch (mode) {
    case BenchMode::kConventional:
      return "conventional";
    case BenchMode::kZeroCopy:
      return "zero-copy";
    case BenchMode::kZeroCopyUnaligned:
      return "zero-copy-unaligned";
    case BenchMode::kAllInGpu:
      return "all-in-gpu";
    case BenchMode::kCpu:
      return "cpu";
  }
  return "unknown";
}

BenchMode parse_bench_mode(const std::string& name) {
  for (const BenchMode mode : kAllModes) {
    if (name == bench_mode_name(mode)) return mode;
  }
  fail("--modes: '", name, "' is not a mode (conventional, zero-copy, zero-copy-unaligned, ",
       "all-in-gpu, cpu, or all)");
}

// One run of the comparison: a mode with a sampler, and how the host waits for the GPU.
struct Mode {
  BenchMode mode;
  SamplerChoice sampler;  // cpu or gpu
  gpu::HostSync sync = gpu::HostSync::kAuto;
};

// Sets where `mode` trains and keeps its features and graph, and how it gathers them.
// All-in-GPU keeps the graph on the GPU too, so its GPU sampler is not held back by PCIe.
void apply_mode(BenchMode mode, LoaderOptions& p) {
  p.graph = mode == BenchMode::kAllInGpu ? GraphPlacement::kDevice : GraphPlacement::kPinned;
  p.device = mode == BenchMode::kCpu ? DeviceChoice::cpu() : DeviceChoice::cuda();
  p.features = mode == BenchMode::kZeroCopy || mode == BenchMode::kZeroCopyUnaligned
                   ? Placement::kPinned
               : mode == BenchMode::kAllInGpu ? Placement::kDevice
                                              : Placement::kHost;
  p.gather.method = mode == BenchMode::kConventional        ? GatherMethod::kCpuCopy
                    : mode == BenchMode::kZeroCopyUnaligned ? GatherMethod::kZeroCopy
                    : mode == BenchMode::kCpu               ? GatherMethod::kAuto
                                                            : GatherMethod::kAligned;
}

std::vector<Mode> parse_modes(const std::string& modes, const std::string& samplers,
                              const std::string& syncs) {
  std::vector<BenchMode> chosen;
  std::vector<SamplerChoice> kinds;
  std::vector<gpu::HostSync> waits;
  std::stringstream a(modes), b(samplers), c(syncs);
  // `all` is every mode a user compares, the CPU path included, so that the command runs
  // something on every machine; a mode named twice runs once.
  auto add = [&chosen](BenchMode mode) {
    if (std::find(chosen.begin(), chosen.end(), mode) == chosen.end()) chosen.push_back(mode);
  };
  for (std::string item; std::getline(a, item, ',');) {
    if (item != "all") {
      add(parse_bench_mode(item));
      continue;
    }
    for (const BenchMode mode : kAllModes) {
      if (mode != BenchMode::kZeroCopyUnaligned) add(mode);
    }
  }
  for (std::string item; std::getline(b, item, ',');) {
    DGNN_CHECK(item == "cpu" || item == "gpu", "--samplers: '", item, "': use cpu and/or gpu");
    kinds.push_back(parse_sampler(item));
  }
  for (std::string item; std::getline(c, item, ',');) waits.push_back(gpu::parse_host_sync(item));
  if (waits.empty()) waits.push_back(gpu::HostSync::kAuto);
  // Every mode under the first way of waiting, then every GPU mode under the next: a run cut
  // short by a time limit loses the repeats first. The CPU path waits for no GPU.
  std::vector<Mode> out;
  for (const gpu::HostSync wait : waits) {
    for (const BenchMode mode : chosen) {
      if (mode == BenchMode::kCpu && wait != waits.front()) continue;
      for (const SamplerChoice kind : kinds) {
        if (mode == BenchMode::kCpu && kind == SamplerChoice::kGpu) continue;  // samples on the CPU
        out.push_back({mode, kind, mode == BenchMode::kCpu ? gpu::HostSync::kAuto : wait});
      }
    }
  }
  DGNN_CHECK(!out.empty(), "--modes/--samplers select nothing to run");
  return out;
}

void print_comparison(const nlohmann::json& runs) {
  std::printf("\n%-20s %-7s %-8s %9s %9s %9s %9s %9s %9s %10s %8s %8s\n", "mode", "sampler", "sync",
              "epoch(s)", "sample(s)", "gather(s)", "compute", "wait(s)", "CPU(s)", "GPU J/ep",
              "speedup", "test_acc");
  for (const auto& run : runs) {
    const std::string sync = run.value("cuda_sync", "auto");
    if (!run.contains("epoch_time_s")) {
      std::printf("%-20s %-7s %-8s %s\n", run["mode"].get<std::string>().c_str(),
                  run["sampler"].get<std::string>().c_str(), sync.c_str(),
                  run.contains("interrupted") ? "interrupted" : "skipped");
      continue;
    }
    auto value = [&](const char* key) {
      return run.contains(key) && !run[key].is_null() ? run[key].get<double>() : std::nan("");
    };
    std::printf("%-20s %-7s %-8s %9.3f %9.3f %9.3f %9.3f %9.3f %9.2f %10.1f %8.2f %8.4f\n",
                run["mode"].get<std::string>().c_str(), run["sampler"].get<std::string>().c_str(),
                sync.c_str(), value("epoch_time_s"), value("sample_s"), value("gather_s"),
                value("compute_s"), value("wait_s"), value("cpu_s"), value("gpu_energy_j"),
                value("speedup"), value("test_acc"));
  }
}

// The comparison's files as they stand: written after every mode, so that a run stopped by a
// time limit keeps the modes it finished ("complete" says whether every mode ran).
void write_comparison(const nlohmann::json& setup, nlohmann::json runs, bool complete,
                      const std::string& json_path, const std::string& html_path) {
  double baseline = 0;
  for (const auto& run : runs) {
    if (run["mode"] == bench_mode_name(BenchMode::kConventional) && run["sampler"] == "cpu" &&
        run.value("cuda_sync", "auto") == "auto" && run.contains("epoch_time_s"))
      baseline = run["epoch_time_s"].get<double>();
  }
  for (auto& run : runs) {
    if (baseline > 0 && run.contains("epoch_time_s"))
      run["speedup"] = baseline / run["epoch_time_s"].get<double>();
  }
  const nlohmann::json result = {{"setup", setup}, {"runs", runs}, {"complete", complete}};
  if (!json_path.empty()) write_file_atomic(json_path, result.dump(2) + "\n");
  if (!html_path.empty()) write_file_atomic(html_path, comparison_html(result));
  if (complete) print_comparison(result["runs"]);
}

// One mode of the comparison: its report, or why it was skipped.
nlohmann::json run_mode(const Dataset& ds, const TrainOptions& base, const Mode& m, bool leader) {
  TrainOptions o = base;
  apply_mode(m.mode, o.loader);
  o.loader.sampler = m.sampler;
  const std::string name = bench_mode_name(m.mode), sampler = sampler_name(m.sampler);
  const std::string sync = gpu::host_sync_name(m.sync);
  nlohmann::json run = {{"mode", name}, {"sampler", sampler}, {"cuda_sync", sync}};
  if (leader)
    std::printf("%s / %s sampler%s: ", name.c_str(), sampler.c_str(),
                m.sync == gpu::HostSync::kAuto ? "" : (" / " + sync + " wait").c_str());
  std::fflush(stdout);
  try {
    gpu::set_host_sync(m.sync);  // a no-op where the device already waits so
    const TrainReport r = train(ds, o, std::cout);
    run.update(r.to_json());
    run["layout"] = r.mode;  // features/gather/sampler as run
    run["mode"] = name;
    run["seeds_per_s"] = static_cast<double>(r.seeds_per_epoch) / r.epoch_time_s;
    if (leader) std::printf("%.3f s per epoch\n", r.epoch_time_s);
  } catch (const Error& e) {
    const auto* argument = dynamic_cast<const InvalidArgument*>(&e);
    const std::string why = argument != nullptr ? flag_message(*argument) : e.what();
    run["skipped"] = why;
    if (leader) std::printf("skipped: %s\n", why.c_str());
  }
  return run;
}

// Every mode on the same dataset, one after another in this process; a mode that cannot run
// here (no GPU, a table too large for GPU memory) is reported as skipped with the reason. Each
// runs once per way of waiting for the GPU (--cuda-sync); the CPU mode once. A stop signal ends the
// mode in progress after its step: the files then record it as interrupted, and the command exits
// 128 + signal.
nlohmann::json run_comparison(const Dataset& ds, const TrainOptions& base,
                              const std::vector<Mode>& modes, const nlohmann::json& setup,
                              const std::string& json_path, const std::string& html_path,
                              bool leader) {
  nlohmann::json runs = nlohmann::json::array();
  for (const Mode& m : modes) {
    try {
      runs.push_back(run_mode(ds, base, m, leader));
    } catch (const Interrupted& e) {
      runs.push_back({{"mode", bench_mode_name(m.mode)},
                      {"sampler", sampler_name(m.sampler)},
                      {"cuda_sync", gpu::host_sync_name(m.sync)},
                      {"interrupted", e.what()}});
      if (leader) write_comparison(setup, runs, false, json_path, html_path);
      throw;
    }
    if (leader) write_comparison(setup, runs, runs.size() == modes.size(), json_path, html_path);
  }
  gpu::set_host_sync(gpu::HostSync::kAuto);
  return runs;
}

// --strict: a mode that could not run fails the command (after every mode has had its turn and
// the files are written), so that a script checking the exit status sees a refused pin or a
// missing GPU, not a pass.
void require_every_mode(const nlohmann::json& runs) {
  std::string skipped;
  for (const auto& run : runs) {
    if (!run.contains("skipped")) continue;
    skipped += "\n  " + run["mode"].get<std::string>() + " / " + run["sampler"].get<std::string>() +
               " (" + run.value("cuda_sync", "auto") + "): " + run["skipped"].get<std::string>();
  }
  DGNN_CHECK(skipped.empty(), "--strict: these modes did not run:", skipped);
}

struct BenchTrainArgs {
  std::string metrics;
  std::string dataset, synthetic = "100000,20,128", rmat, json, html, modes, samplers = "cpu,gpu",
                       cuda_sync = "auto";
  double train_fraction = 0.5;
  bool train_fraction_given = false;
  int64_t warmup_epochs = 0;
  bool strict = false;
  bool load_only = false;
  int threads = 0;
  DistArgs dist;
};

void add_bench_train_options(CLI::App* c, BenchTrainArgs* args) {
  c->add_option("--dataset", args->dataset, "dataset directory or .npz (default: --synthetic)");
  c->add_option("--synthetic", args->synthetic,
                "planted-partition graph made in memory: nodes,avg-degree,feat-dim")
      ->capture_default_str();
  c->add_option("--rmat", args->rmat,
                "R-MAT graph made in memory instead: nodes,edge-factor,feat-dim[,float16] "
                "(papers100M-like split: 1% training seeds)")
      ->excludes("--dataset");
  c->add_option_function<double>(
      "--train-fraction",
      [args](double value) {
        args->train_fraction = value;
        args->train_fraction_given = true;
      },
      "fraction of the synthetic graph's nodes used as training seeds (default 0.5; --rmat: "
      "0.01)");
  c->add_option("--json", args->json, "also write the results to this JSON file");
  c->add_option("--modes", args->modes,
                "compare, in one process: conventional (host table, CPU gathers and copies), "
                "zero-copy (pinned, aligned GPU reads), zero-copy-unaligned, all-in-gpu, cpu "
                "(training on the CPU); or all (conventional, zero-copy, all-in-gpu and cpu; a "
                "mode this machine cannot run is listed as skipped with the reason)");
  c->add_option("--samplers", args->samplers, "with --modes: samplers to run each mode with")
      ->capture_default_str();
  c->add_option("--html", args->html, "with --modes: write the comparison as an HTML page");
  c->add_option("--cuda-sync", args->cuda_sync,
                "with --modes: how the host waits for the GPU, each run in turn: auto (CUDA's "
                "choice, which spins), spin, yield, blocking; CPU seconds include a spinning wait")
      ->capture_default_str();
  c->add_flag("--strict", args->strict,
              "with --modes: exit non-zero when a mode could not run (it is still listed as "
              "skipped, and the other modes run)");
  c->add_option("--metrics", args->metrics,
                "write per-epoch metrics as JSON lines (not with --modes)");
  c->add_option("--warmup-epochs", args->warmup_epochs,
                "leave the first N epochs out of the reported times (a GPU's first epoch also "
                "pays CUDA's start-up); below --epochs")
      ->capture_default_str();
  c->add_flag("--load-only", args->load_only,
              "sample and gather every batch and run no model (the loader's time alone, without "
              "evaluation); not with --modes");
  add_run_options(c, {RunKind::kNode});
  add_threads_option(c, &args->threads);
  add_dist_options(c, &args->dist);
}

// The dataset the benchmark trains on: loaded, or built in memory.
Dataset bench_dataset(const BenchTrainArgs& args) {
  DGNN_CHECK(args.train_fraction > 0 && args.train_fraction < 0.9,
             "--train-fraction must be in (0, 0.9)");
  if (!args.rmat.empty()) {
    RmatDatasetOptions o = parse_rmat(args.rmat);
    if (args.train_fraction_given) o.train_fraction = args.train_fraction;
    o.val_fraction = std::min(o.val_fraction, (1.0 - o.train_fraction - o.test_fraction) / 2);
    return make_rmat_dataset(o);
  }
  if (!args.dataset.empty()) return load_dataset(args.dataset);
  PlantedPartitionOptions o = parse_synthetic(args.synthetic);
  o.train_fraction = args.train_fraction;
  o.val_fraction = std::min(0.05, (1.0 - o.train_fraction) / 2);
  return make_planted_partition(o);
}

nlohmann::json bench_setup(const Dataset& ds, const TrainOptions& options, double build_s,
                           int64_t build_peak_rss, int ranks) {
  return {{"dataset", ds.name},
          {"nodes", ds.num_nodes()},
          {"edges", ds.graph.num_edges()},
          {"feat_dim", ds.feat_dim()},
          {"feat_dtype", c10::toString(ds.features.scalar_type())},
          {"dataset_build_s", build_s},
          {"dataset_peak_rss_bytes", build_peak_rss},
          {"model", model_kind_name(options.model.kind)},
          {"layers", options.model.layers},
          {"hidden", options.model.hidden},
          {"fanout", fanout_text(resolved_fanouts(options))},
          {"batch_size", options.loader.batch_size},
          {"epochs", options.epochs},
          {"warmup_epochs", options.warmup_epochs},
          {"prefetch", options.loader.prefetch ? nlohmann::json(*options.loader.prefetch)
                                               : nlohmann::json("auto")},
          {"threads", num_threads()},
          {"ranks", ranks}};
}

void print_bench_header(const Dataset& ds, const TrainOptions& options, const nlohmann::json& setup,
                        bool built) {
  std::printf(
      "bench train: %s, %lld nodes, %lld edges, %lld features; %s x%lld hidden %lld%s, "
      "fan-out %s, batch %lld, %d thread(s) x %d rank(s)\n",
      ds.name.c_str(), static_cast<long long>(ds.num_nodes()),
      static_cast<long long>(ds.graph.num_edges()), static_cast<long long>(ds.feat_dim()),
      model_kind_name(options.model.kind), static_cast<long long>(options.model.layers),
      static_cast<long long>(options.model.hidden),
      options.model.has_heads() ? (" x " + std::to_string(options.model.heads) + " heads").c_str()
                                : "",
      fanout_text(resolved_fanouts(options)).c_str(),
      static_cast<long long>(options.loader.batch_size), num_threads(), setup["ranks"].get<int>());
  std::printf("dataset %s in %.1f s; peak resident memory %s\n", built ? "built" : "loaded",
              setup["dataset_build_s"].get<double>(),
              gib_text(setup["dataset_peak_rss_bytes"].get<int64_t>()).c_str());
  if (options.warmup_epochs > 0)
    std::printf("times are means over epochs %lld..%lld (the first %lld warm up)\n",
                static_cast<long long>(options.warmup_epochs + 1),
                static_cast<long long>(options.epochs),
                static_cast<long long>(options.warmup_epochs));
}

// One training run, its parts and (with --json) the report with the setup.
void run_single(const Dataset& ds, const TrainOptions& options, const nlohmann::json& setup,
                const std::string& json_path) {
  const TrainReport r = train(ds, options, std::cout);
  if (options.group != nullptr && options.group->rank() != 0) return;
  std::printf("layout %s (features/gather/sampler)\n", r.mode.c_str());
  if (r.disk_bytes_gathered > 0) {
    std::printf("disk: %.2f GB of rows gathered, %.2f GB of blocks read for them (%.2fx)\n",
                r.disk_bytes_gathered / 1e9, r.disk_bytes_asked / 1e9,
                static_cast<double>(r.disk_bytes_asked) /
                    static_cast<double>(std::max<int64_t>(r.disk_bytes_gathered, 1)));
    if (!std::isnan(r.disk_cache_hit_rate))
      std::printf("%s\nfeature cache: %.1f%% of the rows gathered were hits\n",
                  r.feature_cache.c_str(), 100.0 * r.disk_cache_hit_rate);
  }
  const double seeds_per_s = static_cast<double>(r.seeds_per_epoch) / r.epoch_time_s;
  std::printf("%-14s %10s %10s %10s %10s %10s %12s %8s\n", "steps/epoch", "epoch(s)", "sample(s)",
              "gather(s)", "compute(s)", "wait(s)", "seeds/s", "test_acc");
  std::printf("%-14lld %10.4f %10.4f %10.4f %10.4f %10.4f %12.0f %8.4f\n",
              static_cast<long long>(r.steps_per_epoch), r.epoch_time_s, r.sample_s, r.gather_s,
              r.compute_s, r.wait_s, seeds_per_s, r.best_epoch >= 0 ? r.test_acc : std::nan(""));
  if (json_path.empty()) return;
  nlohmann::json out = r.to_json();
  out.update(setup);
  out["seeds_per_s"] = seeds_per_s;
  write_file_atomic(json_path, out.dump(2) + "\n");
}

// The comparison's runs (none without --modes), its flags checked before the dataset is built
// (minutes at scale).
std::vector<Mode> checked_modes(const BenchTrainArgs& args, const TrainOptions& options) {
  DGNN_CHECK(!args.load_only || args.modes.empty(),
             "--load-only times one loader; leave out --modes (or --load-only)");
  if (args.modes.empty()) {
    DGNN_CHECK(args.html.empty(), "--html needs --modes (it draws the comparison)");
    DGNN_CHECK(!args.strict, "--strict needs --modes");
    DGNN_CHECK(args.cuda_sync == "auto", "--cuda-sync needs --modes (it repeats each mode)");
    return {};
  }
  DGNN_CHECK(options.metrics_path.empty(),
             "--metrics records one training run; with --modes use --json");
  std::vector<Mode> modes = parse_modes(args.modes, args.samplers, args.cuda_sync);
  // --strict fails on a GPU mode without a GPU anyway: say so before building the dataset.
  for (const Mode& m : modes) {
    DGNN_CHECK(!args.strict || m.mode == BenchMode::kCpu || gpu::available(), "--strict: mode ",
               bench_mode_name(m.mode), " needs a GPU, but ", gpu::unavailable_reason());
  }
  return modes;
}

void run_bench_train(const BenchTrainArgs& args, const nlohmann::json& given) {
  TrainOptions options = make_options(RunKind::kNode, given);
  options.metrics_path = args.metrics;
  const std::unique_ptr<ProcessGroup> group = join_ranks(args.dist, options.loader.device);
  const bool leader = group == nullptr || group->rank() == 0;
  options.quiet = true;
  options.group = group.get();
  options.warmup_epochs = args.warmup_epochs;
  options.eval_every = options.epochs + 1;  // evaluate once, after the last epoch
  options.save_state_on_stop = false;
  options.load_only = args.load_only;
  if (args.load_only) options.evaluate = false;
  const std::vector<Mode> modes = checked_modes(args, options);
  const auto build_start = std::chrono::steady_clock::now();
  const Dataset ds = bench_dataset(args);
  const double build_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
  const nlohmann::json setup =
      bench_setup(ds, options, build_s, peak_rss_bytes(), group != nullptr ? group->size() : 1);
  if (leader) print_bench_header(ds, options, setup, args.dataset.empty());
  install_stop_handlers(StopAction::kWriteResults);
  if (!modes.empty()) {
    const nlohmann::json runs =
        run_comparison(ds, options, modes, setup, args.json, args.html, leader);
    if (args.strict) require_every_mode(runs);
    return;
  }
  run_single(ds, options, setup, args.json);
}

}  // namespace

void register_bench(CLI::App& app) {
  auto args = std::make_shared<BenchTrainArgs>();
  CLI::App* bench = app.add_subcommand("bench", "measure directgnn");
  bench->require_subcommand(1);
  register_bench_gather(bench);
  CLI::App* c = bench->add_subcommand("train", "time training epochs, split into their parts");
  add_bench_train_options(c, args.get());
  c->callback([args, c] { run_bench_train(*args, given_options(*c)); });
}

}  // namespace directgnn::cli
