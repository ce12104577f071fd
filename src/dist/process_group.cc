#include "dist/process_group.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "directgnn/error.h"

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

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
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
  DGNN_CHECK(env.world_size == 1 || std::getenv("RANK") != nullptr, "WORLD_SIZE is ",
             env.world_size,
             " but RANK is not set; launch with torchrun or "
             "`directgnn launch -n N -- train ...`");
  return env;
}

ProcessGroup::ProcessGroup(DistEnv env, std::chrono::seconds timeout, std::unique_ptr<Impl> impl)
    : env_(std::move(env)), timeout_(timeout), impl_(std::move(impl)) {}

ProcessGroup::~ProcessGroup() = default;

std::unique_ptr<ProcessGroup> ProcessGroup::create(const DistEnv& env,
                                                   std::chrono::seconds timeout) {
  auto impl = std::make_unique<Impl>();
  if (env.world_size > 1) {
    const std::string where = "rank " + std::to_string(env.rank) + " of " +
                              std::to_string(env.world_size) + " joining " + env.master_addr + ":" +
                              std::to_string(env.master_port);
    try {
      c10d::TCPStoreOptions options;
      options.port = static_cast<std::uint16_t>(env.master_port);
      options.isServer = env.rank == 0;
      options.numWorkers = static_cast<std::size_t>(env.world_size);
      options.waitWorkers = true;
      options.timeout = timeout;
      impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
      auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
      // Each rank listens on its own interface: GLOO_SOCKET_IFNAME when set (as in PyTorch),
      // loopback for a single-machine group, else the address of this host's name.
      const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
      if (ifname != nullptr && *ifname != '\0') {
        gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else if (env.master_addr.rfind("127.", 0) == 0 || env.master_addr == "localhost") {
        gloo_options->devices.push_back(
            c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      impl->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank,
                                                               env.world_size, gloo_options);
    } catch (const c10::Error& e) {
      fail(where, " failed within ", timeout.count(), " s: ", e.what_without_backtrace(),
           " (are all ranks started, and MASTER_ADDR/MASTER_PORT reachable?)");
    } catch (const std::exception& e) {
      fail(where, " failed within ", timeout.count(), " s: ", e.what(),
           " (are all ranks started, and MASTER_ADDR/MASTER_PORT reachable?)");
    }
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(env, timeout, std::move(impl)));
}

namespace {

template <typename Op>
void run(const DistEnv& env, std::chrono::seconds timeout, const char* what, Op&& op) {
  try {
    op()->wait(timeout);
  } catch (const c10::Error& e) {
    fail("rank ", env.rank, " of ", env.world_size, ": ", what,
         " failed (another rank has stopped or is unreachable; the limit is --dist-timeout ",
         timeout.count(), " s): ", e.what_without_backtrace());
  } catch (const std::exception& e) {
    fail("rank ", env.rank, " of ", env.world_size, ": ", what,
         " failed (another rank has stopped or is unreachable; the limit is --dist-timeout ",
         timeout.count(), " s): ", e.what());
  }
}

}  // namespace

// c10d's vector arguments hold one tensor per device, so each tensor is its own collective.
void ProcessGroup::all_reduce_sum(std::vector<at::Tensor>& tensors) {
  if (size() == 1) return;
  for (at::Tensor& t : tensors) {
    std::vector<at::Tensor> one{t};
    run(env_, timeout_, "all-reduce", [&] { return impl_->gloo->allreduce(one); });
  }
}

void ProcessGroup::broadcast(std::vector<at::Tensor>& tensors, int root) {
  if (size() == 1) return;
  c10d::BroadcastOptions options;
  options.rootRank = root;
  for (at::Tensor& t : tensors) {
    std::vector<at::Tensor> one{t};
    run(env_, timeout_, "broadcast", [&] { return impl_->gloo->broadcast(one, options); });
  }
}

void ProcessGroup::all_reduce_mean(const std::vector<at::Tensor>& tensors, int64_t bucket_bytes) {
  if (size() == 1) return;
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
  if (size() == 1) return;
  run(env_, timeout_, "barrier", [&] { return impl_->gloo->barrier(); });
}

}  // namespace directgnn
