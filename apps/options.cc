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

std::string flag_of(const std::string& parameter) {
  if (parameter == "fanouts") return "--fan-out";
  if (parameter == "workers") return "--sampler-workers";
  if (parameter == "weighted") return "--weighted-sampling";
  std::string flag = "--" + parameter;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

namespace {

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
