#include "train/trainer.h"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/nvml.h"
#include "core/progress.h"
#include "core/random.h"
#include "core/resources.h"
#include "core/signals.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "feature/feature_store.h"
#include "feature/gpu_gather.h"
#include "gpu/device.h"
#include "graph/splits.h"
#include "sampling/device_sampler.h"
#include "sampling/neighbor_sampler.h"
#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/pipeline.h"

namespace directgnn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// NaN has no JSON form; absent metrics are written as null.
nlohmann::json number_or_null(double value) {
  return std::isnan(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

at::Tensor shuffled(const at::Tensor& ids, uint64_t seed) {
  at::Tensor out = ids.clone();
  int64_t* p = out.data_ptr<int64_t>();
  SplitRng rng(seed);
  for (int64_t i = out.numel() - 1; i > 0; --i) std::swap(p[i], p[rng.below(i + 1)]);
  return out;
}

class MetricsLog {
 public:
  MetricsLog(const std::string& path, bool append) {
    if (path.empty()) return;
    file_.open(path, std::ios::out | (append ? std::ios::app : std::ios::trunc));
    DGNN_CHECK(file_.good(), "--metrics ", path, ": cannot open for writing");
    path_ = path;
  }
  void write(const nlohmann::json& record) {
    if (!file_.is_open()) return;
    file_ << record.dump() << '\n';
    file_.flush();
    DGNN_CHECK(file_.good(), "--metrics ", path_, ": write failed (disk full?)");
  }

 private:
  std::ofstream file_;
  std::string path_;
};

}  // namespace

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
                        {"steps_per_epoch", steps_per_epoch},
                        {"seeds_per_epoch", seeds_per_epoch},
                        {"split", split_description},
                        {"param_digest", param_digest},
                        {"device", device},
                        {"mode", mode}};
  if (!std::isnan(test_roc_auc)) out["test_roc_auc"] = test_roc_auc;
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

std::string resolved_fanout(const TrainOptions& options) {
  if (!options.fanout.empty()) return options.fanout;
  std::string text;
  for (int64_t l = 0; l < options.model.layers; ++l) text += l == 0 ? "10" : ",10";
  return text;
}

nlohmann::json training_options_json(const TrainOptions& o) {
  return {{"model", o.model.to_json()},
          {"optimizer", o.optimizer},
          {"lr", o.lr},
          {"weight_decay", o.weight_decay},
          {"epochs", o.epochs},
          {"batch_size", o.batch_size},
          {"fanout", resolved_fanout(o)},
          {"features", o.features},
          {"eval_every", o.eval_every},
          {"seed", o.seed},
          {"split", o.split},
          {"device", o.device},
          {"gather", o.gather},
          {"sampler", o.sampler},
          {"graph", o.graph}};
}

void apply_training_options_json(const nlohmann::json& j, TrainOptions& o,
                                 const std::string& where) {
  try {
    const nlohmann::json& m = j.at("model");
    o.model.arch = m.at("arch").get<std::string>();
    o.model.hidden = m.at("hidden").get<int64_t>();
    o.model.layers = m.at("layers").get<int64_t>();
    o.model.dropout = m.at("dropout").get<double>();
    o.optimizer = j.at("optimizer").get<std::string>();
    o.lr = j.at("lr").get<double>();
    o.weight_decay = j.at("weight_decay").get<double>();
    o.epochs = j.at("epochs").get<int64_t>();
    o.batch_size = j.at("batch_size").get<int64_t>();
    o.fanout = j.at("fanout").get<std::string>();
    o.features = j.at("features").get<std::string>();
    o.eval_every = j.at("eval_every").get<int64_t>();
    o.seed = j.at("seed").get<uint64_t>();
    o.split = j.at("split").get<int64_t>();
    o.device = j.value("device", std::string("cpu"));
    o.gather = j.value("gather", std::string("auto"));
    o.sampler = j.value("sampler", std::string("auto"));
    o.graph = j.value("graph", std::string("pinned"));
  } catch (const nlohmann::json::exception& e) {
    fail(where, ": training options are incomplete or mistyped: ", e.what());
  }
}

