#include "feature/embedding_table.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "core/random.h"
#include "directgnn/error.h"
#include "feature/feature_store.h"
#include "gpu/runtime.h"
#include "io/npy.h"

namespace directgnn {
namespace {

// A row's initial values: N(0, 1) / sqrt(dim) from a stream keyed by (seed, row), so the table
// is the same whatever the thread count.
void init_rows(at::Tensor& weight, uint64_t seed) {
  const int64_t dim = weight.size(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  float* w = weight.data_ptr<float>();
  at::parallel_for(0, weight.size(0), 1024, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      SplitRng rng(mix64(seed, static_cast<uint64_t>(i)));
      for (int64_t j = 0; j < dim; j += 2) {
        // Box-Muller: two normals from two uniforms.
        const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
        const double r = std::sqrt(-2.0 * std::log(u1)), a = 2.0 * M_PI * u2;
        w[i * dim + j] = static_cast<float>(scale * r * std::cos(a));
        if (j + 1 < dim) w[i * dim + j + 1] = static_cast<float>(scale * r * std::sin(a));
      }
    }
  });
}

// Checks that `path` holds a float32 array of `like`'s shape (its header only: the data is
// mapped, not read).
void check_shaped(const std::string& path, const at::Tensor& like) {
  DGNN_CHECK(std::filesystem::exists(path), path,
             ": missing; the checkpoint's embeddings are "
             "incomplete (was it written by this version?)");
  const at::Tensor t = load_npy(path);
  DGNN_CHECK(t.sizes() == like.sizes() && t.scalar_type() == at::kFloat, path, ": has shape ",
             t.sizes(), " and dtype ", t.scalar_type(), " but the table needs float32 ",
             like.sizes());
}

}  // namespace

TablePlacement parse_table_placement(const std::string& name) {
  if (name == "auto") return TablePlacement::kAuto;
  if (name == "host") return TablePlacement::kHost;
  if (name == "pinned") return TablePlacement::kPinned;
  throw InvalidArgument("embedding_placement",
                        "'" + name +
                            "': use auto (pinned on a GPU run, host on a CPU one), host, or "
                            "pinned (GPU runs: rows read by GPU threads from host memory)");
}

const char* table_placement_name(TablePlacement placement) {
  switch (placement) {
    case TablePlacement::kHost:
      return "host";
    case TablePlacement::kPinned:
      return "pinned";
    default:
      return "auto";
  }
}

SparseOptimizer parse_sparse_optimizer(const std::string& name) {
  if (name == "adagrad") return SparseOptimizer::kRowAdagrad;
  if (name == "adam") return SparseOptimizer::kAdam;
  throw InvalidArgument("embedding_optimizer",
                        "'" + name + "': use adagrad (row-wise) or adam (sparse Adam)");
}

const char* sparse_optimizer_name(SparseOptimizer optimizer) {
  return optimizer == SparseOptimizer::kRowAdagrad ? "adagrad" : "adam";
}

EmbeddingTable::EmbeddingTable(int64_t rows, const EmbeddingOptions& options, uint64_t seed)
    : options_(options) {
  DGNN_CHECK_ARG(options.dim > 0, "node_embeddings", "must be positive, got ", options.dim);
  DGNN_CHECK_ARG(options.lr > 0, "embedding_lr", "must be positive, got ", options.lr);
  DGNN_CHECK(rows > 0, "an embedding table needs at least one row");
  weight_ = at::empty({rows, options.dim}, at::kFloat);
  init_rows(weight_, seed);
  if (options.optimizer == SparseOptimizer::kRowAdagrad) {
    sum_ = at::zeros({rows}, at::kFloat);
  } else {
    m_ = at::zeros({rows, options.dim}, at::kFloat);
    v_ = at::zeros({rows, options.dim}, at::kFloat);
  }
}

at::Tensor EmbeddingTable::gather(const at::Tensor& ids) const {
  // A range check only: this runs every step on the sampler's input nodes, distinct by
  // construction, where checking them distinct would sort them each time.
  check_ids_in_range(ids, rows());
  return weight_.index_select(0, ids.to(at::kCPU, at::kLong));
}

at::Tensor EmbeddingTable::gather(const at::Tensor& ids, const c10::Device& device) const {
  if (!device.is_cuda()) return gather(ids);
  if (store_ == nullptr) return gather(ids).to(device);
  GatherOptions aligned;
  aligned.method = GatherMethod::kAligned;
  return store_->gather(ids, device, aligned);
}

