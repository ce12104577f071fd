#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/build_info.h"
#include "core/resources.h"
#include "feature/feature_store.h"
#include "gpu/runtime.h"
#include "io/hetero_dir.h"
#include "options.h"

namespace directgnn::cli {

namespace {

void print_labels(const Dataset& ds) {
  if (!ds.has_labels()) {
    std::printf("Classes:    none (no labels: link prediction only)\n");
    return;
  }
  const int64_t n = ds.num_nodes();
  const at::Tensor labelled = ds.labels.ge(0);
  const at::Tensor counts = at::bincount(ds.labels.masked_select(labelled), {}, ds.num_classes);
  std::printf("Classes:    %lld (nodes per class:", static_cast<long long>(ds.num_classes));
  for (int64_t k = 0; k < ds.num_classes; ++k) {
    std::printf(" %lld", static_cast<long long>(counts[k].item<int64_t>()));
  }
  std::printf("; unlabelled %lld)\n", static_cast<long long>(n - labelled.sum().item<int64_t>()));
}

void print_link_split(const Dataset& ds) {
  if (!ds.link.defined()) {
    std::printf("Link split: none stored (link prediction uses a seeded random split)\n");
    return;
  }
  const LinkSplit& s = ds.link;
  std::printf("Link split: train %lld, validation %lld, test %lld positive edges\n",
              static_cast<long long>(s.train.size(0)), static_cast<long long>(s.val.size(0)),
              static_cast<long long>(s.test.size(0)));
  if (s.negatives == LinkNegatives::kShared) {
    std::printf("Negatives:  shared pairs: validation %lld, test %lld\n",
                static_cast<long long>(s.val_neg.size(0)),
                static_cast<long long>(s.test_neg.size(0)));
  } else if (s.negatives == LinkNegatives::kPerSource) {
    std::printf("Negatives:  %lld destinations per positive's source (validation), %lld (test)\n",
                static_cast<long long>(s.val_neg.size(1)),
                static_cast<long long>(s.test_neg.size(1)));
  } else {
    std::printf("Negatives:  none stored\n");
  }
}

// Per node type: count and features; per relation: edges and in-degree (rows are destinations).
void print_hetero(const HeteroDataset& ds) {
  int width = 8, rel_width = 11;
  for (const NodeType& t : ds.node_types) width = std::max(width, static_cast<int>(t.name.size()));
  for (const Relation& r : ds.relations) {
    rel_width = std::max(rel_width, static_cast<int>(r.key().size()));
  }
  std::printf("Dataset:    %s (%s), heterogeneous\n", ds.name.c_str(), ds.source.c_str());
  std::printf("Node types: %zu, %lld nodes\n", ds.node_types.size(),
              static_cast<long long>(ds.num_nodes()));
  std::printf("  %-*s %12s  %s\n", width, "type", "nodes", "features");
  for (const NodeType& t : ds.node_types) {
    std::printf("  %-*s %12lld  ", width, t.name.c_str(), static_cast<long long>(t.count));
    if (!t.has_features()) {
      std::printf("none\n");
      continue;
    }
    std::printf("%lld %s\n", static_cast<long long>(t.feat_dim()),
                t.features.scalar_type() == at::kHalf ? "float16" : "float32");
  }
  std::printf("Relations:  %zu, %lld edges\n", ds.relations.size(),
              static_cast<long long>(ds.num_edges()));
  std::printf("  %-*s %12s %9s %9s %8s\n", rel_width, "src,rel,dst", "edges", "in mean", "in max",
              "no in");
  for (const Relation& r : ds.relations) {
    const at::Tensor deg = r.graph.degrees();
    const int64_t n = r.graph.num_nodes();
    std::printf("  %-*s %12lld %9.2f %9lld %7.1f%%\n", rel_width, r.key().c_str(),
                static_cast<long long>(r.num_edges()), static_cast<double>(r.num_edges()) / n,
                static_cast<long long>(deg.max().item<int64_t>()),
                100.0 * static_cast<double>(deg.eq(0).sum().item<int64_t>()) / n);
  }
  if (ds.parts() > 0) print_hetero_partition(ds);
  if (ds.target_type < 0) {
    std::printf("Target:     none (no labels)\n");
    return;
  }
  const int64_t unlabelled = ds.labels.lt(0).sum().item<int64_t>();
  std::printf("Target:     %s, %lld classes (unlabelled %lld)\n", ds.target().name.c_str(),
              static_cast<long long>(ds.num_classes), static_cast<long long>(unlabelled));
  if (ds.splits.empty()) std::printf("Splits:     none stored\n");
  for (size_t k = 0; k < ds.splits.size(); ++k) {
    std::printf("Split %zu:    train %lld, validation %lld, test %lld\n", k,
                static_cast<long long>(ds.splits[k].train.numel()),
                static_cast<long long>(ds.splits[k].val.numel()),
                static_cast<long long>(ds.splits[k].test.numel()));
  }
}

// One GPU gather of `ids` from `table` against the CPU's rows: "" when they are equal, else
// what differs.
std::string check_gather(const at::Tensor& table, const at::Tensor& ids, int device,
                         Placement placement, GatherOptions options) {
  const FeatureStore host(table);
  const FeatureStore store(table, placement, device);
  const at::Tensor got = store.gather(ids, c10::Device(c10::kCUDA, device), options).cpu();
  return at::equal(got, host.gather(ids)) ? "" : "rows differ from the CPU's";
}

// How the host waits for cuda:`device`: the process's CPU seconds over a kernel that spins
// about 0.2 s, under CUDA's default wait and under a blocking one. The flag read back says
// what was set; the CPU seconds say whether it took effect.
std::string host_wait_line(int device) {
  auto measure = [device](gpu::HostSync sync) {
    gpu::set_host_sync(sync);
    const double cpu0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    gpu::delay_current_stream(device, 300'000'000);  // cycles: ~0.2 s at 1.5-2 GHz
    gpu::synchronize_current_stream(device);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return std::pair<double, double>{wall, process_cpu_seconds() - cpu0};
  };
  try {
    const auto [wall_auto, cpu_auto] = measure(gpu::HostSync::kAuto);
    const auto [wall_block, cpu_block] = measure(gpu::HostSync::kBlocking);
    const std::string read_back = gpu::host_sync_name(gpu::host_sync(device));
    gpu::set_host_sync(gpu::HostSync::kAuto);
    char line[256];
    std::snprintf(line, sizeof(line),
                  "host wait: cuda:%d, auto used %.3f s of CPU over a %.3f s kernel, blocking "
                  "%.3f s over %.3f s (read back: %s)",
                  device, cpu_auto, wall_auto, cpu_block, wall_block, read_back.c_str());
    return line;
  } catch (const Error& e) {
    return "host wait: cuda:" + std::to_string(device) + ", not measured (" + e.what() + ")";
  }
}

// --check-gpu: every visible GPU gathers rows of two small tables (odd float32 rows, wide
// float16 rows) by each method and compares them with the CPU's. Says what it ran; false when
// there is no GPU or a gather differs.
bool check_gpus() {
  if (!gpu::available()) {
    std::printf("GPU check: nothing to run (%s)\n", gpu::unavailable_reason().c_str());
    return false;
  }
  at::manual_seed(7);
  const std::vector<at::Tensor> tables = {at::randn({4099, 101}),
                                          at::randn({1031, 1204}).to(at::kHalf)};
  const std::vector<std::tuple<const char*, Placement, GatherOptions>> methods = {
      {"cpu-copy", Placement::kHost, {GatherMethod::kCpuCopy, false, 0}},
      {"zero-copy", Placement::kPinned, {GatherMethod::kZeroCopy, false, 0}},
      {"aligned", Placement::kPinned, {GatherMethod::kAligned, false, 0}},
      {"aligned+sort", Placement::kPinned, {GatherMethod::kAligned, true, 0}},
      {"device", Placement::kDevice, {GatherMethod::kAligned, false, 0}}};
  bool ok = true;
  for (int d = 0; d < gpu::device_count(); ++d) {
    const auto start = std::chrono::steady_clock::now();
    std::string failures;
    for (const at::Tensor& table : tables) {
      const at::Tensor ids = at::randint(table.size(0), {10007}, at::kLong);
      for (const auto& [name, placement, options] : methods) {
        std::string why;
        try {
          why = check_gather(table, ids, d, placement, options);
        } catch (const std::exception& e) {
          why = e.what();
        }
        if (!why.empty())
          failures += std::string("\n  ") + name + ", " + std::to_string(table.size(1)) + " x " +
                      c10::toString(table.scalar_type()) + ": " + why;
      }
    }
    gpu::synchronize(d);
    const double ms =
        1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s\n", host_wait_line(d).c_str());
    if (failures.empty()) {
      std::printf(
          "GPU check: cuda:%d ran the gather kernels (cpu-copy, zero-copy, aligned, "
          "aligned+sort, device) and matched the CPU in %.0f ms\n",
          d, ms);
    } else {
      std::printf("GPU check: cuda:%d FAILED:%s\n", d, failures.c_str());
      ok = false;
    }
  }
  return ok;
}

}  // namespace

// Each type's ids per part (a partitioned dataset's book), the parts' edges and seeds summed over
// the types, and the in-edges whose source another part owns.
void print_hetero_partition(const HeteroDataset& ds) {
  const int64_t parts = ds.parts();
  std::vector<int64_t> edges(parts, 0), seeds(parts, 0);
  int64_t cut = 0;
  for (const NodeType& t : ds.node_types) {
    for (int64_t k = 0; k < parts; ++k) {
      edges[k] += t.partition.edges[k];
      seeds[k] += t.partition.seeds[k];
    }
    cut += t.partition.edge_cut;
  }
  const int64_t m = ds.num_edges();
  std::printf(
      "Partition:  %lld parts by %s; edge cut %lld (%.1f%% of edges); node_ids.npy of each "
      "type maps a stored node to its original id\n",
      static_cast<long long>(parts), ds.node_types[0].partition.method.c_str(),
      static_cast<long long>(cut), m > 0 ? 100.0 * static_cast<double>(cut) / m : 0.0);
  for (int64_t k = 0; k < parts; ++k) {
    std::printf("  part %lld:", static_cast<long long>(k));
    for (const NodeType& t : ds.node_types) {
      const auto& o = t.partition.offsets;
      std::printf(" %s %lld..%lld,", t.name.c_str(), static_cast<long long>(o[k]),
                  static_cast<long long>(o[k + 1] - 1));
    }
    std::printf(" %lld edges, %lld training seeds\n", static_cast<long long>(edges[k]),
                static_cast<long long>(seeds[k]));
  }
  std::string by_part;
  for (const NodeType& t : ds.node_types) {
    if (t.partition.features_by_part) by_part += (by_part.empty() ? "" : ", ") + t.name;
  }
  if (!by_part.empty()) {
    std::printf("  features by part (nodes/TYPE/part-K/features.npy): %s\n", by_part.c_str());
  }
}

void print_partition(const Dataset& ds) {
  const PartitionBook& b = ds.partition;
  const int64_t m = ds.graph.num_edges();
  std::printf("Partition:  %lld parts by %s; edge cut %lld (%.1f%% of edges)\n",
              static_cast<long long>(b.parts()), b.method.c_str(),
              static_cast<long long>(b.edge_cut), m > 0 ? 100.0 * b.edge_cut / m : 0.0);
  for (int64_t k = 0; k < b.parts(); ++k) {
    std::printf("  part %lld: ids %lld..%lld (%lld nodes), %lld edges, %lld training seeds\n",
                static_cast<long long>(k), static_cast<long long>(b.offsets[k]),
                static_cast<long long>(b.offsets[k + 1] - 1),
                static_cast<long long>(b.offsets[k + 1] - b.offsets[k]),
                static_cast<long long>(b.edges[k]), static_cast<long long>(b.seeds[k]));
  }
  if (b.features_by_part) {
    std::printf(
        "  features: one file per part (part-K/features.npy); each rank of a sharded "
        "run reads only its own\n");
  }
  if (b.structure_by_part) {
    std::printf(
        "  structure: each part's in-edges in part-K/ (indptr.npy, indices.npy); each rank of "
        "a node run holds only its own and asks the others for their neighbours\n");
  }
}

void register_info(CLI::App& app) {
  struct Args {
    std::string path;
    bool keep_self_loops = false;
    int threads = 0;
    bool build = false;
    bool check_gpu = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand("info", "describe a dataset, or this build (--build)");
  c->add_option("PATH", args->path,
                "dataset directory (heterogeneous too), OGB raw directory or .npz file");
  c->add_flag("--build", args->build,
              "print the torch, CUDA, BLAS and OpenMP this build uses, and the GPUs it sees");
  c->add_flag("--check-gpu", args->check_gpu,
              "with --build: run the gather kernels once on every visible GPU and compare "
              "them with the CPU (exits 1 when there is no GPU or they differ)");
  c->add_flag("--keep-self-loops", args->keep_self_loops, "keep self-loops when importing .npz");
  add_threads_option(c, &args->threads);
  c->callback([args] {
    if (args->build) {
      std::fputs(build_info_text(build_info()).c_str(), stdout);
      if (args->check_gpu && !check_gpus()) throw CLI::RuntimeError(1);
      if (args->path.empty()) return;
    }
    if (args->check_gpu) throw CLI::RequiredError("--build (--check-gpu checks the build)");
    if (args->path.empty()) throw CLI::RequiredError("PATH (or --build)");
    if (is_hetero_dir(args->path)) return print_hetero(load_hetero_dir(args->path));
    if (looks_like_ogb_hetero(args->path)) {
      return print_hetero(import_ogb_hetero(args->path, HeteroImportOptions{}));
    }
    const Dataset ds = load_dataset(args->path, import_options(args->keep_self_loops));
    const at::Tensor deg = ds.graph.degrees();
    const at::Tensor sorted = std::get<0>(deg.sort());
    const int64_t n = ds.num_nodes();
    std::printf("Dataset:    %s (%s)\n", ds.name.c_str(), ds.source.c_str());
    std::printf("Nodes:      %lld\n", static_cast<long long>(n));
    std::printf("Edges:      %lld directed (%s)\n", static_cast<long long>(ds.graph.num_edges()),
                ds.directed ? "directed graph" : "both directions stored");
    std::printf("Degree:     min %lld, mean %.2f, median %lld, max %lld, isolated %lld\n",
                static_cast<long long>(sorted[0].item<int64_t>()),
                deg.to(at::kDouble).mean().item<double>(),
                static_cast<long long>(sorted[n / 2].item<int64_t>()),
                static_cast<long long>(sorted[n - 1].item<int64_t>()),
                static_cast<long long>(deg.eq(0).sum().item<int64_t>()));
    if (ds.graph.weights.defined()) {
      const at::Tensor& w = ds.graph.weights;
      std::printf("Weights:    min %g, mean %g, max %g, zero %lld (edge_weights.npy)\n",
                  w.min().item<double>(), w.to(at::kDouble).mean().item<double>(),
                  w.max().item<double>(), static_cast<long long>(w.eq(0).sum().item<int64_t>()));
    }
    std::printf("Features:   [%lld, %lld] %s\n", static_cast<long long>(ds.features.size(0)),
                static_cast<long long>(ds.features.size(1)),
                ds.features.scalar_type() == at::kHalf ? "float16" : "float32");
    if (ds.node_ids.defined()) {
      std::printf("Node order: %s (node_ids.npy maps each stored node to its original id)\n",
                  ds.node_order.c_str());
    }
    if (!ds.partition.method.empty()) print_partition(ds);
    print_labels(ds);
    if (!ds.class_names.empty()) {
      std::printf("Names:     ");
      for (size_t k = 0; k < ds.class_names.size(); ++k) {
        std::printf("%s %zu %s", k ? "," : "", k, ds.class_names[k].c_str());
      }
      std::printf("\n");
    }
    if (ds.splits.empty() && ds.has_labels()) {
      std::printf("Splits:     none stored (training uses a seeded random split)\n");
    }
    for (size_t k = 0; k < ds.splits.size(); ++k) {
      std::printf("Split %zu:    train %lld, validation %lld, test %lld\n", k,
                  static_cast<long long>(ds.splits[k].train.numel()),
                  static_cast<long long>(ds.splits[k].val.numel()),
                  static_cast<long long>(ds.splits[k].test.numel()));
    }
    print_link_split(ds);
  });
}

}  // namespace directgnn::cli
