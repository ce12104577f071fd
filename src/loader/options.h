// The options of the minibatch data path, in two forms:
//   LoaderOptions   what a user chooses, typed, with "auto" where the machine decides. The CLI
//                   (apps/options.cc) and the Python package (python/csrc/classes.cc) each
//                   build one from their own arguments, once; the trainer holds one.
//   LoaderSettings  the same resolved on this machine (no auto left), as MinibatchLoader runs.
// resolve_loader() is the one function from the first to the second, and the one place where
// "auto" becomes a device, a placement, a gather method, a sampler and a prefetch depth.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dist/process_group.h"
#include "feature/disk/row_cache.h"
#include "feature/disk/row_file.h"
#include "feature/feature_store.h"
#include "graph/hetero_graph.h"
#include "io/dataset.h"
#include "sampling/block.h"
#include "sampling/hetero_sampler.h"
#include "sampling/sampler.h"

namespace directgnn {

// device: auto (a GPU when there is one, else the CPU with a one-line note), cpu, cuda (the
// rank's own GPU) or cuda:N.
struct DeviceChoice {
  enum class Kind { kAuto, kCpu, kCuda };
  Kind kind = Kind::kAuto;
  int index = -1;  // kCuda: the GPU, or -1 for the rank's own (GPU 0 in one process)

  static DeviceChoice automatic() { return {}; }
  static DeviceChoice cpu() { return {Kind::kCpu, -1}; }
  static DeviceChoice cuda(int index = -1) { return {Kind::kCuda, index}; }
  bool operator==(const DeviceChoice& o) const { return kind == o.kind && index == o.index; }
};
DeviceChoice parse_device(const std::string& text);
std::string device_choice_name(const DeviceChoice& choice);

// sampler: auto (gpu on a GPU, cpu otherwise), cpu or gpu.
enum class SamplerChoice { kAuto, kCpu, kGpu };
SamplerChoice parse_sampler(const std::string& text);
std::string sampler_name(SamplerChoice choice);

// features: nullopt is auto (pinned on a GPU, host on the CPU; device for a table on a GPU).
std::optional<Placement> parse_feature_placement(const std::string& text);
std::string feature_placement_name(const std::optional<Placement>& placement);

// prefetch: nullopt is auto.
std::optional<int> parse_prefetch(const std::string& text);

// Heterogeneous graphs: one node type's table placement (nullopt: auto), as
// "paper=disk,author=pinned" names them.
struct TypePlacement {
  std::string type;
  std::optional<Placement> placement;
  bool operator==(const TypePlacement& o) const {
    return type == o.type && placement == o.placement;
  }
};
std::vector<TypePlacement> parse_type_placements(const std::string& text);
std::string type_placements_text(const std::vector<TypePlacement>& placements);

struct LoaderOptions {
  // Minibatches prepared ahead by default where preparing overlaps training (a GPU, or rows
  // read from disk); none elsewhere, where the producer would take cores from the model's
  // threads (docs/benchmarks.md).
  static constexpr int kGpuPrefetch = 2;

  std::vector<int64_t> fanouts;  // per hop, seed hop first; -1 = every neighbour
  // Heterogeneous graphs: fan-outs of the relations named (the others take `fanouts`).
  std::vector<RelationFanouts> relation_fanouts;
  int64_t batch_size = 1024;
  DeviceChoice device;
  std::optional<Placement> features;
  // Heterogeneous graphs: the placements of the types named (the others take `features`).
  std::vector<TypePlacement> type_features;
  // Method kAuto: aligned for pinned and device tables, cpu-copy for host and disk ones.
  GatherOptions gather;
  SamplerChoice sampler = SamplerChoice::kAuto;
  GraphPlacement graph = GraphPlacement::kPinned;  // what the GPU sampler reads
  SampleMode sample_mode = SampleMode::kFreshPerLayer;
  bool weighted = false;  // draw neighbours by the graph's edge weights (SamplerOptions::weighted)
  bool edge_ids = false;  // each block carries its edges' ids (Block::edge_ids)
  disk::RowFileOptions disk;  // features disk: how rows are read
  disk::CacheOptions cache;   // features disk: the hot-row cache
  std::optional<int> prefetch;
  int workers = 1;  // threads preparing minibatches ahead
  // A GPU run's cap on what torch's allocator may hold (gpu::limit_memory); 0: none.
  double gpu_memory_gib = 0;
};

struct LoaderSettings {
  std::vector<int64_t> fanouts;
  int64_t batch_size = 1024;
  // Where minibatches are delivered. On a GPU, sampling and gathering run on side streams.
  c10::Device device{c10::kCPU};
  Placement features = Placement::kHost;
  GatherOptions gather;  // method resolved: cpu-copy on the CPU and for host or disk tables
  // Heterogeneous graphs, per node type (empty otherwise): its table's placement (kHost for a
  // featureless type), its gather method, and why `auto` chose that placement ("" when given).
  std::vector<Placement> type_features;
  std::vector<GatherMethod> type_gather;
  std::vector<std::string> type_reasons;
  bool gpu_sampler = false;
  GraphPlacement graph = GraphPlacement::kPinned;
  SampleMode sample_mode = SampleMode::kFreshPerLayer;
  bool weighted = false;
  bool edge_ids = false;
  disk::RowFileOptions disk;
  disk::CacheOptions cache;
  // Minibatches prepared ahead of the one being used (0: each in next(), on the caller's
  // thread), by `workers` threads, each with an OpenMP team of `worker_threads` (0: the
  // process's thread count when the epoch starts, core/threads.h).
  int prefetch = 0;
  int workers = 1;
  int worker_threads = 0;
  // CPU, `host` float32 table only: Minibatch::x holds just block 0's destination rows, and
  // block 0 reads its other sources from the table in place (Minibatch::source_table, by
  // global id), so those rows are not copied first. The sums are the same, for layers that
  // only aggregate their sources (SAGE, GCN): the trainer sets it, where
  // can_read_sources_in_place allows, after resolve_loader.
  bool sources_in_place = false;
  std::string note;  // why a run meant for a GPU runs on the CPU (auto without a GPU)

