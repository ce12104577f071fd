// `directgnn generate rmat`: an R-MAT node-classification dataset (graph/rmat.h), written as a
// dataset directory (atomically, features streamed in chunks) or, with --in-memory, built in
// memory only to report its size and how long each phase took. `directgnn generate mag`: the
// same for an ogbn-mag- or MAG240M-shaped heterogeneous dataset (graph/mag_generator.h), whose
// graph is built in memory and whose paper features are written as they are made.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/resources.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "graph/class_features.h"
#include "graph/mag_generator.h"
#include "graph/rmat.h"
#include "io/hetero_dir.h"
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

struct MagArgs {
  MagOptions o;
  std::string shape = "ogbn-mag", out, feat_dtype = "float32";
  bool in_memory = false;
  int threads = 0;
};

// The shape's defaults for every option the command line left out.
void apply_shape_defaults(MagArgs& a, const CLI::App& c) {
  DGNN_CHECK(a.shape == "ogbn-mag" || a.shape == "mag240m", "--shape '", a.shape,
             "': use ogbn-mag or mag240m");
  const MagOptions d =
      mag_shape_defaults(a.shape == "mag240m" ? MagShape::kMag240m : MagShape::kOgbnMag);
  a.o.shape = d.shape;
  const auto unset = [&c](const char* name) { return c.count(name) == 0; };
  if (unset("--feat-dim")) a.o.feat_dim = d.feat_dim;
  if (unset("--feat-dtype")) a.feat_dtype = d.feat_dtype == at::kHalf ? "float16" : "float32";
  if (unset("--classes")) a.o.num_classes = d.num_classes;
  if (unset("--labelled")) a.o.labelled_fraction = d.labelled_fraction;
  if (unset("--train")) a.o.train_fraction = d.train_fraction;
  if (unset("--val")) a.o.val_fraction = d.val_fraction;
}

// Checks the arguments and, before any work, the arrays' sizes against free memory (the graph
// is built in memory, and the features too with --in-memory; --out writes them as they are
// made) and, with --out, against the disk.
void check_generate_mag(MagArgs& a) {
  DGNN_CHECK(a.in_memory != !a.out.empty(),
             "generate mag: give --out DIR (write a dataset) or --in-memory (measure only)");
  DGNN_CHECK(a.feat_dtype == "float32" || a.feat_dtype == "float16", "--feat-dtype '", a.feat_dtype,
             "': use float32 or float16");
  a.o.feat_dtype = a.feat_dtype == "float16" ? at::kHalf : at::kFloat;
  check_mag_options(a.o);
  int64_t drawn = 0;
  for (const int64_t m : mag_edge_targets(a.o.scale, a.o.shape)) drawn += m;
  const int64_t papers = mag_node_counts(a.o.scale, a.o.shape)[0];
  const int64_t feat_bytes = papers * a.o.feat_dim * (a.feat_dtype == "float16" ? 2 : 4);
  // Both directions of every edge as int64 indices, and the feature table in memory.
  const int64_t graph_bytes = 2 * drawn * 8;
  const int64_t memory_bytes = graph_bytes + (a.in_memory ? feat_bytes : 0);
  const HostMemory mem = host_memory();
  DGNN_CHECK(mem.available == 0 || memory_bytes <= mem.available, "generate mag: the graph",
             a.in_memory ? " and features need" : " needs", " at least ", gib_text(memory_bytes),
             " of memory, but only ", gib_text(mem.available), " of ", gib_text(mem.total),
             " are available; use a smaller --scale",
             a.in_memory ? ", or write to disk with --out DIR (features are streamed)" : "");
  if (a.in_memory) return;
  const int64_t min_bytes = graph_bytes / 2 + feat_bytes;  // int32 indices on disk
  const int64_t free = disk_free_bytes(a.out);
  DGNN_CHECK(free < 0 || min_bytes <= free, "generate mag --out ", a.out, ": the dataset needs ",
             "at least ", gib_text(min_bytes), " of disk, but only ", gib_text(free),
             " are free there; choose a directory on a larger disk, --feat-dtype float16, or a "
             "smaller --scale / --feat-dim");
}

// Per type its count, per relation its edges (against the edges drawn, for the forward ones)
// and its largest and mean row: the degrees a destination node receives.
// Per type its count, per relation its edges (against the edges drawn, for the forward ones)
// and its largest and mean row: the degrees a destination node receives.
void print_mag_shape(const HeteroDataset& ds, const MagOptions& o) {
  for (const NodeType& t : ds.node_types) {
    std::printf("  %-15s %10lld nodes", t.name.c_str(), static_cast<long long>(t.count));
    if (t.has_features()) std::printf(", %lld features", static_cast<long long>(t.feat_dim()));
    if (t.name == "paper" && !t.has_features())
      std::printf(", %lld features (written)", static_cast<long long>(o.feat_dim));
    std::printf("\n");
  }
  const std::vector<int64_t> drawn = mag_edge_targets(o.scale, o.shape);
  const char* forward[] = {"cites", "writes", "affiliated_with", "has_topic"};
  for (const Relation& r : ds.relations) {
    const at::Tensor deg = r.graph.degrees();
    std::printf("  %-36s %10lld edges, in-degree max %lld mean %.1f", r.key().c_str(),
                static_cast<long long>(r.num_edges()),
                static_cast<long long>(deg.max().item<int64_t>()),
                static_cast<double>(r.num_edges()) / static_cast<double>(deg.numel()));
    const auto it = std::find(std::begin(forward), std::end(forward), r.rel);
    if (it != std::end(forward) && it - std::begin(forward) < static_cast<long>(drawn.size())) {
      std::printf(" (%lld drawn%s)", static_cast<long long>(drawn[it - std::begin(forward)]),
                  r.rel == "cites" ? ", then symmetrised" : "");
    }
    std::printf("\n");
  }
}

