#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/threads.h"
#include "directgnn/error.h"
#include "graph/planted_partition.h"
#include "options.h"

namespace directgnn::cli {
namespace {

PlantedPartitionOptions parse_synthetic(const std::string& text) {
  std::vector<double> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      values.push_back(std::stod(item));
    } catch (const std::exception&) {
      fail("--synthetic '", text, "': '", item, "' is not a number");
    }
  }
  DGNN_CHECK(values.size() == 3 && values[0] >= 16 && values[1] > 0 && values[2] >= 1,
             "--synthetic '", text, "': give nodes,avg-degree,feat-dim, e.g. 100000,20,128");
  PlantedPartitionOptions o;
  o.num_nodes = static_cast<int64_t>(values[0]);
  o.avg_degree = values[1];
  o.feat_dim = static_cast<int64_t>(values[2]);
  return o;
}

}  // namespace

void register_bench(CLI::App& app) {
  struct Args {
    TrainOptions train;
    std::string dataset, synthetic = "100000,20,128", json;
    double train_fraction = 0.5;
    int threads = 0;
    int dist_timeout = 300;
  };
  auto args = std::make_shared<Args>();
  CLI::App* bench = app.add_subcommand("bench", "measure directgnn");
  bench->require_subcommand(1);
  register_bench_gather(bench);
  CLI::App* c = bench->add_subcommand("train", "time training epochs, split into their parts");
  c->add_option("--dataset", args->dataset, "dataset directory or .npz (default: --synthetic)");
  c->add_option("--synthetic", args->synthetic,
                "planted-partition graph made in memory: nodes,avg-degree,feat-dim")
      ->capture_default_str();
  c->add_option("--train-fraction", args->train_fraction,
                "fraction of the synthetic graph's nodes used as training seeds")
      ->capture_default_str();
  c->add_option("--json", args->json, "also write the results to this JSON file");
  add_training_options(c, &args->train);
  add_threads_option(c, &args->threads);
  add_dist_options(c, &args->dist_timeout);
  c->callback([args] {
    const std::unique_ptr<ProcessGroup> group = join_ranks(args->dist_timeout);
    const bool leader = group == nullptr || group->rank() == 0;
    TrainOptions options = args->train;
    options.quiet = true;
    options.group = group.get();
    Dataset ds;
    if (args->dataset.empty()) {
      PlantedPartitionOptions o = parse_synthetic(args->synthetic);
      DGNN_CHECK(args->train_fraction > 0 && args->train_fraction < 0.9,
                 "--train-fraction must be in (0, 0.9)");
      o.train_fraction = args->train_fraction;
      o.val_fraction = std::min(0.05, (1.0 - o.train_fraction) / 2);
      ds = make_planted_partition(o);
    } else {
      ds = load_dataset(args->dataset);
    }
    const int ranks = group != nullptr ? group->size() : 1;
    if (leader) {
      std::printf(
          "bench train: %s, %lld nodes, %lld edges, %lld features; %s x%lld hidden %lld, "
          "fan-out %s, batch %lld, %d thread(s) x %d rank(s)\n",
          ds.name.c_str(), static_cast<long long>(ds.num_nodes()),
          static_cast<long long>(ds.graph.num_edges()), static_cast<long long>(ds.feat_dim()),
          options.model.arch.c_str(), static_cast<long long>(options.model.layers),
          static_cast<long long>(options.model.hidden), resolved_fanout(options).c_str(),
          static_cast<long long>(options.batch_size), num_threads(), ranks);
    }
    options.eval_every = options.epochs + 1;  // evaluate once, after the last epoch
    const TrainReport r = train(ds, options, std::cout);
    if (!leader) return;
    const double seeds_per_s = static_cast<double>(r.seeds_per_epoch) / r.epoch_time_s;
    std::printf("%-14s %10s %10s %10s %10s %12s %8s\n", "steps/epoch", "epoch(s)", "sample(s)",
                "gather(s)", "compute(s)", "seeds/s", "test_acc");
    std::printf("%-14lld %10.3f %10.3f %10.3f %10.3f %12.0f %8.4f\n",
                static_cast<long long>(r.steps_per_epoch), r.epoch_time_s, r.sample_s, r.gather_s,
                r.compute_s, seeds_per_s, r.test_acc);
    if (!args->json.empty()) {
      nlohmann::json out = r.to_json();
      out.update({{"dataset", ds.name},
                  {"nodes", ds.num_nodes()},
                  {"edges", ds.graph.num_edges()},
                  {"feat_dim", ds.feat_dim()},
                  {"model", options.model.arch},
                  {"layers", options.model.layers},
                  {"hidden", options.model.hidden},
                  {"fanout", resolved_fanout(options)},
                  {"batch_size", options.batch_size},
                  {"threads", num_threads()},
                  {"ranks", ranks},
                  {"seeds_per_s", seeds_per_s}});
      std::ofstream file(args->json);
      DGNN_CHECK(file.good(), "--json ", args->json, ": cannot open for writing");
      file << out.dump(2) << "\n";
    }
  });
}

}  // namespace directgnn::cli
