// `directgnn partition DATASET OUT --parts P --method metis|random`: the dataset renumbered so
// that each part owns a contiguous id range, with the partition book in meta.json.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>

#include "core/resources.h"
#include "directgnn/error.h"
#include "graph/hetero_partition.h"
#include "graph/partition.h"
#include "graph/splits.h"
#include "io/dataset_reorder.h"
#include "io/hetero_dir.h"
#include "options.h"

namespace directgnn::cli {
namespace {

struct Args {
  std::string input, output, method = "metis", features = "by-part", structure = "whole";
  int64_t parts = 2;
  uint64_t seed = 0;
  int64_t split = 0;
  int threads = 0;
};

PartitionMethod parse_method(const std::string& name) {
  if (name == "random") return PartitionMethod::kRandom;
  DGNN_CHECK(name == "metis", "--method '", name, "': use metis or random");
  return PartitionMethod::kMetis;
}

// The training seeds the parts balance: the split training uses (as `train --split`, with the
// same seed for a dataset that stores none); none for a dataset without labels.
at::Tensor training_seeds(const Dataset& ds, const Args& a) {
  if (!ds.has_labels()) return {};
  return choose_split(ds, a.split, a.seed).split.train;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A heterogeneous dataset directory: every type renumbered by owner, its tables stored in the
// new order (by part unless --features whole); the training seeds balanced are the target
// type's stored split's.
void partition_hetero_dir(const Args& a, PartitionMethod method) {
  DGNN_CHECK(a.structure == "whole",
             "--structure by-part: a heterogeneous dataset's relations "
             "stay whole (every rank holds them); leave --structure out");
  const auto t0 = std::chrono::steady_clock::now();
  HeteroDataset ds = load_hetero_dir(a.input);
  DGNN_CHECK(ds.parts() == 0, a.input, ": is partitioned already (", ds.parts(),
             " parts); partition the dataset it was made from");
  PartitionOptions o;
  o.parts = a.parts;
  o.method = method;
  o.seed = a.seed;
  if (ds.target_type >= 0 && !ds.splits.empty()) {
    DGNN_CHECK(a.split >= 0 && a.split < static_cast<int64_t>(ds.splits.size()), "--split ",
               a.split, ": ", a.input, " stores ", ds.splits.size(), " split(s), 0 to ",
               ds.splits.size() - 1);
    o.seeds = ds.splits[static_cast<size_t>(a.split)].train;
  }
  const HeteroPartitionReport r = partition_hetero(ds, o, a.features == "by-part");
  const double partition_s = seconds_since(t0);
  std::map<std::string, FeatureStream> tables;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    NodeType& type = ds.node_types[t];
    if (!type.has_features()) continue;
    tables.emplace(type.name,
                   permuted_features(type.features, r.orders[t], type.features.scalar_type()));
    type.features = at::Tensor();
  }
  save_hetero_dir(ds, a.output, tables);
  std::printf(
      "Wrote %s: %lld nodes of %zu types renumbered into %lld contiguous parts per type; "
      "features %s\n",
      a.output.c_str(), static_cast<long long>(ds.num_nodes()), ds.node_types.size(),
      static_cast<long long>(a.parts),
      a.features == "by-part" ? "in nodes/TYPE/part-K/features.npy, one file per part"
                              : "in one features.npy per type");
  print_hetero_partition(ds);
  std::printf("Imbalance:  edges %.3f, training seeds %.3f (largest part / mean); nodes",
              r.stats.edge_imbalance, r.stats.seed_imbalance);
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    std::printf("%s %s %.3f", t ? "," : "", ds.node_types[t].name.c_str(),
                r.type_node_imbalance[t]);
  }
  std::printf(
      "\nTime:       %.1f s to load and partition, %.1f s in all; peak resident memory "
      "%.2f GiB\n",
      partition_s, seconds_since(t0), static_cast<double>(peak_rss_bytes()) / (1 << 30));
}

void partition(const Args& a) {
  const PartitionMethod method = parse_method(a.method);
  DGNN_CHECK(a.features == "by-part" || a.features == "whole", "--features '", a.features,
             "': use by-part or whole");
  DGNN_CHECK(a.structure == "by-part" || a.structure == "whole", "--structure '", a.structure,
             "': use whole or by-part");
  if (is_hetero_dir(a.input)) return partition_hetero_dir(a, method);
  const auto t0 = std::chrono::steady_clock::now();
  Dataset ds = load_dataset(a.input);
  PartitionOptions o;
  o.parts = a.parts;
  o.method = method;
  o.seed = a.seed;
  o.seeds = training_seeds(ds, a);
  o.directed = ds.directed;
  const Partition p = partition_graph(ds.graph, o);
  const double partition_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const PartitionOrder order = partition_order(p.owner, a.parts);
  renumber_dataset(ds, order.order, partition_method_name(method));
  ds.partition = {partition_method_name(method),
                  order.offsets,
                  p.stats.edges,
                  p.stats.seeds,
                  p.stats.edge_cut,
                  a.features == "by-part",
                  {},
                  a.structure == "by-part"};
  save_dataset_dir(ds, a.output,
                   permuted_features(ds.features, order.order, ds.features.scalar_type()));
  std::printf("Wrote %s: %lld nodes renumbered into %lld contiguous parts; features %s\n",
              a.output.c_str(), static_cast<long long>(ds.num_nodes()),
              static_cast<long long>(a.parts),
              a.features == "by-part" ? "in part-K/features.npy, one file per part"
                                      : "in one features.npy");
  if (a.structure == "by-part") {
    std::printf("Structure:  each part's in-edges in part-K/indptr.npy and indices.npy\n");
  }
  print_partition(ds);
  std::printf("Imbalance:  nodes %.3f, edges %.3f, training seeds %.3f (largest part / mean)\n",
              p.stats.node_imbalance, p.stats.edge_imbalance, p.stats.seed_imbalance);
  std::printf(
      "Time:       %.1f s to load and partition, %.1f s in all; peak resident memory "
      "%.2f GiB\n",
      partition_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
      static_cast<double>(peak_rss_bytes()) / (1 << 30));
}

}  // namespace

void register_partition(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand(
      "partition",
      "renumber a dataset so that each of P parts owns a contiguous range of node ids (the "
      "partition book goes in meta.json, node_ids.npy keeps the original ids)");
  c->add_option("DATASET", args->input, "dataset directory or any source convert reads")
      ->required();
  c->add_option("OUT", args->output, "new dataset directory (must not exist)")->required();
  c->add_option("--parts", args->parts, "number of parts")->capture_default_str();
  c->add_option("--method", args->method,
                "metis (few edges between parts; balances nodes, edges and training seeds) or "
                "random (a keyed hash per node, for graphs METIS cannot hold)")
      ->capture_default_str();
  c->add_option("--seed", args->seed,
                "METIS's and the hash's seed, and the default split's (datasets without one)")
      ->capture_default_str();
  c->add_option("--split", args->split, "the stored split whose training nodes are balanced")
      ->capture_default_str();
  c->add_option("--features", args->features,
                "by-part (part K's rows in OUT/part-K/features.npy: a machine needs only its "
                "part's file beside the shared graph files) or whole (one features.npy)")
      ->capture_default_str();
  c->add_option("--structure", args->structure,
                "whole (one indptr.npy and indices.npy, every rank holds the graph) or by-part "
                "(part K's in-edges in OUT/part-K/: each rank of a run with one rank per part "
                "holds its part's edges only and asks the others for their neighbours)")
      ->capture_default_str();
  add_threads_option(c, &args->threads);
  c->callback([args] { partition(*args); });
}

}  // namespace directgnn::cli