// The dataset: with --out its paper features are written as they are made, never whole in
// memory; with --in-memory they are built.
HeteroDataset make_mag(const MagArgs& a, MagTimings& timings) {
  if (a.in_memory) return generate_mag(a.o, &timings);
  HeteroDataset ds = generate_mag_graph(a.o, &timings);
  const auto t0 = std::chrono::steady_clock::now();
  save_hetero_dir(ds, a.out, {{"paper", mag_paper_features(a.o)}});
  timings.phases.emplace_back("write", seconds_since(t0));
  return ds;
}

void run_generate_mag(MagArgs& a) {
  check_generate_mag(a);
  const std::vector<int64_t> counts = mag_node_counts(a.o.scale, a.o.shape);
  std::printf(
      "generate mag: %s shape, scale %g (%lld papers, %lld labelled), %lld %s paper features, "
      "%lld classes, signal %g, mixing %g, seed %llu, %d thread(s)\n",
      a.shape.c_str(), a.o.scale, static_cast<long long>(counts[0]),
      static_cast<long long>(std::llround(a.o.labelled_fraction * static_cast<double>(counts[0]))),
      static_cast<long long>(a.o.feat_dim), a.feat_dtype.c_str(),
      static_cast<long long>(a.o.num_classes), a.o.signal, a.o.mixing,
      static_cast<unsigned long long>(a.o.seed), num_threads());
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  MagTimings timings;
  HeteroDataset ds = make_mag(a, timings);
  const double build_s = seconds_since(t0);
  print_mag_shape(ds, a.o);
  std::printf("phases:");
  for (const auto& [phase, seconds] : timings.phases)
    std::printf(" %s %.2f s;", phase.c_str(), seconds);
  std::printf(" %s in %.1f s\n", a.in_memory ? "built" : "built and written", build_s);
  const int64_t feat_bytes = counts[0] * a.o.feat_dim * (a.o.feat_dtype == at::kHalf ? 2 : 4);
  int64_t total_bytes = ds.labels.nbytes() + feat_bytes;
  for (const Relation& r : ds.relations) {
    total_bytes += r.graph.indptr.nbytes() + r.graph.indices.nbytes();
  }
  const Split& s = ds.splits[0];
  std::printf(
      "%s %s: %.2f GiB of arrays; split %lld / %lld / %lld; peak resident memory %.2f GiB "
      "(%.2fx the arrays)\n",
      a.in_memory ? "Built" : "Wrote", a.in_memory ? "in memory" : a.out.c_str(), gib(total_bytes),
      static_cast<long long>(s.train.numel()), static_cast<long long>(s.val.numel()),
      static_cast<long long>(s.test.numel()), gib(peak_rss_bytes()),
      static_cast<double>(peak_rss_bytes()) / static_cast<double>(total_bytes));
}

void register_generate_mag(CLI::App* generate) {
  auto a = std::make_shared<MagArgs>();
  CLI::App* c = generate->add_subcommand(
      "mag",
      "ogbn-mag- or MAG240M-shaped heterogeneous graph: labels planted in the relations, weak "
      "paper features");
  c->add_option("--shape", a->shape,
                "ogbn-mag (4 types, 4 relations) or mag240m (paper, author, institution; 768-d "
                "float16 features, 153 classes, 1.15% of papers labelled)")
      ->capture_default_str();
  c->add_option("--scale", a->o.scale, "1: the shape's size; counts scale linearly")
      ->capture_default_str();
  c->add_option("--feat-dim", a->o.feat_dim, "paper feature dimension (mag240m: 768)")
      ->capture_default_str();
  c->add_option("--feat-dtype", a->feat_dtype, "float32 or float16 (mag240m: float16)")
      ->capture_default_str();
  c->add_option("--classes", a->o.num_classes, "number of classes, communities (mag240m: 153)")
      ->capture_default_str();
  c->add_option("--signal", a->o.signal, "class-mean scale of paper features against unit noise")
      ->capture_default_str();
  c->add_option("--mixing", a->o.mixing, "chance a neighbour comes from a random community")
      ->capture_default_str();
  c->add_option("--labelled", a->o.labelled_fraction,
                "fraction of papers with a label, the rest -1 (mag240m: 0.011484)")
      ->capture_default_str();
  c->add_option("--train", a->o.train_fraction,
                "fraction of labelled papers in the train split (mag240m: 0.7956)")
      ->capture_default_str();
  c->add_option("--val", a->o.val_fraction,
                "fraction in the validation split, rest test (mag240m: 0.0994)")
      ->capture_default_str();
  c->add_option("--seed", a->o.seed, "random seed")->capture_default_str();
  c->add_option("--out", a->out,
                "heterogeneous dataset directory to write (must not exist); paper features are "
                "written as they are made");
  c->add_flag("--in-memory", a->in_memory, "build in memory only, report sizes and times");
  add_threads_option(c, &a->threads);
  c->callback([a, c] {
    apply_shape_defaults(*a, *c);
    run_generate_mag(*a);
  });
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
  register_generate_mag(generate);
}

}  // namespace directgnn::cli
