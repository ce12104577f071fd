// `directgnn bench gather`: the feature gather methods side by side.
//   --model  the PCIe request model on the CPU (no GPU needed): requests and efficiency of
//            each GPU method for given row widths.
//   default  on a GPU: random ids into a table of several GiB in pinned host memory, viewed
//            as float32 and float16 rows as a real feature table is; useful GB/s of every
//            method, the pinned cudaMemcpy bandwidth of the same run and each method's ratio
//            to it, the PCIe link while that copy runs, and the CPU time each method burns
//            per gather under each way of waiting for the GPU (--cuda-sync).
#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "core/atomic_file.h"
#include "core/nvml.h"
#include "core/resources.h"
#include "core/threads.h"
#include "directgnn/error.h"
#include "feature/feature_store.h"
#include "feature/pcie_model.h"
#include "gpu/runtime.h"
#include "options.h"

namespace directgnn::cli {
namespace {

// The copy engine's completions carry the link's maximum payload, 256 B on current servers.
constexpr int kDmaPayloadBytes = 256;

struct GatherBenchArgs {
  bool model = false;
  std::vector<int64_t> row_bytes;
  std::vector<int64_t> ids;
  std::vector<std::string> dtypes;
  double table_gib = 4.0;
  int64_t base_offset = 0;
  int reps = 20;
  int64_t max_threads = 0;
  std::vector<std::string> cuda_sync;
  std::string json;
  int threads = 0;
};

std::vector<int64_t> random_ids(int64_t count, int64_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids(static_cast<size_t>(count));
  for (int64_t& id : ids) id = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows));
  return ids;
}

at::ScalarType table_dtype(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "float16") return at::kHalf;
  if (name == "bfloat16") return at::kBFloat16;
  fail("--dtype '", name, "': use float32, float16 or bfloat16");
}

void write_json(const std::string& path, const nlohmann::json& out) {
  if (!path.empty()) write_file_atomic(path, out.dump(2) + "\n");
}

void run_model(const GatherBenchArgs& a) {
  const std::vector<int64_t> widths =
      a.row_bytes.empty() ? std::vector<int64_t>{400, 512, 2408} : a.row_bytes;
  const int64_t count = a.ids.empty() ? 100000 : a.ids.front();
  const uint64_t base = (uint64_t{1} << 30) + static_cast<uint64_t>(a.base_offset);
  std::printf(
      "bench gather --model: PCIe read requests of one gather of %lld random ids, table at a "
      "page boundary + %lld B, float32 rows\n"
      "(request = smallest aligned 32/64/128 B block holding what one warp load touches in "
      "one 128 B segment; wire efficiency counts %d B of overhead per request)\n",
      static_cast<long long>(count), static_cast<long long>(a.base_offset), kRequestOverheadBytes);
  std::printf("%9s  %-13s %11s %9s %9s %9s %10s %9s\n", "row bytes", "method", "requests", "128 B",
              "64 B", "32 B", "payload", "wire");
  nlohmann::json out = nlohmann::json::array();
  for (const int64_t width : widths) {
    DGNN_CHECK(width > 0, "--row-bytes: widths must be positive");
    RequestModelInput in;
    in.row_bytes = width;
    in.table_addr = base;
    in.elem_size = width % 4 == 0 ? 4 : 1;
    in.ids = random_ids(count, std::max<int64_t>(1, (int64_t{64} << 30) / width), 11);
    for (const auto& [name, method, sorted] :
         {std::tuple{"zero-copy", GatherMethod::kZeroCopy, false},
          std::tuple{"aligned", GatherMethod::kAligned, false},
          std::tuple{"aligned+sort", GatherMethod::kAligned, true}}) {
      in.sort_ids = sorted;
      const RequestCounts c = model_requests(method, in);
      std::printf("%9lld  %-13s %11lld %9lld %9lld %9lld %9.1f%% %8.1f%%\n",
                  static_cast<long long>(width), name, static_cast<long long>(c.requests()),
                  static_cast<long long>(c.requests_128), static_cast<long long>(c.requests_64),
                  static_cast<long long>(c.requests_32), 100 * c.payload_efficiency(),
                  100 * c.wire_efficiency());
      out.push_back({{"row_bytes", width},
                     {"method", name},
                     {"ids", count},
                     {"requests_128", c.requests_128},
                     {"requests_64", c.requests_64},
                     {"requests_32", c.requests_32},
                     {"useful_bytes", c.useful_bytes},
                     {"payload_efficiency", c.payload_efficiency()},
                     {"wire_efficiency", c.wire_efficiency()}});
    }
    std::printf("%9lld  %-13s %11s %9s %9s %9s %9.1f%% %8.1f%%\n", static_cast<long long>(width),
                "cpu-copy", "(DMA)", "", "", "", 100.0,
                100.0 * kDmaPayloadBytes / (kDmaPayloadBytes + kRequestOverheadBytes));
  }
  std::printf(
      "cpu-copy moves a dense buffer by DMA (%d B payloads), so every byte it sends is "
      "useful, but the CPU first reads each row and writes it to the staging buffer.\n",
      kDmaPayloadBytes);
  write_json(a.json, out);
}

