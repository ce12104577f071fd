#include "options.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/threads.h"
#include "directgnn/error.h"
#include "dist/process_group.h"
#include "gpu/runtime.h"
#include "graph/planted_partition.h"
#include "io/text_lines.h"
#include "sampling/sampler.h"

namespace directgnn::cli {

void add_threads_option(CLI::App* command, int* threads) {
  command->add_option("--threads", *threads, "CPU threads used everywhere (0 = all cores)")
      ->default_val(0);
  // Ranks sharing a machine share its cores unless told otherwise.
  command->parse_complete_callback([threads] {
    int n = *threads;
    if (n == 0) {
      const int local = dist_env_from_environment().local_world_size;
      n = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local);
    }
    configure_threads(n);
  });
}

TrainOptions TrainingArgs::options() const {
  TrainOptions o = train;
  o.model.kind = parse_model_kind(model);
  o.optimizer = parse_optimizer(optimizer);
  o.model.norm = parse_norm(norm);
  LoaderOptions& l = o.loader;
  l.fanouts = fanout.empty() ? std::vector<int64_t>{} : parse_fanouts(fanout, o.model.layers);
  l.device = parse_device(device);
  l.features = parse_feature_placement(features);
  l.gather.method = parse_gather_method(gather);
  l.sampler = parse_sampler(sampler);
  l.graph = parse_graph_placement(graph);
  l.prefetch = parse_prefetch(prefetch);
  l.disk.backend = disk::parse_backend(disk_io);
  l.cache.ranking = disk::parse_cache_ranking(cache_rank);
  return o;
}

void add_training_options(CLI::App* c, TrainingArgs* args) {
  TrainOptions* o = &args->train;
  c->add_option("--model", args->model, "sage (GraphSAGE, mean), gcn or gat (graph attention)")
      ->default_val("sage");
  c->add_option("--layers", o->model.layers, "number of GNN layers")->default_val(2);
  c->add_option("--hidden", o->model.hidden,
                "hidden units per layer (gat: per head, so a hidden layer is hidden x heads wide)")
      ->default_val(256);
  c->add_option("--dropout", o->model.dropout, "dropout between layers")->default_val(0.5);
  c->add_option("--heads", o->model.heads,
                "gat: attention heads of each hidden layer, concatenated (the output layer has 1)")
      ->default_val(o->model.heads);
  c->add_option("--attn-dropout", o->model.attn_dropout,
                "gat: dropout on the attention coefficients while training")
      ->default_val(o->model.attn_dropout);
  c->add_option("--norm", args->norm, "normalisation after each hidden layer: none, batch or layer")
      ->default_val("none");
  c->add_flag("--residual", o->model.residual,
              "add each hidden layer's input to its output (a linear projection where the "
              "widths differ)");
  c->add_option("--optimizer", args->optimizer, "adam or sgd")->default_val("adam");
  c->add_option("--lr", o->lr, "learning rate")->default_val(0.005);
  c->add_option("--weight-decay", o->weight_decay, "weight decay")->default_val(0.0);
  c->add_option("--epochs", o->epochs, "training epochs")->default_val(100);
  c->add_option("--batch-size", o->loader.batch_size, "seed nodes per minibatch")
      ->default_val(1024);
  c->add_option("--fan-out", args->fanout,
                "neighbours sampled per hop, seed hop first, -1 = all (default 10 per layer)");
  c->add_option("--device", args->device,
                "auto (a GPU when there is one, else the CPU), cpu, cuda or cuda:N")
      ->default_val("auto");
  c->add_option("--features", args->features,
                "where the feature table lives: auto (pinned on a GPU, host on the CPU), host, "
                "pinned (the GPU reads host memory), device (GPU memory) or disk (rows read "
                "from features.npy as batches need them; for tables larger than RAM)")
      ->default_val("auto");
  c->add_option("--disk-io", args->disk_io,
                "with --features disk: how rows are read, auto (io_uring where the kernel "
                "allows it, else pread), io_uring, or pread (a few threads)")
      ->default_val("auto");
  c->add_flag("--disk-direct", o->loader.disk.direct,
              "with --features disk: read with O_DIRECT (no page cache)");
  c->add_option("--feature-cache-gib", o->loader.cache.gib,
                "with --features disk: keep this many GiB of the most used rows in RAM, filled "
                "before training (0: no cache)")
      ->default_val(0.0);
  c->add_option("--feature-cache-rank", args->cache_rank,
                "which rows the cache keeps: presample (those a sampling pass over the training "
                "nodes gathers most) or degree (the most linked nodes)")
      ->default_val("presample");
  c->add_option("--gather", args->gather,
                "how a GPU gets feature rows: auto, cpu-copy (CPU gathers, then copies), "
                "zero-copy, or aligned (warp reads on 128-byte boundaries)")
      ->default_val("auto");
  c->add_option("--sampler", args->sampler,
                "neighbour sampling on the cpu or gpu (auto: gpu on a GPU)")
      ->default_val("auto");
  c->add_option("--graph", args->graph,
                "where the GPU sampler reads the graph: pinned (host memory) or device")
      ->default_val("pinned");
  c->add_flag("--weighted-sampling", o->loader.weighted,
              "draw neighbours with probability proportional to their edge's weight (the "
              "dataset directory's edge_weights.npy)");
  c->add_option("--prefetch", args->prefetch,
                "minibatches sampled and gathered ahead of the one training: auto (" +
                    std::to_string(LoaderOptions::kGpuPrefetch) +
                    " on a GPU or with --features disk, else 0) or 0..64 (0: none)")
      ->default_val("auto");
  c->add_option("--sampler-workers", o->loader.workers,
                "threads preparing minibatches ahead (with --prefetch > 0)")
      ->default_val(o->loader.workers);
  c->add_option("--eval-every", o->eval_every, "evaluate every N epochs")->default_val(1);
  c->add_option("--seed", o->seed, "random seed (split, sampling, initialisation)")->default_val(0);
  c->add_option("--split", o->split, "which of the dataset's splits to use")->default_val(0);
}