void EmbeddingTable::pin(int device_index) {
  if (pinned()) return;
  // Writable: the CPU updates rows in place while GPU threads read them between steps.
  pin_ = gpu::pin_host_memory(weight_.data_ptr(), static_cast<size_t>(weight_.nbytes()),
                              device_index, /*read_only=*/false);
  store_ = std::make_shared<const FeatureStore>(FeatureStore::as_is(weight_, device_index, true));
}

void EmbeddingTable::update(const at::Tensor& ids_in, const at::Tensor& grad_in) {
  const at::Tensor ids = ids_in.to(at::kCPU, at::kLong).contiguous();
  const at::Tensor grad = grad_in.to(at::kCPU, at::kFloat).contiguous();
  DGNN_CHECK(grad.dim() == 2 && grad.size(0) == ids.numel() && grad.size(1) == dim(),
             "embedding update: the gradient has shape ", grad.sizes(), " for ", ids.numel(),
             " rows of width ", dim());
  ++steps_;
  const int64_t d = dim(), n = ids.numel();
  const int64_t* id = ids.data_ptr<int64_t>();
  const float* g = grad.data_ptr<float>();
  float* w = weight_.data_ptr<float>();
  const auto lr = static_cast<float>(options_.lr);
  const auto decay = static_cast<float>(options_.weight_decay);
  if (options_.optimizer == SparseOptimizer::kRowAdagrad) {
    float* s = sum_.data_ptr<float>();
    const auto eps = static_cast<float>(options_.eps);
    at::parallel_for(0, n, 256, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const float* gk = g + k * d;
        float* row = w + id[k] * d;
        float sq = 0;
        for (int64_t j = 0; j < d; ++j) {
          const float gj = gk[j] + decay * row[j];
          sq += gj * gj;
        }
        float& state = s[id[k]];
        state += sq / static_cast<float>(d);
        const float step = lr / (std::sqrt(state) + eps);
        for (int64_t j = 0; j < d; ++j) row[j] -= step * (gk[j] + decay * row[j]);
      }
    });
    return;
  }
  const auto b1 = static_cast<float>(options_.beta1), b2 = static_cast<float>(options_.beta2);
  const auto c1 = static_cast<float>(1.0 - std::pow(options_.beta1, steps_));
  const auto c2 = static_cast<float>(1.0 - std::pow(options_.beta2, steps_));
  float* m = m_.data_ptr<float>();
  float* v = v_.data_ptr<float>();
  at::parallel_for(0, n, 256, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      const int64_t base = id[k] * d;
      for (int64_t j = 0; j < d; ++j) {
        const float gj = g[k * d + j] + decay * w[base + j];
        m[base + j] = b1 * m[base + j] + (1 - b1) * gj;
        v[base + j] = b2 * v[base + j] + (1 - b2) * gj * gj;
        w[base + j] -= lr * (m[base + j] / c1) / (std::sqrt(v[base + j] / c2) + 1e-8f);
      }
    }
  });
}

void EmbeddingTable::save(const std::string& dir, const std::string& name) const {
  const std::string base = dir + "/" + name;
  save_npy(base + ".npy", weight_);
  save_npy(base + ".steps.npy", at::tensor(std::vector<int64_t>{steps_}));
  if (sum_.defined()) save_npy(base + ".state.npy", sum_);
  if (m_.defined()) {
    save_npy(base + ".state_m.npy", m_);
    save_npy(base + ".state_v.npy", v_);
  }
}

void EmbeddingTable::load(const std::string& dir, const std::string& name) {
  const std::string base = dir + "/" + name;
  const at::Tensor steps = load_npy(base + ".steps.npy");
  DGNN_CHECK(steps.numel() == 1, base, ".steps.npy: must hold one step count");
  // Every file is checked before any is read, so a bad one changes nothing; each is then read
  // into the table's own memory (load_npy_into: never a second copy of the table).
  std::vector<std::pair<std::string, at::Tensor>> files{{base + ".npy", weight_}};
  if (sum_.defined()) files.emplace_back(base + ".state.npy", sum_);
  if (m_.defined()) {
    files.emplace_back(base + ".state_m.npy", m_);
    files.emplace_back(base + ".state_v.npy", v_);
  }
  for (const auto& [path, into] : files) check_shaped(path, into);
  for (auto& [path, into] : files) load_npy_into(path, into);
  steps_ = steps.to(at::kLong).item<int64_t>();
}

}  // namespace directgnn