struct Variant {
  std::string name;
  Placement placement;
  GatherOptions options;
};

// Id batches for one table: every timed gather reads a batch no earlier gather of the same
// case read, so rows left in the GPU's L2 (50-60 MB) by one gather do not flatter the next.
struct IdBatches {
  std::vector<at::Tensor> warmup, timed;
};

IdBatches fresh_batches(int64_t count, int64_t rows, int reps) {
  IdBatches b;
  for (int i = 0; i < 3 + reps; ++i) {
    // splitmix64: fast enough to draw tens of millions of ids per table.
    uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(i + 1);
    at::Tensor ids = at::empty({count}, at::TensorOptions().dtype(at::kLong).pinned_memory(true));
    int64_t* out = ids.data_ptr<int64_t>();
    for (int64_t k = 0; k < count; ++k) {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      out[k] = static_cast<int64_t>((z ^ (z >> 31)) % static_cast<uint64_t>(rows));
    }
    (i < 3 ? b.warmup : b.timed).push_back(ids);
  }
  return b;
}

// The host waits of one case, per way of waiting (--cuda-sync).
struct Timing {
  double wall_s = 0, cpu_s = 0;
};

Timing time_gathers(const FeatureStore& store, const IdBatches& batches, const Variant& v,
                    gpu::HostSync sync) {
  const c10::Device cuda(c10::kCUDA, 0);
  gpu::set_host_sync(sync);
  for (const at::Tensor& ids : batches.warmup) store.gather(ids, cuda, v.options);
  gpu::synchronize(0);
  const double cpu0 = process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (const at::Tensor& ids : batches.timed) store.gather(ids, cuda, v.options);
  gpu::synchronize(0);
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
          process_cpu_seconds() - cpu0};
}

struct GpuBenchContext {
  const GatherBenchArgs& args;
  std::vector<gpu::HostSync> syncs;
  double memcpy_gbs = 0;
  nlohmann::json records = nlohmann::json::array();
};

// Times one method on one table: `reps` gathers of each id count after 3 warm-up gathers, once
// for every way of waiting.
void bench_variant(GpuBenchContext& ctx, const Variant& v, const at::Tensor& table,
                   const std::string& dtype_name, const std::vector<IdBatches>& per_count) {
  const GatherBenchArgs& a = ctx.args;
  const int64_t width = table.size(1) * table.element_size();
  std::unique_ptr<FeatureStore> store;
  try {
    store = std::make_unique<FeatureStore>(table, v.placement);
  } catch (const Error& e) {
    std::printf("%6lld %-8s %8s  %-13s skipped: %s\n", static_cast<long long>(width),
                dtype_name.c_str(), "", v.name.c_str(), e.what());
    ctx.records.push_back(
        {{"row_bytes", width}, {"dtype", dtype_name}, {"method", v.name}, {"skipped", e.what()}});
    return;
  }
  for (const IdBatches& batches : per_count) {
    const int64_t count = batches.timed.front().numel();
    for (const gpu::HostSync sync : ctx.syncs) {
      const Timing t = time_gathers(*store, batches, v, sync);
      const double gbs = static_cast<double>(count * width) * a.reps / t.wall_s / 1e9;
      std::printf("%6lld %-8s %8lld  %-13s %-8s %9.2f %8.0f%% %10.3f %12.3f\n",
                  static_cast<long long>(width), dtype_name.c_str(), static_cast<long long>(count),
                  v.name.c_str(), gpu::host_sync_name(sync).c_str(), gbs,
                  100 * gbs / ctx.memcpy_gbs, 1e3 * t.wall_s / a.reps, 1e3 * t.cpu_s / a.reps);
      std::fflush(stdout);
      ctx.records.push_back({{"row_bytes", width},
                             {"dtype", dtype_name},
                             {"ids", count},
                             {"method", v.name},
                             {"max_threads", v.options.max_threads},
                             {"cuda_sync", gpu::host_sync_name(sync)},
                             {"cuda_sync_read_back", gpu::host_sync_name(gpu::host_sync(0))},
                             {"gb_per_s", gbs},
                             {"ratio_to_memcpy", gbs / ctx.memcpy_gbs},
                             {"ms_per_gather", 1e3 * t.wall_s / a.reps},
                             {"cpu_ms_per_gather", 1e3 * t.cpu_s / a.reps}});
    }
  }
}