void add_dist_options(CLI::App* command, DistArgs* args) {
  command
      ->add_option("--dist-timeout", args->timeout_s,
                   "seconds a rank waits for the others before failing (under torchrun or launch)")
      ->default_val(300)
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--dist-backend", args->backend,
                   "collectives between ranks: auto (nccl when every rank has a GPU of its own, "
                   "else gloo), gloo or nccl")
      ->default_val("auto")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
}

std::unique_ptr<ProcessGroup> join_ranks(const DistArgs& args, const DeviceChoice& device) {
  // Joining comes before loading the dataset: a rank that cannot join fails at once.
  // A single process needs no group, unless a backend is named (then it runs a group of one).
  const DistEnv env = dist_env_from_environment();
  if (env.world_size == 1 && args.backend == "auto") return nullptr;
  DistOptions options;
  options.backend = args.backend == "nccl"   ? DistBackend::kNccl
                    : args.backend == "gloo" ? DistBackend::kGloo
                                             : DistBackend::kAuto;
  options.timeout = std::chrono::seconds(args.timeout_s);
  const bool own_gpu = device.kind == DeviceChoice::Kind::kAuto ||
                       (device.kind == DeviceChoice::Kind::kCuda && device.index < 0);
  options.gpu_by_rank = own_gpu && gpu::available();
  return ProcessGroup::create(env, options);
}

namespace {

// The flag a library parameter is given with: --snake-case, but for the few the CLI names
// otherwise.
std::string flag_of(const std::string& parameter) {
  if (parameter == "fanouts") return "--fan-out";
  if (parameter == "workers") return "--sampler-workers";
  if (parameter == "weighted") return "--weighted-sampling";
  std::string flag = "--" + parameter;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// Whether the subcommand that ran (or a command on the way to it) has `flag`.
bool has_flag(const CLI::App& app, const std::string& flag) {
  if (app.get_option_no_throw(flag) != nullptr) return true;
  for (const CLI::App* sub : app.get_subcommands()) {
    if (has_flag(*sub, flag)) return true;
  }
  return false;
}

}  // namespace

std::string flag_message(const InvalidArgument& error, const CLI::App& app) {
  const std::string flag = flag_of(error.parameter());
  if (!has_flag(app, flag)) return error.what();
  return flag + ": " + error.detail();
}

std::string flag_message(const InvalidArgument& error) {
  return flag_of(error.parameter()) + ": " + error.detail();
}

std::string resume_hint(const std::string& state_dir) {
  if (state_dir.empty()) return "";
  return "; resume with:\n  directgnn train --resume " + state_dir;
}

std::string absolute_path(const std::string& path) {
  return path.empty() ? path : std::filesystem::absolute(path).lexically_normal().string();
}

Dataset dataset_or_default(const std::string& path, const ImportOptions& import) {
  if (path.empty()) return make_planted_partition({});
  return load_dataset(path, import);
}

}  // namespace directgnn::cli
