#include "dist/process_group.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <exception>
#include <mutex>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "directgnn/error.h"
#include "dist/liveness.h"
#include "dist/nccl_backend.h"
#include "gpu/runtime.h"

namespace directgnn {
namespace {
int env_int(const char* name, int fallback, int lo, int hi) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  DGNN_CHECK(*end == '\0' && v >= lo && v <= hi, "environment variable ", name, "='", value,
             "' must be an integer in [", lo, ", ", hi, "]");
  return static_cast<int>(v);
}

}  // namespace

const char* to_string(DistBackend backend) {
  switch (backend) {
    case DistBackend::kAuto:
      return "auto";
    case DistBackend::kGloo:
      return "gloo";
    case DistBackend::kNccl:
      return "nccl";
  }
  return "?";
}

int rank_gpu(const DistEnv& env, int device_count) {
  return device_count > 0 ? env.local_rank % device_count : 0;
}

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  int gpu = -1;                        // the NCCL backend's device
  std::shared_ptr<Liveness> liveness;  // shared with the subgroups; none in a world of one
};

DistEnv dist_env_from_environment() {
  DistEnv env;
  env.world_size = env_int("WORLD_SIZE", 1, 1, 1 << 16);
  env.rank = env_int("RANK", 0, 0, env.world_size - 1);
  env.local_world_size = env_int("LOCAL_WORLD_SIZE", env.world_size, 1, env.world_size);
  env.local_rank = env_int("LOCAL_RANK", env.rank, 0, env.local_world_size - 1);
  env.master_port = env_int("MASTER_PORT", 29500, 1, 65535);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr != nullptr && *addr != '\0') {
    env.master_addr = addr;
  }
  const char* agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  env.agent_store = agent != nullptr && std::string(agent) == "True";
  env.restart_count = env_int("TORCHELASTIC_RESTART_COUNT", 0, 0, 1 << 30);
  DGNN_CHECK(env.world_size == 1 || std::getenv("RANK") != nullptr, "WORLD_SIZE is ",
             env.world_size,
             " but RANK is not set; launch with torchrun or "
             "`directgnn launch -n N -- train ...`");
  return env;
}

ProcessGroup::ProcessGroup(DistEnv env, std::chrono::seconds timeout, std::unique_ptr<Impl> impl)
    : env_(std::move(env)), timeout_(timeout), impl_(std::move(impl)) {}

ProcessGroup::~ProcessGroup() {
  // NCCL's communicators and watchdog are shut down explicitly, as destroy_process_group does.
  if (impl_->backend && backend_ == DistBackend::kNccl) impl_->backend->shutdown();
}

namespace {

// torch's flight recorder (one per process, made at its first use) records every collective
// with a traceback, and registers each group's status in a map it writes before taking its
// lock: two groups whose first collectives run at once on two threads (a loader's exchange
// beside the training step, or ranks on threads of one process as the unit tests run them)
// can corrupt that map and crash. Off unless the user sets TORCH_FR_BUFFER_SIZE.
void keep_flight_recorder_off() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0); });
}

c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const DistEnv& env,
                                                    const c10::intrusive_ptr<c10d::Store>& store,
                                                    std::chrono::seconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  // Each rank listens on its own interface: GLOO_SOCKET_IFNAME when set (as in PyTorch),
  // loopback for a single-machine group, else the address of this host's name.
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  if (ifname != nullptr && *ifname != '\0') {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
  } else if (env.master_addr.rfind("127.", 0) == 0 || env.master_addr == "localhost") {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
}

// The keys of one attempt of a torchrun run (the first, or a restart), apart from the others'.
std::string attempt_prefix(const DistEnv& env) {
  return "directgnn/attempt-" + std::to_string(env.restart_count);
}

// Who hosts the store, for Liveness's message.
std::string store_host(const DistEnv& env) {
  return env.agent_store ? "torchrun's agent, which hosts the group's store at " + env.master_addr +
                               ":" + std::to_string(env.master_port) + ","
                         : "rank 0, which hosts the group's store,";
}

// Every rank posts whether it has a GPU of its own and reads the others': the backend must be
// the same everywhere. Returns the ranks without one.
std::vector<int> ranks_without_own_gpu(const DistEnv& env, c10d::Store& store, bool own_gpu) {
  store.set("directgnn/own-gpu/" + std::to_string(env.rank), std::string(own_gpu ? "1" : "0"));
  std::vector<int> without;
  for (int r = 0; r < env.world_size; ++r) {
    const std::vector<uint8_t> v = store.get("directgnn/own-gpu/" + std::to_string(r));
    if (v.empty() || v[0] != '1') without.push_back(r);
  }
  return without;
}