nlohmann::json link_json(const PcieLink& l) {
  return {{"gen", l.gen}, {"width", l.width}, {"max_gen", l.max_gen}, {"max_width", l.max_width}};
}

// The pinned cudaMemcpy bandwidth every method is measured against, and the PCIe link read
// while that copy runs (an idle link may report Gen1).
double measure_memcpy(const GatherBenchArgs& a, nlohmann::json& link_out) {
  const GpuEnergyMeter meter(gpu::pci_bus_id(0));
  const PcieLink idle = meter.pcie_link();
  std::atomic<bool> done{false};
  PcieLink busy;
  std::thread poll([&] {
    while (!done.load()) {
      const PcieLink now = meter.pcie_link();
      if (now.gen > busy.gen || (now.gen == busy.gen && now.width > busy.width)) busy = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  double gbs = 0;
  try {
    gbs = gpu::pinned_copy_bandwidth(size_t{256} << 20, a.reps, 0);
  } catch (...) {
    done = true;
    poll.join();
    throw;
  }
  done = true;
  poll.join();
  std::printf("pinned cudaMemcpy host-to-device (256 MiB, median of %d): %.2f GB/s\n", a.reps, gbs);
  if (busy.gen > 0) {
    std::printf("PCIe link: Gen%d x%d while copying (Gen%d x%d idle; at most Gen%d x%d)\n",
                busy.gen, busy.width, idle.gen, idle.width, busy.max_gen, busy.max_width);
  } else {
    std::printf("PCIe link: not read (%s)\n",
                meter.reason().empty() ? "NVML gave no link" : meter.reason().c_str());
  }
  link_out = {{"idle", link_json(idle)}, {"under_load", link_json(busy)}};
  return gbs;
}

std::vector<Variant> gather_variants(const GatherBenchArgs& a) {
  return {
      {"cpu-copy", Placement::kHost, {GatherMethod::kCpuCopy, false, 0}},
      {"zero-copy", Placement::kPinned, {GatherMethod::kZeroCopy, false, a.max_threads}},
      {"aligned", Placement::kPinned, {GatherMethod::kAligned, false, a.max_threads}},
      {"aligned+sort", Placement::kPinned, {GatherMethod::kAligned, true, a.max_threads}},
      {"device", Placement::kDevice, {GatherMethod::kAligned, false, 0}},
  };
}

void run_gpu(const GatherBenchArgs& a) {
  DGNN_CHECK(gpu::available(), "bench gather needs a GPU (", gpu::unavailable_reason(),
             "); run `directgnn bench gather --model` for the request model, which needs none");
  DGNN_CHECK(a.table_gib > 0 && a.reps > 0, "--table-gib and --reps must be positive");
  GpuBenchContext ctx{a, {}, 0, nlohmann::json::array()};
  for (const std::string& name : a.cuda_sync) {
    // A way of waiting the driver refuses is said and left out; the others run.
    const gpu::HostSync sync = gpu::parse_host_sync(name);
    try {
      gpu::set_host_sync(sync);
      ctx.syncs.push_back(sync);
    } catch (const Error& e) {
      std::printf("--cuda-sync %s: not available here (%s)\n", name.c_str(), e.what());
    }
  }
  if (ctx.syncs.empty()) ctx.syncs.push_back(gpu::HostSync::kAuto);
  const std::vector<int64_t> widths =
      a.row_bytes.empty() ? std::vector<int64_t>{64, 128, 256, 400, 512, 1024, 2408} : a.row_bytes;
  const int64_t table_bytes = static_cast<int64_t>(a.table_gib * (1 << 30));
  std::printf(
      "bench gather on %s, %d CPU thread(s); table %.2f GiB in host memory, base "
      "offset %lld B, %d timed gathers per case, each of fresh ids\n",
      gpu::device_name(0).c_str(), num_threads(), a.table_gib,
      static_cast<long long>(a.base_offset), a.reps);
  std::fflush(stdout);
  nlohmann::json link;
  ctx.memcpy_gbs = measure_memcpy(a, link);

  // One buffer for every width; pinned once, each width's table is a view of it.
  const at::Tensor buffer = at::empty({table_bytes + 4096}, at::kByte);
  buffer.fill_(1);
  const int64_t lead =
      (4096 - static_cast<int64_t>(reinterpret_cast<uint64_t>(buffer.data_ptr()) % 4096)) % 4096;
  const FeatureStore pinned_all(buffer.view({1, buffer.numel()}), Placement::kPinned);

  std::printf("%6s %-8s %8s  %-13s %-8s %9s %9s %10s %12s\n", "row B", "dtype", "ids", "method",
              "sync", "GB/s", "/memcpy", "ms/gather", "CPU ms/gath");
  const std::vector<std::string> dtypes =
      a.dtypes.empty() ? std::vector<std::string>{"float32", "float16"} : a.dtypes;
  const std::vector<int64_t> counts = a.ids.empty() ? std::vector<int64_t>{100000, 1000000} : a.ids;
  for (const std::string& dtype_name : dtypes) {
    const at::ScalarType dtype = table_dtype(dtype_name);
    for (const int64_t width : widths) {
      const auto elem = static_cast<int64_t>(c10::elementSize(dtype));
      DGNN_CHECK(width % elem == 0 && a.base_offset % elem == 0, "--row-bytes ", width,
                 " and --base-offset ", a.base_offset, " must be whole numbers of ", dtype_name,
                 " elements (", elem, " B)");
      const int64_t rows = (table_bytes - a.base_offset) / width;
      const at::Tensor table = buffer.narrow(0, lead + a.base_offset, rows * width)
                                   .view(dtype)
                                   .view({rows, width / elem});
      std::vector<IdBatches> per_count;
      for (const int64_t count : counts) per_count.push_back(fresh_batches(count, rows, a.reps));
      for (const Variant& v : gather_variants(a))
        bench_variant(ctx, v, table, dtype_name, per_count);
      // After every width, so a run stopped by a time limit keeps what it measured.
      write_json(a.json, {{"device", gpu::device_name(0)},
                          {"max_threads", a.max_threads},
                          {"memcpy_gb_per_s", ctx.memcpy_gbs},
                          {"pcie_link", link},
                          {"table_gib", a.table_gib},
                          {"base_offset", a.base_offset},
                          {"reps", a.reps},
                          {"threads", num_threads()},
                          {"results", ctx.records}});
    }
  }
  gpu::set_host_sync(gpu::HostSync::kAuto);
}

}  // namespace

void register_bench_gather(CLI::App* bench) {
  auto a = std::make_shared<GatherBenchArgs>();
  CLI::App* c = bench->add_subcommand(
      "gather", "compare feature gather methods (GPU), or model their PCIe requests (--model)");
  c->add_flag("--model", a->model, "print the PCIe request model of each method (no GPU needed)");
  c->add_option("--row-bytes", a->row_bytes,
                "row widths in bytes (model: 400,512,2408; GPU: 64,...,2408)")
      ->delimiter(',');
  c->add_option("--ids", a->ids, "ids per gather (model: 100000; GPU: 100000,1000000)")
      ->delimiter(',');
  c->add_option("--dtype", a->dtypes,
                "element types the table is viewed as (GPU): float32, float16, bfloat16; "
                "default float32,float16")
      ->delimiter(',');
  c->add_option("--table-gib", a->table_gib, "feature table size in GiB (GPU)")
      ->capture_default_str();
  c->add_option("--base-offset", a->base_offset, "table start past a page boundary, in bytes")
      ->capture_default_str()
      ->check(CLI::Range(0, 4095));
  c->add_option("--reps", a->reps, "timed gathers per case (GPU)")->capture_default_str();
  c->add_option("--max-threads", a->max_threads,
                "cap on GPU threads per zero-copy/aligned gather (0 = none)")
      ->capture_default_str();
  c->add_option("--cuda-sync", a->cuda_sync,
                "how the host waits for the GPU, each timed in turn (GPU): auto (CUDA's choice: "
                "spin), spin, yield, blocking; CPU ms per gather includes a spinning wait")
      ->delimiter(',');
  c->add_option("--json", a->json, "also write the results to this JSON file");
  add_threads_option(c, &a->threads);
  c->callback([a] {
    if (a->model) {
      run_model(*a);
    } else {
      run_gpu(*a);
    }
  });
}

}  // namespace directgnn::cli