namespace {

std::string digest_of(const std::vector<at::Tensor>& params) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const at::Tensor& p : params) {
    // Parameters trained on a GPU live there: the host reads a CPU copy.
    const at::Tensor c = p.detach().cpu().contiguous();
    crc = crc32(crc, static_cast<const Bytef*>(c.data_ptr()), static_cast<uInt>(c.nbytes()));
  }
  char text[16];
  std::snprintf(text, sizeof text, "%08lx", static_cast<unsigned long>(crc));
  return text;
}

// One prepared minibatch: what the pipeline's workers hand to the training loop. On a GPU
// its tensors were made on the worker's side stream, which `ticket` marks the end of.
struct Prepared {
  at::Tensor seeds, labels, x;
  MiniBatch batch;
  double sample_s = 0, gather_s = 0;
  gpu::Ticket ticket;

  std::vector<at::Tensor> tensors() const {
    std::vector<at::Tensor> all{seeds, labels, x, batch.seeds, batch.input_nodes};
    for (const Block& b : batch.blocks) {
      all.insert(all.end(), {b.indptr, b.indices, b.src_degree, b.dst_degree});
    }
    return all;
  }
};

// Where a run trains, keeps its features and samples, resolved from the options.
struct RunSetup {
  c10::Device device{c10::kCPU};
  Placement features = Placement::kHost;
  GatherMethod gather = GatherMethod::kAuto;
  bool gpu_sampler = false;
  GraphPlacement graph = GraphPlacement::kPinned;
  std::string note;  // why a run meant for a GPU trains on the CPU

  bool gpu() const { return device.is_cuda(); }
  int index() const { return device.index() < 0 ? 0 : device.index(); }
  std::string mode() const {
    const GatherMethod g = gather != GatherMethod::kAuto  ? gather
                           : features == Placement::kHost ? GatherMethod::kCpuCopy
                                                          : GatherMethod::kAligned;
    return placement_name(features) + "/" + (gpu() ? gather_method_name(g) : "cpu") + "/" +
           (gpu_sampler ? "gpu" : "cpu");
  }
};

RunSetup resolve_run(const TrainOptions& o) {
  RunSetup r;
  std::string device = o.device;
  if (device == "auto" && !gpu::available()) {
    // Options that only make sense on a GPU name the missing GPU, not a mismatch.
    struct Wants {
      const char* flag;
      const std::string& value;
      bool gpu;
    };
    for (const Wants& w :
         {Wants{"--features", o.features, o.features == "pinned" || o.features == "device"},
          Wants{"--gather", o.gather, o.gather != "auto" && o.gather != "cpu-copy"},
          Wants{"--sampler", o.sampler, o.sampler == "gpu"}}) {
      DGNN_CHECK(!w.gpu, w.flag, " ", w.value, " needs a GPU, but ", gpu::unavailable_reason(),
                 "; leave it out to train on the CPU");
    }
  }
  if (device == "auto") {
    device = gpu::available() ? "cuda" : "cpu";
    if (device == "cpu") {
      r.note =
          "note: training on the CPU: " + gpu::unavailable_reason() + " (--device cuda needs one)";
    }
  }
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    DGNN_CHECK(gpu::available(), "--device ", device, ": ", gpu::unavailable_reason(),
               "; use --device cpu");
    // A rank without an explicit index trains on its own GPU where there are enough.
    int index = o.group != nullptr ? rank_gpu(o.group->env(), gpu::device_count()) : 0;
    if (device.size() > 5) {
      DGNN_CHECK(std::all_of(device.begin() + 5, device.end(), ::isdigit) && device.size() < 9,
                 "--device '", device, "': use cuda or cuda:N");
      index = std::stoi(device.substr(5));
    }
    DGNN_CHECK(index < gpu::device_count(), "--device ", device, ": this machine has ",
               gpu::device_count(), " GPU(s)");
    r.device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  } else {
    DGNN_CHECK(device == "cpu", "--device '", o.device, "': use auto, cpu, cuda or cuda:N");
  }
  r.features = o.features == "auto" ? (r.gpu() ? Placement::kPinned : Placement::kHost)
                                    : parse_placement(o.features);
  DGNN_CHECK(r.gpu() || r.features == Placement::kHost, "--features ", o.features,
             " keeps the table for a GPU to read, but training runs on the CPU: use --features "
             "host, or --device cuda");
  r.gather = o.gather == "auto" ? GatherMethod::kAuto : parse_gather_method(o.gather);
  DGNN_CHECK(r.gpu() || r.gather == GatherMethod::kAuto || r.gather == GatherMethod::kCpuCopy,
             "--gather ", o.gather, " gathers onto a GPU, but training runs on the CPU");
  if (o.sampler == "auto") {
    r.gpu_sampler = r.gpu();
  } else if (o.sampler == "gpu") {
    DGNN_CHECK(r.gpu(),
               "--sampler gpu samples on a GPU, but training runs on the CPU: use "
               "--sampler cpu, or --device cuda");
    r.gpu_sampler = true;
  } else {
    DGNN_CHECK(o.sampler == "cpu", "--sampler '", o.sampler, "': use auto, cpu or gpu");
  }
  r.graph = parse_graph_placement(o.graph);
  return r;
}