  bool gpu() const { return device.is_cuda(); }
  int index() const { return device.index() < 0 ? 0 : device.index(); }
};

// Resolves `options` for `dataset` on this machine; a rank of `group` asking for "cuda" gets its
// own GPU (dist/). Throws naming the option that cannot be met and what to choose instead.
// Every front end (the trainer, Python's Loader) calls it once and builds its MinibatchLoader
// from the result.
LoaderSettings resolve_loader(const LoaderOptions& options, const Dataset& dataset,
                              const ProcessGroup* group = nullptr);

// The same for a heterogeneous graph's loaders (loader/hetero_loader.h): the device, the batch
// size, the fan-outs, how batches are prepared ahead (prefetch auto: as resolve_loader's), and
// per featured node type its table's placement (type_features names some, `features` gives
// the rest; auto_type_placement decides `auto`) and gather method. With `gpu_sampler_twin`
// (the node loader's: gpu/HeteroNeighborSampler) the sampler is chosen as resolve_loader
// chooses it, `graph` saying where the GPU reads the relations; otherwise batches are sampled on
// the CPU and sampler gpu is refused, naming `why_cpu`. Throws naming the option, the type and
// the fix.
struct HeteroSampling {
  bool gpu_sampler_twin = false;
  const char* why_cpu = "this loader samples on the CPU";
};
LoaderSettings resolve_hetero_loader(const LoaderOptions& options, const HeteroDataset& dataset,
                                     const ProcessGroup* group = nullptr,
                                     const HeteroSampling& sampling = {});

// What `auto` places a heterogeneous graph's tables in, one at a time in type order, out of the
// room left: on a GPU, GPU memory while it lasts (a quarter of what is free when the run starts,
// the rest left to training), then pinned host memory; on the CPU, host memory. Host memory
// lasts for half of the RAM available; a table beyond it that has its file is read from disk,
// one without stays where it is (host, or pinned on a GPU). A table already on a GPU stays there.
struct PlacementRoom {
  int64_t ram_left = 0;  // bytes
  int64_t gpu_left = 0;  // bytes; 0 without a GPU
};
struct TableFacts {
  int64_t bytes = 0;
  bool on_gpu = false;    // the tensor is on a GPU already
  bool has_file = false;  // a .npy file it can be read from
};
// Returns the placement and why ("fits in GPU memory", ...); takes what it uses from `room`.
std::pair<Placement, std::string> auto_type_placement(const TableFacts& table, bool gpu,
                                                      PlacementRoom& room);

// The device a choice names on this machine ("cuda" is a rank's own GPU in a group, else the
// current device, torch.cuda.current_device()); `note`
// says why auto chose the CPU. For front ends that need a device without a loader.
c10::Device resolve_device(const DeviceChoice& choice, const ProcessGroup* group,
                           std::string* note = nullptr);

// Where a table goes when the user says `choice` (nullopt: auto): device for a table already
// on a GPU, pinned when training on a GPU, host otherwise.
Placement resolve_feature_placement(const std::optional<Placement>& choice, const at::Tensor& table,
                                    bool gpu);

// Whether block 0 may read its sources in place from `dataset`'s table: on the CPU, from a
// `host` table that is a contiguous float32 matrix.
bool can_read_sources_in_place(const Dataset& dataset, const LoaderSettings& settings);

// "cpu" or "cuda:N (name)", as reports print it.
std::string report_device(const LoaderSettings& settings);

}  // namespace directgnn