DistBackend agree_on_backend(const DistEnv& env, c10d::Store& store, const DistOptions& options,
                             int gpus) {
  if (options.backend == DistBackend::kGloo) return DistBackend::kGloo;
  const bool own_gpu = options.gpu_by_rank && gpus >= env.local_world_size;
  const std::vector<int> without = ranks_without_own_gpu(env, store, own_gpu);
  if (without.empty()) return DistBackend::kNccl;
  if (options.backend == DistBackend::kAuto) return DistBackend::kGloo;
  std::string list;
  for (int r : without) list += (list.empty() ? "" : ", ") + std::to_string(r);
  fail_argument("dist_backend", "nccl: rank(s) ", list,
                " have no GPU of their own (this rank sees ", gpus, " GPU(s) for ",
                env.local_world_size, " ranks on its machine, and trains on device auto or cuda: ",
                options.gpu_by_rank ? "yes" : "no",
                "); NCCL needs one GPU per rank: use gloo or auto");
}

}  // namespace

std::unique_ptr<ProcessGroup> ProcessGroup::create(const DistEnv& env, const DistOptions& options) {
  auto impl = std::make_unique<Impl>();
  DistBackend backend = DistBackend::kGloo;
  const std::string where = "rank " + std::to_string(env.rank) + " of " +
                            std::to_string(env.world_size) + " joining " + env.master_addr + ":" +
                            std::to_string(env.master_port);
  const std::string hint = " (are all ranks started, and MASTER_ADDR/MASTER_PORT reachable?)";
  keep_flight_recorder_off();
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<std::uint16_t>(env.master_port);
    store_options.isServer = env.rank == 0 && !env.agent_store;
    store_options.numWorkers = static_cast<std::size_t>(env.world_size);
    store_options.waitWorkers = true;
    store_options.timeout = options.timeout;
    auto store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
    impl->store = c10::make_intrusive<c10d::PrefixStore>(attempt_prefix(env), store);
    const int gpus = gpu::device_count();
    backend = agree_on_backend(env, *impl->store, options, gpus);
    if (backend == DistBackend::kNccl) {
      impl->gpu = rank_gpu(env, gpus);
      impl->backend =
          make_nccl_backend(impl->store, env.rank, env.world_size, options.timeout, impl->gpu);
    } else {
      impl->backend = make_gloo_backend(env, impl->store, options.timeout);
    }
    if (env.world_size > 1) {
      impl->liveness =
          std::make_shared<Liveness>(env.rank, env.world_size, env.master_addr, store->getPort(),
                                     attempt_prefix(env), store_host(env));
    }
  } catch (const c10::Error& e) {
    fail(where, " failed within ", options.timeout.count(), " s: ", e.what_without_backtrace(),
         hint);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail(where, " failed within ", options.timeout.count(), " s: ", e.what(), hint);
  }
  auto group =
      std::unique_ptr<ProcessGroup>(new ProcessGroup(env, options.timeout, std::move(impl)));
  group->backend_ = backend;
  return group;
}

std::unique_ptr<ProcessGroup> ProcessGroup::over_store(int rank, int size,
                                                       c10::intrusive_ptr<c10d::Store> store,
                                                       const std::string& tag,
                                                       std::chrono::seconds timeout, int gpu) {
  DistEnv env;
  env.rank = env.local_rank = rank;
  env.world_size = env.local_world_size = size;
  const char* addr = std::getenv("MASTER_ADDR");
  env.master_addr = addr != nullptr ? addr : "";
  keep_flight_recorder_off();
  auto impl = std::make_unique<Impl>();
  impl->gpu = gpu;
  return on_store(env, timeout, std::move(store), tag, std::move(impl),
                  gpu >= 0 ? DistBackend::kNccl : DistBackend::kGloo);
}

namespace {

// Runs a collective; its failure names this rank, and what became of the others.
template <typename Op>
void run(const DistEnv& env, std::chrono::seconds timeout, const Liveness* liveness,
         const char* what, Op&& op) {
  std::string error;
  try {
    op()->wait(timeout);
    return;
  } catch (const c10::Error& e) {
    error = e.what_without_backtrace();
  } catch (const std::exception& e) {
    error = e.what();
  }
  const std::string others =
      liveness != nullptr ? liveness->absent_ranks() : "another rank has stopped or is unreachable";
  fail("rank ", env.rank, " of ", env.world_size, ": ", what, " failed: ", others,
       " (the limit, dist_timeout, is ", timeout.count(), " s): ", error);
}

}  // namespace

// c10d's vector arguments hold one tensor per device, so each tensor is its own collective.
// NCCL reduces on the GPU: a CPU tensor goes there and back.
template <typename Op>
void ProcessGroup::each_on_backend(std::vector<at::Tensor>& tensors, const char* what, Op&& op) {
  for (at::Tensor& t : tensors) {
    const bool round_trip = backend_ == DistBackend::kNccl && !t.is_cuda();
    std::vector<at::Tensor> one{round_trip ? t.to(at::Device(at::kCUDA, impl_->gpu)) : t};
    run(env_, timeout_, impl_->liveness.get(), what, [&] { return op(one); });
    if (round_trip) t.copy_(one[0]);
  }
}