std::string report_device(const RunSetup& run) {
  if (!run.gpu()) return "cpu";
  return "cuda:" + std::to_string(run.index()) + " (" + gpu::device_name(run.index()) + ")";
}

// Copies `from`'s parameters into `to` (any devices).
void copy_parameters(GnnModel& from, GnnModel& to) {
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor> a = from.parameters(), b = to.parameters();
  for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
}

// Progress within the epoch being trained, saved with the training state.
struct EpochProgress {
  int64_t next_step = 0;
  double loss_sum = 0;
  int64_t correct = 0;
  double sample_s = 0, gather_s = 0, compute_s = 0, wait_s = 0, elapsed_s = 0, cpu_s = 0;

  NLOHMANN_DEFINE_TYPE_INTRUSIVE(EpochProgress, next_step, loss_sum, correct, sample_s, gather_s,
                                 compute_s, wait_s, elapsed_s, cpu_s)
};

// Totals over the epochs finished so far, saved with the training state.
struct RunTotals {
  double train_s = 0, eval_s = 0, sample_s = 0, gather_s = 0, compute_s = 0, wait_s = 0, cpu_s = 0;
  int64_t evaluations = 0;
  int64_t best_epoch = -1;
  double best_val_acc = 0, test_acc = 0, test_roc_auc = std::numeric_limits<double>::quiet_NaN();

  nlohmann::json to_json() const {
    return {{"train_s", train_s},       {"eval_s", eval_s},
            {"sample_s", sample_s},     {"gather_s", gather_s},
            {"compute_s", compute_s},   {"wait_s", wait_s},
            {"cpu_s", cpu_s},           {"evaluations", evaluations},
            {"best_epoch", best_epoch}, {"best_val_acc", best_val_acc},
            {"test_acc", test_acc},     {"test_roc_auc", number_or_null(test_roc_auc)}};
  }
  static RunTotals from_json(const nlohmann::json& j) {
    RunTotals t;
    t.train_s = j.at("train_s").get<double>();
    t.eval_s = j.at("eval_s").get<double>();
    t.sample_s = j.at("sample_s").get<double>();
    t.gather_s = j.at("gather_s").get<double>();
    t.compute_s = j.at("compute_s").get<double>();
    t.wait_s = j.at("wait_s").get<double>();
    t.cpu_s = j.at("cpu_s").get<double>();
    t.evaluations = j.at("evaluations").get<int64_t>();
    t.best_epoch = j.at("best_epoch").get<int64_t>();
    t.best_val_acc = j.at("best_val_acc").get<double>();
    t.test_acc = j.at("test_acc").get<double>();
    t.test_roc_auc = j.at("test_roc_auc").is_null() ? std::numeric_limits<double>::quiet_NaN()
                                                    : j.at("test_roc_auc").get<double>();
    return t;
  }
};

