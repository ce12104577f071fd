// Data-parallel ranks on PyTorch's c10d (Gloo, or NCCL when every rank has a GPU of its own),
// behind a thin wrapper so the rest of directgnn never sees c10d's API, which changes between
// PyTorch versions.
//
// Ranks find each other as torchrun arranges it: RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT in the environment; rank 0 hosts the TCP
// store, or torchrun's agent does (TORCHELASTIC_USE_AGENT_STORE). A world of one needs no
// environment and no network. Every collective fails with a directgnn::Error naming this rank and
// the operation once `timeout` passes without the other ranks, instead of hanging.
#pragma once

#include <ATen/Tensor.h>
#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace c10d {
class Store;
}

namespace directgnn {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // torchrun's TORCHELASTIC_USE_AGENT_STORE=True: its agent hosts the store at
  // MASTER_ADDR:MASTER_PORT and every rank, rank 0 too, joins it as a client.
  bool agent_store = false;
  // torchrun's TORCHELASTIC_RESTART_COUNT: the group's keys live under it, so a restarted
  // group never reads an earlier attempt's keys from a store that outlived it.
  int restart_count = 0;
};

enum class DistBackend { kAuto, kGloo, kNccl };
const char* to_string(DistBackend backend);

struct DistOptions {
  // kAuto: NCCL when every rank has a GPU of its own, Gloo otherwise (CPU ranks, or ranks
  // sharing a GPU, which NCCL refuses).
  DistBackend backend = DistBackend::kAuto;
  std::chrono::seconds timeout{300};
  // True when this rank trains on the GPU that rank_gpu() picks (--device auto or cuda on a
  // machine with a GPU); false for CPU ranks and for an explicit cuda:N.
  bool gpu_by_rank = false;
};

// The GPU of a rank whose device is "cuda" without an index: its local rank, wrapped around
// the machine's GPUs, so ranks get a GPU each when there are enough and share otherwise.
int rank_gpu(const DistEnv& env, int device_count);

// Reads torchrun's variables; a missing RANK and WORLD_SIZE mean a single process. Throws
// naming the variable when one is malformed or inconsistent.
DistEnv dist_env_from_environment();

class ProcessGroup {
 public:
  // Joins the group (rank 0 listens on master_port; 0 picks a free port) on the backend
  // `options` asks for, which
  // the ranks agree on through the store; gives up after `options.timeout`. Throws naming
  // the ranks without a GPU of their own when NCCL is asked for and cannot be had.
  static std::unique_ptr<ProcessGroup> create(const DistEnv& env, const DistOptions& options);
  // A Gloo group (CPU tensors) of the ranks that share `store`, its keys under `tag`: a
  // PyTorch script's default group's store (c10d::ProcessGroup::getStore), so the script's
  // own rendezvous serves, with no second store. Gloo listens on GLOO_SOCKET_IFNAME when set,
  // else on MASTER_ADDR's side (loopback for a local one), else on this host's address. Every
  // rank makes it, in the same order; its collectives never meet the script's. With `gpu` >= 0
  // an NCCL group on that GPU of this rank's instead (GPU tensors), for a script whose ranks
  // each have a GPU of their own.
  static std::unique_ptr<ProcessGroup> over_store(int rank, int size,
                                                  c10::intrusive_ptr<c10d::Store> store,
                                                  const std::string& tag,
                                                  std::chrono::seconds timeout, int gpu = -1);
  ~ProcessGroup();

  int rank() const { return env_.rank; }
  int size() const { return env_.world_size; }
  const DistEnv& env() const { return env_; }
  // The backend in use: kGloo or kNccl.
  DistBackend backend() const { return backend_; }

  // In place, over every rank, one collective per tensor: contiguous float32/float64 on the
  // CPU or the rank's GPU (NCCL works on the GPU: CPU tensors make a round trip there).
  void all_reduce_sum(std::vector<at::Tensor>& tensors);
  void broadcast(std::vector<at::Tensor>& tensors, int root);
  // Averages `tensors` (float32, contiguous) over the ranks in place, packed into buckets of
  // about `bucket_bytes` so a model costs a few collectives per step, not one per tensor.
  void all_reduce_mean(const std::vector<at::Tensor>& tensors,
                       int64_t bucket_bytes = int64_t{25} << 20);
  void barrier();
  // Runs `check` on this rank, then tells every rank whether it threw on any (one all-reduce):
  // where it threw, its own error is rethrown; elsewhere an error names the ranks that refused
  // `what`. A check that may fail on some ranks only (their own memory, their own share) thus
  // fails every rank at once, instead of leaving the others waiting in the next collective.
  void check_on_every_rank(const std::function<void()>& check, const std::string& what);
  // Rows of `in` (split along dim 0: in_splits[k] rows go to rank k) are exchanged so that
  // `out` receives out_splits[k] rows from rank k, in rank order: c10d's all_to_all_single.
  // `in` and `out` are contiguous, of one dtype, on the CPU (Gloo) or the rank's GPU (NCCL;
  // Gloo takes GPU tensors too, through host memory).
  void all_to_all(at::Tensor& out, const at::Tensor& in, std::vector<int64_t> out_splits,
                  std::vector<int64_t> in_splits);
  // A second group of the same ranks, over this group's store under `tag`: its collectives
  // never meet this group's, so another thread may run them (the loader's feature exchange
  // beside the training step's all-reduce). Every rank makes it, in the same order. Its
  // backend is this group's, or Gloo when `cpu_tensors` (its tensors stay on the CPU).
  std::unique_ptr<ProcessGroup> subgroup(const std::string& tag, bool cpu_tensors = false) const;

 private:
  struct Impl;
  ProcessGroup(DistEnv env, std::chrono::seconds timeout, std::unique_ptr<Impl> impl);
  // A group of `impl` (its GPU and liveness set) over `store` under "directgnn/<tag>", on
  // `backend` (kGloo or kNccl): what subgroup() and over_store() share.
  static std::unique_ptr<ProcessGroup> on_store(const DistEnv& env, std::chrono::seconds timeout,
                                                c10::intrusive_ptr<c10d::Store> store,
                                                const std::string& tag, std::unique_ptr<Impl> impl,
                                                DistBackend backend);
  template <typename Op>
  void each_on_backend(std::vector<at::Tensor>& tensors, const char* what, Op&& op);
  DistEnv env_;
  DistBackend backend_ = DistBackend::kGloo;
  std::chrono::seconds timeout_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace directgnn
