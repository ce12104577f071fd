// The command line's flags for the run options (train/run_options.h): one flag per option of
// the table, named after it, whose value goes to set_option as given.
#include <algorithm>
#include <set>
#include <string>

#include "directgnn/error.h"
#include "options.h"
#include "train/run_options.h"

namespace directgnn::cli {
namespace {

struct RunFlag {
  const char* name;  // the option's
  bool is_flag;      // takes no value (true when given)
  const char* help;
};

// The help of every run option, as the command line shows it ("link: ..." marks link
// prediction's options, "heterogeneous: ..." those of heterogeneous datasets).
constexpr RunFlag kRunFlags[] = {
    {"model", false,
     "sage (GraphSAGE, mean), gcn or gat (graph attention); heterogeneous datasets: rgcn "
     "(default), hsage (sage) or mlp"},
    {"layers", false, "number of GNN layers"},
    {"hidden", false,
     "hidden units per layer (gat: per head, so a hidden layer is hidden x heads wide)"},
    {"dropout", false, "dropout between layers"},
    {"norm", false, "normalisation after each hidden layer: none, batch or layer"},
    {"residual", true,
     "add each hidden layer's input to its output (a linear projection where the widths "
     "differ)"},
    {"heads", false,
     "gat: attention heads of each hidden layer, concatenated (the output layer has 1)"},
    {"attn_dropout", false, "gat: dropout on the attention coefficients while training"},
    {"bases", false,
     "heterogeneous, rgcn: basis decomposition of the relation weights (0: a full weight each)"},
    {"node_embeddings", false,
     "learnable D-wide embeddings as the input of every featureless node type (on a "
     "homogeneous dataset: instead of its feature table), updated sparsely"},
    {"embedding_optimizer", false,
     "the embeddings' sparse optimiser: adagrad (row-wise, one float of state per row) or adam "
     "(sparse Adam)"},
    {"embedding_lr", false, "the embeddings' learning rate"},
    {"embedding_weight_decay", false,
     "the embeddings' L2 penalty, applied to the rows each step updates"},
    {"embedding_init_hops", false,
     "the tables start as random rows smoothed over this many hops of the graph (each row the "
     "mean of its in-neighbours' rows; link prediction: the training edges only; 0: random "
     "rows)"},
    {"embedding_placement", false,
     "where the tables live on a GPU run: auto (pinned), pinned (host memory the GPU reads "
     "batch rows from; updated in place by the CPU, never on the GPU whole) or host (rows copied "
     "over); on the CPU, host"},
    {"optimizer", false, "adam or sgd"},
    {"lr", false, "learning rate"},
    {"weight_decay", false, "weight decay"},
    {"epochs", false, "training epochs"},
    {"eval_every", false, "evaluate every N epochs"},
    {"seed", false, "random seed (split, sampling, initialisation)"},
    {"split", false, "which of the dataset's splits to use"},
    {"batch_size", false, "seed nodes (link: positive edges) per minibatch"},
    {"fan_out", false,
     "neighbours sampled per hop, seed hop first, -1 = all (default 10 per layer)"},
    {"fan_out_rel", false,
     "heterogeneous: fan-outs per relation, e.g. "
     "\"paper,cites,paper=15,10;author,writes,paper=5,0\" (0: none at that hop; others take "
     "--fan-out)"},
    {"device", false, "auto (a GPU when there is one, else the CPU), cpu, cuda or cuda:N"},
    {"gpu_memory_gib", false,
     "cap what the run may hold in GPU memory (torch's allocator fraction; 0: no cap); auto "
     "placements count within it"},
    {"features", false,
     "where the feature table lives: auto (pinned on a GPU, host on the CPU), host, pinned "
     "(the GPU reads host memory), device (GPU memory) or disk (rows read from features.npy as "
     "batches need them; for tables larger than RAM); heterogeneous: every featured type's, "
     "auto choosing per type by its size and the memory free"},
    {"features_per_type", false,
     "heterogeneous: placements of the node types named, e.g. paper=disk,author=pinned (the "
     "others take --features)"},
    {"gather", false,
     "how a GPU gets feature rows: auto, cpu-copy (CPU gathers, then copies), zero-copy, or "
     "aligned (warp reads on 128-byte boundaries)"},
    {"sampler", false, "neighbour sampling on the cpu or gpu (auto: gpu on a GPU)"},
    {"graph", false, "where the GPU sampler reads the graph: pinned (host memory) or device"},
    {"weighted_sampling", true,
     "draw neighbours with probability proportional to their edge's weight (the dataset "
     "directory's edge_weights.npy)"},
    {"prefetch", false,
     "minibatches sampled and gathered ahead of the one training: auto (2 on a GPU or with "
     "--features disk, else 0) or 0..64 (0: none)"},
    {"sampler_workers", false, "threads preparing minibatches ahead (with --prefetch > 0)"},
    {"shard_features", false,
     "a partitioned dataset (directgnn partition) with one part per rank: on, each rank holds its "
     "part's feature rows and fetches the rest from their owners; off, every rank reads the "
     "whole table; auto: on when the parts match the ranks"},
    {"shard_structure", false,
     "node classification on a partitioned dataset with one part per rank: on, each rank draws "
     "its part's nodes' neighbours and asks the other ranks for theirs (evaluation then samples "
     "with the training fan-outs); off, every rank holds the whole graph; auto: on when the "
     "dataset stores its structure by part with one part per rank"},
    {"remote_cache_gib", false,
     "sharded features: GiB of the other ranks' rows each rank keeps a copy of, so batches never "
     "fetch them: those its first epoch, sampled ahead, reads most (--feature-cache-rank degree: "
     "the highest in-degree nodes; a heterogeneous dataset's: those of the highest in-degree "
     "nodes over every type); 0: none"},
    {"exchange_device", false,
     "sharded features on GPU ranks: where the rows cross between ranks: gpu (each owner's GPU "
     "gathers its rows, pinned or in GPU memory, and they travel GPU to GPU, over NCCL with a "
     "GPU per rank), cpu (over Gloo on the CPU, then copied to the GPU); auto: gpu when every "
     "rank has a GPU of its own"},
    {"seed_assignment", false,
     "sharded features: part (each rank trains on its part's seeds, or link prediction's "
     "positives whose source node it owns, the same number on every rank) or global (the "
     "replicated run's shuffle, cut into one shard per rank: the same "
     "batches and parameters)"},
    {"disk_io", false,
     "with --features disk: how rows are read, auto (io_uring where the kernel allows it, else "
     "pread), io_uring, or pread (a few threads)"},
    {"disk_direct", true, "with --features disk: read with O_DIRECT (no page cache)"},
    {"feature_cache_gib", false,
     "with --features disk: keep this many GiB of the most used rows in RAM, filled before "
     "training (0: no cache); heterogeneous: one cache shared by the types on disk"},
    {"feature_cache_rank", false,
     "which rows the cache keeps: presample (those a sampling pass over the training nodes "
     "gathers most) or degree (the most linked nodes)"},
    {"feature_cache_policy", false,
     "auto (lookahead where the loader plans its batches: node classification on the CPU "
     "with one worker; static elsewhere), static (the filled rows stay), sieve (rows a batch "
     "misses replace cached ones not hit since the hand last passed, as DGL GraphBolt's disk "
     "cache) or lookahead (batches are sampled ahead, and the rows used soonest are kept)"},
    {"lookahead_batches", false,
     "with a look-ahead cache: batches sampled ahead of the one gathered (0: 8)"},
    {"decoder", false,
     "link: dot (the embeddings' dot product) or mlp (an MLP on their Hadamard product, as "
     "OGB's baselines)"},
    {"decoder_layers", false, "link, mlp decoder: its linear layers"},
    {"neg_sampling", false,
     "link: binary (K random pairs per positive) or triplet (K random destinations per "
     "positive's source), as PyG's"},
    {"neg_ratio", false, "link: K, negatives per positive"},
    {"neg_dist", false, "link: uniform, or degree (degree^0.75, as word2vec and PinSage)"},
    {"exact_negatives", true, "link: redraw a negative that is an edge of the graph"},
    {"keep_seed_edges", true, "link: keep a batch's positive edges in its sampled neighbourhoods"},
    {"hits_k", false, "link: K of Hits@K"},
    {"use_val_edges", true, "link: test scores pass messages over the validation edges too"},
    {"steps_per_epoch", false,
     "link: batches per epoch at most, the first of each shuffle (0 = every training edge "
     "once)"},
    {"no_eval", true,
     "no evaluation (timing runs, or graphs too large to score in memory); with --checkpoint "
     "the last epoch's model is saved, for embed and eval"},
    {"eval_sampled", true,
     "heterogeneous node classification: score validation and test nodes on sampled "
     "neighbourhoods (the training fan-outs, in batches, tables read where they live) instead "
     "of layer by layer over the whole graph, for graphs whose layer outputs exceed memory"},
    {"target_relation", false,
     "link, heterogeneous: the relation whose edges are predicted, src,rel,dst (held-out edges "
     "leave it and its reverse rev_REL)"},
    {"link_split", false,
     "link: TRAIN,VAL,TEST fractions of the target relation's edges, a seeded random split (on "
     "a heterogeneous dataset; a homogeneous one stores its split: directgnn convert IN OUT "
     "--link-split)"},
    {"eval_negatives", false,
     "link: 0 scores one shared random pair per validation/test positive (ROC-AUC); K scores K "
     "destinations per positive's source (MRR) (on a heterogeneous dataset; a homogeneous one "
     "stores its negatives: directgnn convert IN OUT --link-split ... --eval-negatives K)"},
};

// The help's heading of the run options, which also tells them from a command's own flags.
constexpr const char* kRunOptionsGroup = "Run options";

std::string option_name(const std::string& flag) {
  std::string name = flag.substr(flag.rfind('-', 1) == 1 ? 2 : 0);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace

void add_run_options(CLI::App* c, const std::vector<RunKind>& kinds) {
  std::set<std::string> listed;
  for (const RunFlag& f : kRunFlags) {
    listed.insert(f.name);
    const RunKind* first = nullptr;
    for (const RunKind& k : kinds) {
      if (takes_option(k, f.name)) {
        first = &k;
        break;
      }
    }
    if (first == nullptr) continue;
    if (f.is_flag) {
      c->add_flag(flag_of(f.name), f.help)->group(kRunOptionsGroup);
      continue;
    }
    const nlohmann::json value = options_json(default_options(*first), *first)[f.name];
    c->add_option(flag_of(f.name), f.help)
        ->default_str(value.is_string() ? value.get<std::string>() : value.dump())
        ->group(kRunOptionsGroup);
  }
  // Every option of the table has its flag.
  for (const RunKind k : kinds) {
    for (const std::string& name : option_names(k)) {
      DGNN_CHECK(listed.count(name) != 0, "the command line has no flag for option ", name);
    }
  }
}

nlohmann::json given_options(const CLI::App& c) {
  nlohmann::json given = nlohmann::json::object();
  for (const CLI::Option* option : c.get_options()) {
    if (option->count() == 0 || option->get_group() != kRunOptionsGroup) continue;
    const std::string name = option_name(option->get_name());
    if (option->get_expected_max() == 0) {
      given[name] = true;
    } else {
      given[name] = option->as<std::string>();
    }
  }
  return given;
}

}  // namespace directgnn::cli