void ProcessGroup::all_reduce_sum(std::vector<at::Tensor>& tensors) {
  each_on_backend(tensors, "all-reduce",
                  [&](std::vector<at::Tensor>& one) { return impl_->backend->allreduce(one); });
}

void ProcessGroup::broadcast(std::vector<at::Tensor>& tensors, int root) {
  c10d::BroadcastOptions options;
  options.rootRank = root;
  each_on_backend(tensors, "broadcast", [&](std::vector<at::Tensor>& one) {
    return impl_->backend->broadcast(one, options);
  });
}

void ProcessGroup::all_reduce_mean(const std::vector<at::Tensor>& tensors, int64_t bucket_bytes) {
  const double scale = 1.0 / size();
  size_t first = 0;
  while (first < tensors.size()) {
    size_t last = first;
    int64_t bytes = 0;
    while (
        last < tensors.size() &&
        (last == first || bytes + static_cast<int64_t>(tensors[last].nbytes()) <= bucket_bytes)) {
      bytes += static_cast<int64_t>(tensors[last].nbytes());
      ++last;
    }
    std::vector<at::Tensor> flat;
    for (size_t i = first; i < last; ++i) flat.push_back(tensors[i].reshape(-1));
    std::vector<at::Tensor> bucket{at::cat(flat)};
    all_reduce_sum(bucket);
    bucket[0].mul_(scale);
    int64_t offset = 0;
    for (size_t i = first; i < last; ++i) {
      const int64_t n = tensors[i].numel();
      tensors[i].view(-1).copy_(bucket[0].narrow(0, offset, n));
      offset += n;
    }
    first = last;
  }
}

void ProcessGroup::barrier() {
  run(env_, timeout_, impl_->liveness.get(), "barrier", [&] { return impl_->backend->barrier(); });
}

void ProcessGroup::check_on_every_rank(const std::function<void()>& check,
                                       const std::string& what) {
  std::exception_ptr own;
  try {
    check();
  } catch (...) {
    own = std::current_exception();
  }
  std::vector<at::Tensor> refused{at::zeros({size()}, at::kDouble)};
  if (own) refused[0][rank()].fill_(1.0);
  all_reduce_sum(refused);
  if (own) std::rethrow_exception(own);
  const double* flags = refused[0].data_ptr<double>();
  std::string ranks;
  for (int k = 0; k < size(); ++k) {
    if (flags[k] != 0) ranks += (ranks.empty() ? "" : ", ") + std::to_string(k);
  }
  DGNN_CHECK(ranks.empty(), "rank ", rank(), " of ", size(), ": rank(s) ", ranks, " refused ", what,
             " (their own error says why)");
}

void ProcessGroup::all_to_all(at::Tensor& out, const at::Tensor& in,
                              std::vector<int64_t> out_splits, std::vector<int64_t> in_splits) {
  DGNN_CHECK(
      static_cast<int>(out_splits.size()) == size() && static_cast<int>(in_splits.size()) == size(),
      "all-to-all: ", size(), " ranks need as many splits, got ", out_splits.size(), " and ",
      in_splits.size());
  at::Tensor input = in;
  run(env_, timeout_, impl_->liveness.get(), "all-to-all",
      [&] { return impl_->backend->alltoall_base(out, input, out_splits, in_splits); });
}

std::unique_ptr<ProcessGroup> ProcessGroup::subgroup(const std::string& tag,
                                                     bool cpu_tensors) const {
  auto impl = std::make_unique<Impl>();
  impl->gpu = impl_->gpu;
  impl->liveness = impl_->liveness;
  return on_store(env_, timeout_, impl_->store, tag, std::move(impl),
                  cpu_tensors ? DistBackend::kGloo : backend_);
}

std::unique_ptr<ProcessGroup> ProcessGroup::on_store(
    const DistEnv& env, std::chrono::seconds timeout, c10::intrusive_ptr<c10d::Store> store,
    const std::string& tag, std::unique_ptr<Impl> impl, DistBackend backend) {
  impl->store = c10::make_intrusive<c10d::PrefixStore>("directgnn/" + tag, std::move(store));
  try {
    impl->backend =
        backend == DistBackend::kNccl
            ? make_nccl_backend(impl->store, env.rank, env.world_size, timeout, impl->gpu)
            : make_gloo_backend(env, impl->store, timeout);
  } catch (const c10::Error& e) {
    fail("rank ", env.rank, " of ", env.world_size, ": making the ", tag,
         " group failed: ", e.what_without_backtrace());
  }
  auto group = std::unique_ptr<ProcessGroup>(new ProcessGroup(env, timeout, std::move(impl)));
  group->backend_ = backend;
  return group;
}

}  // namespace directgnn
