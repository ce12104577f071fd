// `directgnn generate rmat`: an R-MAT node-classification dataset (graph/rmat.h), written as a
// dataset directory (atomically, features streamed in chunks) or, with --in-memory, built in
// memory only to report its size and how long each phase took.
#include <chrono>
#include <cstdio>

#include "core/resources.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "graph/class_features.h"
#include "graph/rmat.h"
#include "options.h"

namespace directgnn::cli {
namespace {

struct GenerateArgs {
  RmatDatasetOptions o;
  int scale = 0;
  std::string out, feat_dtype = "float32";
  bool in_memory = false;
  int threads = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double gib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 30); }

// Checks the arguments and, before any work, the arrays' sizes against free memory (in
// memory) or disk.
void check_generate(GenerateArgs& a) {
  if (a.scale > 0) {
    DGNN_CHECK(a.scale <= 40, "--scale must be at most 40");
    a.o.graph.num_nodes = int64_t{1} << a.scale;
  }
  DGNN_CHECK(a.in_memory != !a.out.empty(),
             "generate rmat: give --out DIR (write a dataset) or --in-memory (measure only)");
  DGNN_CHECK(a.feat_dtype == "float32" || a.feat_dtype == "float16", "--feat-dtype '", a.feat_dtype,
             "': use float32 or float16");
  DGNN_CHECK(a.o.feat_dim > 0, "--feat-dim must be positive");
  check_rmat_options(a.o.graph);
  const int64_t n = a.o.graph.num_nodes;
  const int64_t drawn_edges = rmat_edges_drawn(a.o.graph);
  const int64_t feat_out_bytes = n * a.o.feat_dim * (a.feat_dtype == "float16" ? 2 : 4);
  // At least: the symmetrised int64 indices, indptr, labels and the feature table.
  const int64_t min_bytes = 2 * drawn_edges * 8 + 2 * (n + 1) * 8 + feat_out_bytes;
  if (a.in_memory) {
    const HostMemory mem = host_memory();
    const int64_t needed = min_bytes;
    DGNN_CHECK(mem.available == 0 || needed <= mem.available, "generate rmat --in-memory: the ",
               "graph and features need at least ", gib_text(needed), " of memory, but only ",
               gib_text(mem.available), " of ", gib_text(mem.total),
               " are available; write to disk with --out DIR (features are streamed) or use a "
               "smaller --scale / --feat-dim");
  } else {
    const int64_t free = disk_free_bytes(a.out);
    DGNN_CHECK(free < 0 || min_bytes <= free, "generate rmat --out ", a.out, ": the dataset needs ",
               "at least ", gib_text(min_bytes), " of disk, but only ", gib_text(free),
               " are free there; choose a directory on a larger disk, --feat-dtype float16, or a "
               "smaller --scale / --feat-dim");
  }
}

// The graph, labels and split, with a line on how long the graph took.
Dataset generate_graph(const GenerateArgs& a) {
  const int64_t n = a.o.graph.num_nodes;
  std::printf(
      "generate rmat: %lld nodes, edge factor %g (a=%g b=%g c=%g), %lld %s features, "
      "%lld classes, seed %llu, %d thread(s)\n",
      static_cast<long long>(n), a.o.graph.edge_factor, a.o.graph.a, a.o.graph.b, a.o.graph.c,
      static_cast<long long>(a.o.feat_dim), a.feat_dtype.c_str(),
      static_cast<long long>(a.o.num_classes), static_cast<unsigned long long>(a.o.graph.seed),
      num_threads());
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  RmatGraph g = generate_rmat(a.o.graph);
  const double graph_s = seconds_since(t0);
  const auto drawn = static_cast<double>(rmat_edges_drawn(a.o.graph));
  Dataset ds;
  ds.name = "rmat-" + std::to_string(n);
  ds.source = "generate rmat";
  ds.graph = std::move(g.graph);
  add_rmat_labels_and_split(a.o, g.rmat_id, ds);
  g.rmat_id = at::Tensor();
  const at::Tensor degrees = ds.graph.degrees();
  std::printf(
      "graph: %lld directed edges (%.0f drawn), max degree %lld, mean %.1f; %.1f s, "
      "%.2f M drawn edges/s per thread\n",
      static_cast<long long>(ds.graph.num_edges()), drawn,
      static_cast<long long>(degrees.max().item<int64_t>()),
      static_cast<double>(ds.graph.num_edges()) / n, graph_s,
      drawn / graph_s / 1e6 / num_threads());
  std::fflush(stdout);
  return ds;
}

// The feature table: built in memory, or streamed into the dataset directory with the rest.
void make_features(GenerateArgs& a, Dataset& ds) {
  if (a.in_memory) {
    a.o.feat_dtype = a.feat_dtype == "float16" ? at::kHalf : at::kFloat;
    ds.features = make_rmat_features(a.o, ds.labels);
  } else {
    const ClassFeatures features(a.o.num_classes, a.o.feat_dim, a.o.signal, a.o.graph.seed);
    const int64_t* labels = ds.labels.data_ptr<int64_t>();
    FeatureStream stream;
    stream.dim = a.o.feat_dim;
    stream.dtype = a.feat_dtype == "float16" ? at::kHalf : at::kFloat;
    stream.fill = [&](int64_t begin, int64_t end, float* rows) {
      features.fill(labels, begin, end, rows);
    };
    stream.rows = a.o.graph.num_nodes;
    save_dataset_dir(ds, a.out, stream);
  }
}

void run_generate(GenerateArgs& a) {
  check_generate(a);
  const int64_t n = a.o.graph.num_nodes;
  Dataset ds = generate_graph(a);
  const auto t0 = std::chrono::steady_clock::now();
  make_features(a, ds);
  const double feat_s = seconds_since(t0);
  const int64_t feat_bytes = n * a.o.feat_dim * (a.feat_dtype == "float16" ? 2 : 4);
  const int64_t total_bytes =
      feat_bytes + ds.graph.indptr.nbytes() + ds.graph.indices.nbytes() + ds.labels.nbytes();
  std::printf("features: %.2f GiB %s; %.1f s\n", gib(feat_bytes),
              a.in_memory ? "in memory" : "written", feat_s);
  std::printf(
      "%s %s: %.2f GiB of arrays; split %lld / %lld / %lld; peak resident memory "
      "%.2f GiB (%.2fx the arrays)\n",
      a.in_memory ? "Built" : "Wrote", a.in_memory ? "in memory" : a.out.c_str(), gib(total_bytes),
      static_cast<long long>(ds.splits[0].train.numel()),
      static_cast<long long>(ds.splits[0].val.numel()),
      static_cast<long long>(ds.splits[0].test.numel()), gib(peak_rss_bytes()),
      static_cast<double>(peak_rss_bytes()) / static_cast<double>(total_bytes));
}

}  // namespace

