// Minibatch training: each epoch shuffles the training nodes, samples blocks, gathers the
// input features, and takes an Adam step on the cross-entropy of the seeds. Evaluation
// (full neighbourhood) runs every `eval_every` epochs; the test accuracy reported is the one
// at the epoch with the best validation accuracy, where the checkpoint is written.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "directgnn/error.h"
#include "dist/process_group.h"
#include "feature/embedding_table.h"
#include "graph/link_split.h"
#include "io/dataset.h"
#include "loader/options.h"
#include "nn/hetero_model.h"
#include "nn/link_decoder.h"
#include "nn/model.h"
#include "sampling/link_sampler.h"

namespace directgnn {

enum class Optimizer { kAdam, kSgd };  // Adam, or plain SGD (no momentum)
Optimizer parse_optimizer(const std::string& text);
std::string optimizer_name(Optimizer optimizer);

// A partitioned dataset's feature table over the ranks (docs/distributed.md): kOn, each rank
// holds its part's rows and fetches the others' from their owners (dist/feature_exchange.h);
// kOff, every rank reads the whole table; kAuto, kOn when the dataset has one part per rank.
enum class FeatureSharding { kAuto, kOn, kOff };
FeatureSharding parse_feature_sharding(const std::string& text);
std::string feature_sharding_name(FeatureSharding sharding);
// The same choice for a partitioned dataset's structure (TrainOptions::shard_structure).
FeatureSharding parse_structure_sharding(const std::string& text);
// Which training seeds a rank of a sharded run takes: kPart, the seeds its part owns (the same
// number on every rank each epoch); kGlobal, its shard of the one global shuffle a replicated
// run cuts, so both draw the same batches and end with the same parameters.
enum class SeedAssignment { kPart, kGlobal };
SeedAssignment parse_seed_assignment(const std::string& text);
std::string seed_assignment_name(SeedAssignment assignment);
// Where a sharded table's ids and rows cross between GPU ranks: kGpu, in GPU memory (each
// owner's GPU gathers its rows there; NCCL carries them when the group is NCCL's); kCpu, on
// the CPU over Gloo, then copied; kAuto, kGpu when the group is NCCL's (a GPU per rank).
enum class ExchangeDevice { kAuto, kCpu, kGpu };
ExchangeDevice parse_exchange_device(const std::string& text);
std::string exchange_device_name(ExchangeDevice device);

// Link prediction's options (train/link_trainer.h, train/hetero_link_trainer.h).
struct LinkOptions {
  DecoderKind decoder = DecoderKind::kDot;
  int64_t decoder_layers = 2;  // mlp: linear layers
  LinkSamplerOptions sampling;
  int64_t hits_k = 50;
  // Test scores pass messages over the training and validation edges (ogbl-collab's rule
  // allows it); validation scores always over the training edges only. Homogeneous graphs.
  bool use_val_edges = false;
  // Batches per epoch, at most (0: every training edge once). An epoch then takes the first
  // batches of its shuffle (PinSage's batches_per_epoch), for graphs whose edges are too many
  // for whole epochs between evaluations.
  int64_t steps_per_epoch = 0;
  // Heterogeneous graphs: the relation whose edges are predicted ("src,rel,dst", or "rel" when
  // unambiguous), and its random split (fractions, evaluation negatives; the run's seed).
  std::string relation;
  LinkSplitOptions split;
};

// Heterogeneous graphs' options (train/hetero_trainer.h).
struct HeteroOptions {
  HeteroModelKind model = HeteroModelKind::kRgcn;
  int64_t bases = 0;  // rgcn: basis decomposition of the relation weights (0: a full weight each)
  // dim > 0: every featureless node type gets a learnable [count, dim] table (its input), read
  // at each step after the previous step's update and updated at the batch's rows only.
  EmbeddingOptions embeddings;
};

// Every run's options (train/run_options.h has the table that names, reads and writes them;
// the kinds of run that do not use an option leave it at its default).
struct TrainOptions {
  ModelConfig model;  // in_dim and num_classes are taken from the dataset; heterogeneous runs
                      // take hidden, layers and dropout from here
  Optimizer optimizer = Optimizer::kAdam;
  double lr = 0.005;
  double weight_decay = 0.0;
  int64_t epochs = 100;
  // The data path: fan-outs (empty: 10 per layer), batch size, where training runs, where the
  // feature table lives, how a GPU gathers, where neighbours are sampled, how many minibatches
  // are prepared ahead and by how many workers (loader/options.h). Prefetching changes no
  // result. sources_in_place is the trainer's to set (from the model).
  LoaderOptions loader;
  int64_t eval_every = 1;
  bool evaluate = true;  // false: no evaluation at all (timing runs); accuracies stay 0
  // Heterogeneous node classification: score the validation and test nodes on sampled
  // neighbourhoods (the training fan-outs and placements, in batches) instead of layer by layer
  // over the whole graph, whose per-type outputs may not fit in memory.
  bool eval_sampled = false;
  uint64_t seed = 0;
  int64_t split = 0;
  std::string metrics_path;  // JSONL, one object per epoch and a final one
  // Best-validation model (checkpoint.pt) and the training state (state.pt) go here; a stop
  // signal saves the state here too (in kDefaultStateDir when empty).
  std::string checkpoint_dir;
  // Also save the training state every N steps (0: only when stopped by a signal).
  int64_t checkpoint_every = 0;
  // Continue from DIR/state.pt: the options must be the ones it was saved with (see
  // options_from_training_state); epochs may be raised to train further.
  std::string resume_dir;
  // Before each epoch, size the thread team to the cores other processes leave free, up to
  // num_threads() (core/free_cores.h); `directgnn train` does when --threads is left at 0.
  bool adapt_threads = false;
  // Stored with the training state for the front end (the dataset it was loaded from).
  nlohmann::json run_info;
  bool quiet = false;    // no per-epoch lines (benchmarks)
  bool verbose = false;  // more about the set-up (why no GPU is used)
  // The first epochs left out of the report's timing means (epoch time and its parts, CPU
  // time, energy): a GPU's first epoch also pays module loading, library handles, the
  // allocator's growth and the staging buffers. Below `epochs` (bench train --warmup-epochs).
  int64_t warmup_epochs = 0;
  // A stop signal saves the training state before the run stops (benchmarks keep none).
  bool save_state_on_stop = true;
  // Every batch is sampled and gathered, and no model step runs: the loader's time alone,
  // with the parameters left as initialised (bench train --load-only). Needs evaluate off.
  bool load_only = false;
  // Data-parallel ranks (dist/process_group.h), or nullptr for one process. With a group,
  // each epoch's shuffled training nodes are cut into one equal shard per rank, gradients are
  // averaged after every backward, and only rank 0 prints and writes metrics and checkpoints.
  ProcessGroup* group = nullptr;
  FeatureSharding shard_features = FeatureSharding::kAuto;  // node and link runs
  SeedAssignment seed_assignment = SeedAssignment::kPart;   // with sharded features
  // Node classification on a partitioned dataset: kOn, each rank draws the neighbours of its
  // part's nodes only, and asks the owners of the rest (dist/hop_exchange.h); evaluation then
  // samples too. kAuto: kOn when this rank loaded only its part's structure.
  FeatureSharding shard_structure = FeatureSharding::kAuto;
  // With sharded features: each rank keeps a copy of the other ranks' rows of the highest
  // in-degree nodes, up to this many GiB, and never fetches those (0: no copies).
  double remote_cache_gib = 0;
  ExchangeDevice exchange_device = ExchangeDevice::kAuto;  // with sharded features
  LinkOptions link;                                        // link prediction
  HeteroOptions hetero;                                    // heterogeneous graphs
};

struct TrainReport {
  int64_t epochs = 0;
  int64_t best_epoch = -1;
  double best_val_acc = 0, test_acc = 0;
  // NaN unless two classes (and evaluated)
  double test_roc_auc = std::numeric_limits<double>::quiet_NaN();
  // Test accuracy of each class at the best epoch (NaN for a class without test nodes), and
  // the classes' names where the dataset gives them.
  std::vector<double> test_class_acc;
  std::vector<std::string> class_names;
  // Means over the epochs after the first `warmup_epochs` (TrainOptions), `timed_epochs` of them:
  double epoch_time_s = 0;  // training time per epoch (excluding evaluation)
  double sample_s = 0, gather_s = 0, compute_s = 0;
  int64_t timed_epochs = 0;
  double wait_s = 0;  // mean per epoch the training loop waited for its next minibatch
  double cpu_s = 0;   // mean process CPU time per epoch (all threads), from /proc
  // GPU runs: peak memory the allocator handed out in any epoch, and energy per epoch (NaN
  // where NVML cannot tell).
  int64_t gpu_peak_bytes = 0;
  double gpu_energy_j = std::numeric_limits<double>::quiet_NaN();
  double gpu_power_w = std::numeric_limits<double>::quiet_NaN();
  std::string device;  // e.g. "cpu" or "cuda:0 (NVIDIA H100 80GB HBM3)"
  std::string mode;    // features/gather/sampler as run, e.g. "pinned/aligned/gpu"
  double eval_s = 0;   // mean per evaluation
  int64_t steps_per_epoch = 0;
  int64_t seeds_per_epoch = 0;  // training nodes one epoch covers, over all ranks
  std::string split_description;
  // --features disk, over the training epochs (not the cache's fill): bytes of the rows
  // gathered, and bytes of the blocks the reader asked of the file for the cache's misses; 0 for
  // other placements. The cache's hit rate (NaN without a cache).
  int64_t disk_bytes_gathered = 0, disk_bytes_asked = 0;
  double disk_cache_hit_rate = std::numeric_limits<double>::quiet_NaN();
  std::string feature_cache;  // the run header's line on the cache, e.g. "Feature cache: ...".
  // CRC-32 of the final parameters' bytes (hex): equal digests mean bitwise-equal models.
  std::string param_digest;

  // The fields above; test_roc_auc only where it is defined.
  nlohmann::json to_json() const;
};

// Where a stopped run without a checkpoint directory saves its training state.
inline constexpr const char* kDefaultStateDir = "directgnn-checkpoint";

// A run that failed on its input (a feature file that shrank, a read error) after saving its
// training state: once the input is mended it resumes from state_dir() (TrainOptions::resume_dir).
class StoppedWithState : public Error {
 public:
  StoppedWithState(const std::string& message, std::string state_dir)
      : Error(message), state_dir_(std::move(state_dir)) {}
  const std::string& state_dir() const { return state_dir_; }

 private:
  std::string state_dir_;
};

// The fan-outs of `options`, defaulting to 10 per layer.
std::vector<int64_t> resolved_fanouts(const TrainOptions& options);

// Trains; throws Interrupted (core/signals.h) after saving the training state when a stop
// signal arrives.
TrainReport train(const Dataset& dataset, const TrainOptions& options, std::ostream& out);

}  // namespace directgnn