// True on every rank when any rank has been asked to stop (ranks must stop at the same step).
int agreed_stop(ProcessGroup* group) {
  const int local = stop_signal();
  if (group == nullptr) return local;
  std::vector<at::Tensor> flag{at::tensor({static_cast<double>(local != 0)}, at::kDouble)};
  group->all_reduce_sum(flag);
  if (flag[0].item<double>() == 0) return 0;
  return local != 0 ? local : SIGTERM;
}

const char* signal_name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
}

}  // namespace

TrainReport train(const Dataset& ds, const TrainOptions& options, std::ostream& out) {
  DGNN_CHECK(options.epochs >= 1, "--epochs must be at least 1, got ", options.epochs);
  DGNN_CHECK(options.batch_size >= 1, "--batch-size must be positive, got ", options.batch_size);
  DGNN_CHECK(options.eval_every >= 1, "--eval-every must be positive, got ", options.eval_every);
  DGNN_CHECK(options.lr > 0, "--lr must be positive, got ", options.lr);
  DGNN_CHECK(options.weight_decay >= 0, "--weight-decay must not be negative, got ",
             options.weight_decay);
  DGNN_CHECK(options.checkpoint_every >= 0, "--checkpoint-every must not be negative, got ",
             options.checkpoint_every);
  DGNN_CHECK(options.prefetch >= 0 && options.prefetch <= 64, "--prefetch must be in 0..64, got ",
             options.prefetch);
  DGNN_CHECK(options.sampler_workers >= 1 && options.sampler_workers <= 64,
             "--sampler-workers must be in 1..64, got ", options.sampler_workers);
  ModelConfig config = options.model;
  config.in_dim = ds.feat_dim();
  config.num_classes = ds.num_classes;
  config.validate();
  const std::string fanout_text = resolved_fanout(options);
  const RunSetup run = resolve_run(options);
  const std::vector<int64_t> fanouts = parse_fanouts(fanout_text, config.layers);
  const NeighborSampler sampler(ds.graph, fanouts);
  std::unique_ptr<DeviceSampler> device_sampler;
  if (run.gpu_sampler) {
    device_sampler = std::make_unique<DeviceSampler>(ds.graph, fanouts, run.device, run.graph);
  }
  const FeatureStore store(ds.features, run.features, run.index());
  const at::Tensor labels_on_device = run.gpu() ? ds.labels.to(run.device) : ds.labels;
  std::unique_ptr<GpuEnergyMeter> energy;
  if (run.gpu()) energy = std::make_unique<GpuEnergyMeter>(gpu::pci_bus_id(run.index()));
  const ChosenSplit chosen = choose_split(ds, options.split, options.seed);
  const Split& split = chosen.split;

  ProcessGroup* group = options.group;
  const int rank = group != nullptr ? group->rank() : 0;
  const int ranks = group != nullptr ? group->size() : 1;
  const bool leader = rank == 0;
  // GPU runs evaluate (full neighbourhoods, layer by layer) with a CPU copy of the model,
  // made before seeding so the random stream matches a CPU run's.
  std::unique_ptr<GnnModel> cpu_model;
  if (run.gpu()) cpu_model = std::make_unique<GnnModel>(config);
  torch::manual_seed(options.seed);
  GnnModel model(config);  // initialised on the CPU: the same start on every device
  if (run.gpu()) model.to(run.device);
  std::vector<at::Tensor> params = model.parameters();
  if (group != nullptr) {
    torch::NoGradGuard no_grad;
    group->broadcast(params, 0);  // every rank starts from rank 0's initialisation
  }
  DGNN_CHECK(options.optimizer == "adam" || options.optimizer == "sgd", "--optimizer '",
             options.optimizer, "': use adam or sgd");
  std::unique_ptr<torch::optim::Optimizer> optimizer_owner;
  if (options.optimizer == "adam") {
    optimizer_owner = std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(options.lr).weight_decay(options.weight_decay));
  } else {
    optimizer_owner = std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(options.lr).weight_decay(options.weight_decay));
  }
  torch::optim::Optimizer& optimizer = *optimizer_owner;

  TrainReport report;
  report.split_description = chosen.description;
  // Each rank trains on its own equal shard of every epoch's shuffled training nodes.
  const int64_t num_train = split.train.numel() / ranks;
  DGNN_CHECK(num_train > 0, "the split has ", split.train.numel(),
             " training nodes, fewer than the ", ranks, " ranks");
  report.steps_per_epoch = (num_train + options.batch_size - 1) / options.batch_size;
  report.seeds_per_epoch = num_train * ranks;
  const int64_t steps = report.steps_per_epoch;

  // Where the run stands: a fresh start, or the saved state of an earlier run.
  int64_t start_epoch = 1;
  EpochProgress resumed_epoch;
  RunTotals totals;
  if (!options.resume_dir.empty()) {
    const std::string where = training_state_path(options.resume_dir);
    const nlohmann::json state = read_training_state(options.resume_dir);
    try {
      nlohmann::json saved = state.at("options"), given = training_options_json(options);
      saved.erase("epochs");  // the one option a resumed run may change
      given.erase("epochs");
      DGNN_CHECK(saved == given, where, ": the run was saved with other options (",
                 state.at("options").dump(), "); resume with the same ones");
      DGNN_CHECK(state.at("ranks").get<int>() == ranks, where, ": the run was saved with ",
                 state.at("ranks").get<int>(), " ranks; resume it with the same number, not ",
                 ranks);
      DGNN_CHECK(state.at("num_nodes").get<int64_t>() == ds.num_nodes() &&
                     state.at("steps_per_epoch").get<int64_t>() == steps,
                 where, ": the run was saved on another dataset (",
                 state.at("num_nodes").get<int64_t>(), " nodes), not ", ds.source);
      start_epoch = state.at("epoch").get<int64_t>();
      resumed_epoch = state.at("progress").get<EpochProgress>();
      totals = RunTotals::from_json(state.at("totals"));
    } catch (const nlohmann::json::exception& e) {
      fail(where, ": the training state is incomplete or mistyped: ", e.what());
    }
    DGNN_CHECK(start_epoch <= options.epochs, where, ": the run finished all ", start_epoch - 1,
               " epochs; give --epochs N with N > ", start_epoch - 1, " to train further");
    load_training_state(options.resume_dir, model, optimizer);
  }
  const std::string state_dir =
      !options.checkpoint_dir.empty() ? options.checkpoint_dir : std::string(kDefaultStateDir);
  auto save_state = [&](int64_t epoch, const EpochProgress& progress) {
    if (!leader) return;
    const nlohmann::json state = {{"kind", "directgnn training state"},
                                  {"options", training_options_json(options)},
                                  {"run", options.run_info},
                                  {"ranks", ranks},
                                  {"num_nodes", ds.num_nodes()},
                                  {"steps_per_epoch", steps},
                                  {"epoch", epoch},
                                  {"progress", progress},
                                  {"totals", totals.to_json()}};
    save_training_state(state_dir, model, optimizer, state);
  };

  if (!run.note.empty() && leader && !options.quiet) out << run.note << "\n";
  report.device = report_device(run);
  report.mode = run.mode();
  // Appending when resuming keeps the records of the epochs already done.
  MetricsLog metrics(leader ? options.metrics_path : std::string(), !options.resume_dir.empty());
  if (!options.quiet && leader) {
    out << "Dataset " << ds.name << ": " << ds.num_nodes() << " nodes, " << ds.graph.num_edges()
        << " edges, " << ds.feat_dim() << " features, " << ds.num_classes << " classes\n"
        << "Split: " << chosen.description << "\n"
        << "Model: " << config.arch << ", " << config.layers << " layers, hidden " << config.hidden
        << ", fan-out " << fanout_text << ", batch " << options.batch_size << ", features "
        << placement_name(store.placement()) << ", " << num_threads() << " thread(s)"
        << (ranks > 1 ? " per rank, " + std::to_string(ranks) + " ranks (" +
                            to_string(group->backend()) + ")"
                      : std::string())
        << ", prefetch " << options.prefetch << "\n"
        << "Device: " << report_device(run) << ", mode " << run.mode() << "\n";
    if (!options.resume_dir.empty()) {
      out << "Resuming from " << options.resume_dir << " at epoch " << start_epoch << ", step "
          << resumed_epoch.next_step << " of " << steps << "\n";
    }
    out.flush();  // seen at once, also when the output is a file
  }
  const int sampler_threads = num_threads();
  double totals_energy_j = 0;
  int64_t energy_epochs = 0;
  for (int64_t epoch = start_epoch; epoch <= options.epochs; ++epoch) {
    model.train();
    EpochProgress ep = epoch == start_epoch ? resumed_epoch : EpochProgress{};
    if (run.gpu()) gpu::reset_peak_allocated(run.index());
    const double energy_start = energy != nullptr ? energy->energy_joules() : 0.0;
    const auto epoch_start = Clock::now();
    const double cpu_start = process_cpu_seconds();
    const double elapsed_before = ep.elapsed_s, cpu_before = ep.cpu_s;
    const at::Tensor order = shuffled(split.train, mix64(options.seed, 0xe90c, epoch))
                                 .narrow(0, rank * num_train, num_train);
    auto prepare = [&](int64_t step) {
      Prepared p;
      const int64_t lo = step * options.batch_size;
      p.seeds = order.narrow(0, lo, std::min(options.batch_size, num_train - lo));
      const uint64_t stream = mix64(options.seed, epoch, step);
      const uint64_t sample_seed = ranks > 1 ? mix64(stream, rank) : stream;
      if (!run.gpu()) {
        auto t = Clock::now();
        p.batch = sampler.sample(p.seeds, sample_seed);
        p.sample_s = seconds_since(t);
        t = Clock::now();
        p.x = store.gather(p.batch.input_nodes);
        p.gather_s = seconds_since(t);
        p.labels = ds.labels.index_select(0, p.seeds);
        return p;
      }
      // On a GPU: everything on this worker's side stream, timed by waiting for that stream
      // (training goes on meanwhile on its own).
      p.ticket = gpu::run_on_side_stream(run.index(), [&] {
        auto t = Clock::now();
        if (device_sampler != nullptr) {
          p.batch = device_sampler->sample(p.seeds, sample_seed);
        } else {
          p.batch = sampler.sample(p.seeds, sample_seed);
          for (Block& b : p.batch.blocks) {
            b.indptr = b.indptr.to(run.device);
            b.indices = b.indices.to(run.device);
            b.src_degree = b.src_degree.to(run.device);
            b.dst_degree = b.dst_degree.to(run.device);
          }
        }
        gpu::synchronize_current_stream(run.index());
        p.sample_s = seconds_since(t);
        t = Clock::now();
        GatherOptions gather;
        gather.method = run.gather;
        p.x = store.gather(p.batch.input_nodes, run.device, gather);
        p.labels = labels_on_device.index_select(0, p.seeds.to(run.device));
        gpu::synchronize_current_stream(run.index());
        p.gather_s = seconds_since(t);
      });
      return p;
    };
    Pipeline<Prepared> pipeline(ep.next_step, steps, options.prefetch, options.sampler_workers,
                                prepare, [sampler_threads] { set_thread_team(sampler_threads); });
    Progress progress("Epoch " + std::to_string(epoch) + " steps", leader ? steps : -1);
    int stopped = 0;
    for (int64_t step = ep.next_step; step < steps; ++step) {
      progress.update(step);
      auto t = Clock::now();
      Prepared p = pipeline.next();
      if (run.gpu()) gpu::wait_on_current_stream(p.ticket, p.tensors());
      ep.wait_s += seconds_since(t);
      ep.sample_s += p.sample_s;
      ep.gather_s += p.gather_s;
      t = Clock::now();
      optimizer.zero_grad();
      const at::Tensor logits = model.forward(p.batch.blocks, p.x);
      const at::Tensor loss = at::cross_entropy_loss(logits, p.labels);
      loss.backward();
      if (group != nullptr) {
        std::vector<at::Tensor> grads;
        for (const at::Tensor& param : params) grads.push_back(param.grad());
        group->all_reduce_mean(grads);
      }
      optimizer.step();
      ep.loss_sum += loss.item<double>() * static_cast<double>(p.seeds.numel());
      ep.correct += logits.argmax(1).eq(p.labels).sum().item<int64_t>();
      ep.compute_s += seconds_since(t);
      ep.next_step = step + 1;
      const int64_t global_step = (epoch - 1) * steps + step + 1;
      stopped = agreed_stop(group);
      if (stopped != 0 ||
          (options.checkpoint_every > 0 && global_step % options.checkpoint_every == 0)) {
        ep.elapsed_s = elapsed_before + seconds_since(epoch_start);
        ep.cpu_s = cpu_before + process_cpu_seconds() - cpu_start;
        save_state(epoch, ep);
      }
      if (stopped != 0) break;
    }
    if (stopped != 0) {
      progress.finish();
      if (group != nullptr) group->barrier();  // the leader has written the state
      std::ostringstream message;
      message << "Interrupted by " << signal_name(stopped) << " at epoch " << epoch << ", step "
              << ep.next_step << " of " << steps << ". Training state saved in " << state_dir
              << "; resume with:\n  directgnn train --resume " << state_dir;
      throw Interrupted(stopped, message.str());
    }
    progress.finish();
    const double epoch_s = elapsed_before + seconds_since(epoch_start);
    const double cpu_s = cpu_before + process_cpu_seconds() - cpu_start;
    totals.train_s += epoch_s;
    totals.sample_s += ep.sample_s;
    totals.gather_s += ep.gather_s;
    totals.compute_s += ep.compute_s;
    totals.wait_s += ep.wait_s;
    totals.cpu_s += cpu_s;
    at::Tensor sums = at::tensor({ep.loss_sum, static_cast<double>(ep.correct)}, at::kDouble);
    if (group != nullptr) {
      std::vector<at::Tensor> t{sums};
      group->all_reduce_sum(t);
    }
    const auto seen = static_cast<double>(report.seeds_per_epoch);
    const double loss = sums[0].item<double>() / seen;
    const double train_acc = sums[1].item<double>() / seen;
    nlohmann::json record = {{"event", "epoch"},
                             {"epoch", epoch},
                             {"loss", loss},
                             {"train_acc", train_acc},
                             {"epoch_time_s", epoch_s},
                             {"sample_s", ep.sample_s},
                             {"gather_s", ep.gather_s},
                             {"compute_s", ep.compute_s},
                             {"wait_s", ep.wait_s},
                             {"cpu_s", cpu_s},
                             {"cpu_util", cpu_s / std::max(epoch_s, 1e-9)}};
    if (run.gpu()) {
      const int64_t peak = gpu::peak_allocated_bytes(run.index());
      report.gpu_peak_bytes = std::max(report.gpu_peak_bytes, peak);
      record["gpu_peak_bytes"] = peak;
      // Energy of the training steps of this epoch (the part run in this process).
      const double joules = energy->energy_joules() - energy_start;
      record["gpu_energy_j"] = number_or_null(joules);
      record["gpu_power_w"] = number_or_null(joules / std::max(epoch_s, 1e-9));
      if (!std::isnan(joules)) {
        totals_energy_j += joules;
        ++energy_epochs;
      }
    }
    char line[256];
    std::snprintf(line, sizeof(line), "Epoch %05lld | Loss %.4f | Train Acc %.4f",
                  static_cast<long long>(epoch), loss, train_acc);
    std::string text = line;
    if (options.evaluate && (epoch % options.eval_every == 0 || epoch == options.epochs)) {
      const auto eval_start = Clock::now();
      if (cpu_model != nullptr) copy_parameters(model, *cpu_model);
      const EvalResult r = evaluate(cpu_model != nullptr ? *cpu_model : model, ds, split, group);
      const double eval_s = seconds_since(eval_start);
      totals.eval_s += eval_s;
      ++totals.evaluations;
      record["val_acc"] = r.val_acc;
      record["test_acc"] = r.test_acc;
      record["eval_time_s"] = eval_s;
      if (ds.num_classes == 2) {
        record["val_roc_auc"] = number_or_null(r.val_roc_auc);
        record["test_roc_auc"] = number_or_null(r.test_roc_auc);
      }
      std::snprintf(line, sizeof(line), " | Val Acc %.4f | Test Acc %.4f", r.val_acc, r.test_acc);
      text += line;
      if (totals.best_epoch < 0 || r.val_acc > totals.best_val_acc) {
        totals.best_epoch = epoch;
        totals.best_val_acc = r.val_acc;
        totals.test_acc = r.test_acc;
        totals.test_roc_auc = r.test_roc_auc;
        if (!options.checkpoint_dir.empty() && leader) {
          nlohmann::json meta = training_options_json(options);
          meta.update(
              {{"model", config.to_json()},
               {"epoch", epoch},
               {"val_acc", r.val_acc},
               {"test_acc", r.test_acc},
               {"test_roc_auc", number_or_null(r.test_roc_auc)},
               {"split_description", chosen.description},
               {"dataset",
                {{"name", ds.name}, {"source", ds.source}, {"num_nodes", ds.num_nodes()}}}});
          save_checkpoint(options.checkpoint_dir, model, optimizer, meta);
        }
      }
    }
    std::snprintf(line, sizeof(line), " | Time(s) %.4f", epoch_s);
    text += line;
    if (!options.quiet && leader) out << text << std::endl;
    metrics.write(record);
    // The epoch is complete; a stop now resumes at the next one.
    const int stop_now = agreed_stop(group);
    const bool keep_state = options.checkpoint_every > 0 || !options.resume_dir.empty();
    if (stop_now != 0 || (keep_state && epoch == options.epochs)) {
      EpochProgress next;
      save_state(epoch + 1, next);
    }
    if (stop_now != 0 && epoch < options.epochs) {
      if (group != nullptr) group->barrier();
      std::ostringstream message;
      message << "Interrupted by " << signal_name(stop_now) << " after epoch " << epoch
              << ". Training state saved in " << state_dir << "; resume with:\n"
              << "  directgnn train --resume " << state_dir;
      throw Interrupted(stop_now, message.str());
    }
  }
  const auto epochs = static_cast<double>(options.epochs);
  report.epochs = options.epochs;
  report.best_epoch = totals.best_epoch;
  report.best_val_acc = totals.best_val_acc;
  report.test_acc = totals.test_acc;
  report.test_roc_auc = totals.test_roc_auc;
  report.epoch_time_s = totals.train_s / epochs;
  report.sample_s = totals.sample_s / epochs;
  report.gather_s = totals.gather_s / epochs;
  report.compute_s = totals.compute_s / epochs;
  report.wait_s = totals.wait_s / epochs;
  report.cpu_s = totals.cpu_s / epochs;
  report.param_digest = digest_of(params);
  if (energy_epochs > 0) {
    report.gpu_energy_j = totals_energy_j / static_cast<double>(energy_epochs);
    report.gpu_power_w = totals_energy_j / std::max(totals.train_s, 1e-9);
  }
  report.eval_s =
      totals.evaluations > 0 ? totals.eval_s / static_cast<double>(totals.evaluations) : 0.0;
  nlohmann::json final_record = report.to_json();
  final_record["event"] = "final";
  final_record["threads"] = num_threads();
  final_record["ranks"] = ranks;
  metrics.write(final_record);
  if (!options.quiet && leader) {
    char line[256];
    std::snprintf(line, sizeof(line), "Best validation epoch %lld: Val Acc %.4f | Test Acc %.4f",
                  static_cast<long long>(report.best_epoch), report.best_val_acc, report.test_acc);
    out << line;
    if (ds.num_classes == 2) {
      std::snprintf(line, sizeof(line), " | Test ROC-AUC %.4f", report.test_roc_auc);
      out << line;
    }
    std::snprintf(line, sizeof(line),
                  "\nAverage epoch time %.4f s (sampling %.4f, gathering %.4f, compute %.4f, "
                  "waiting %.4f; CPU %.2f s); evaluation %.4f s\n",
                  report.epoch_time_s, report.sample_s, report.gather_s, report.compute_s,
                  report.wait_s, report.cpu_s, report.eval_s);
    out << line;
    if (!options.checkpoint_dir.empty()) {
      out << "Checkpoint (epoch " << report.best_epoch << ") in " << options.checkpoint_dir << "\n";
    }
  }
  return report;
}

}  // namespace directgnn