void register_generate(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* generate = app.add_subcommand("generate", "make a synthetic dataset");
  generate->require_subcommand(1);
  CLI::App* c = generate->add_subcommand(
      "rmat",
      "R-MAT graph (Graph500 parameters), class-dependent features, a papers100M-like split");
  c->add_option("--scale", a->scale, "2^scale nodes")->check(CLI::Range(1, 40));
  c->add_option("--nodes", a->o.graph.num_nodes, "number of nodes (instead of --scale)")
      ->excludes("--scale");
  c->add_option("--edge-factor", a->o.graph.edge_factor, "undirected edges drawn per node")
      ->capture_default_str();
  c->add_option("-a", a->o.graph.a, "R-MAT quadrant probability a")->capture_default_str();
  c->add_option("-b", a->o.graph.b, "R-MAT quadrant probability b")->capture_default_str();
  c->add_option("-c", a->o.graph.c, "R-MAT quadrant probability c")->capture_default_str();
  c->add_option("--feat-dim", a->o.feat_dim, "feature dimension")->capture_default_str();
  c->add_option("--feat-dtype", a->feat_dtype, "float32 or float16")->capture_default_str();
  c->add_option("--classes", a->o.num_classes, "number of classes")->capture_default_str();
  c->add_option("--train", a->o.train_fraction, "fraction of nodes in the train split")
      ->capture_default_str();
  c->add_option("--val", a->o.val_fraction, "fraction in the validation split")
      ->capture_default_str();
  c->add_option("--test", a->o.test_fraction, "fraction in the test split")->capture_default_str();
  c->add_option("--seed", a->o.graph.seed, "random seed")->capture_default_str();
  c->add_option("--out", a->out, "dataset directory to write (must not exist)");
  c->add_flag("--in-memory", a->in_memory, "build in memory only, report sizes and times");
  add_threads_option(c, &a->threads);
  c->callback([a] { run_generate(*a); });
}

}  // namespace directgnn::cli
