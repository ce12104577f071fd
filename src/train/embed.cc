#include "train/embed.h"

#include <ATen/ATen.h>

#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/progress.h"
#include "core/signals.h"
#include "directgnn/error.h"
#include "io/dataset.h"
#include "io/npy.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

// A signal asked for a stop (core/signals.h): unwinding removes the scratch files and the
// unfinished output.
void stop_if_asked(const std::string& where) {
  if (const int signal = stop_signal()) {
    throw Interrupted(signal, std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") + " while " +
                                  where + ": stopped, nothing written");
  }
}

// The layers' memory-mapped scratch files, removed when it goes.
class ScratchFiles {
 public:
  explicit ScratchFiles(std::string stem) : stem_(std::move(stem)) {}
  ~ScratchFiles() {
    std::error_code ec;
    for (const std::string& path : paths_) fs::remove(path, ec);
  }
  ScratchFiles(const ScratchFiles&) = delete;
  ScratchFiles& operator=(const ScratchFiles&) = delete;

  // A float32 [rows, dim] tensor backed by a new file (sparse until written).
  at::Tensor make(size_t layer, int64_t rows, int64_t dim) {
    const std::string path = stem_ + ".layer" + std::to_string(layer) + ".tmp";
    std::error_code ec;
    fs::remove(path, ec);
    paths_.push_back(path);
    try {
      return at::from_file(path, /*shared=*/true, rows * dim, at::kFloat).view({rows, dim});
    } catch (const c10::Error& e) {
      fail(path, ": cannot map a scratch file of ", rows * dim * 4,
           " bytes for the layer's output (disk full?): ", e.what_without_backtrace());
    }
  }

 private:
  std::string stem_;
  std::vector<std::string> paths_;
};

}  // namespace

void write_embeddings(GnnModel& model, const CsrGraph& graph, const at::Tensor& features,
                      const std::string& out, const EmbedOptions& o) {
  DGNN_CHECK_ARG(o.dtype == at::kFloat || o.dtype == at::kHalf, "dtype",
                 "embeddings are written as float32 or float16");
  std::error_code ec;
  DGNN_CHECK(!fs::is_directory(out, ec), out, ": is a directory; give the .npy file to write");
  ScratchFiles scratch(out);
  std::unique_ptr<Progress> progress;
  size_t shown = SIZE_MAX;
  InferHooks hooks;
  hooks.output = [&](size_t layer, int64_t rows, int64_t dim) {
    return scratch.make(layer, rows, dim);
  };
  hooks.progress = [&](size_t layer, int64_t done, int64_t rows) {
    stop_if_asked("embedding layer " + std::to_string(layer + 1));
    if (!o.progress) return;
    if (layer != shown) {
      if (progress) progress->finish();
      progress = std::make_unique<Progress>("embedding layer " + std::to_string(layer + 1), rows);
      shown = layer;
    }
    progress->update(done);
  };
  const at::Tensor rows = model.infer_nodes(graph, features, at::Tensor(), o.chunk, hooks);
  if (progress) progress->finish();
  write_embedding_rows(rows, o.dtype, out, o.progress, o.stored_of);
}

void write_embedding_rows(const at::Tensor& rows, at::ScalarType dtype, const std::string& out,
                          bool progress_on, const at::Tensor& stored_of) {
  AtomicFile file(out);
  file.write(npy_header_for(dtype, rows.sizes()));
  const int64_t n = rows.size(0), chunk = 65536;
  Progress progress("writing embeddings", progress_on ? n : -1);
  for (int64_t begin = 0; begin < n; begin += chunk) {
    const int64_t end = std::min(n, begin + chunk);
    const at::Tensor chunk_rows =
        stored_of.defined() ? rows.index_select(0, stored_of.narrow(0, begin, end - begin))
                            : rows.narrow(0, begin, end - begin);
    const at::Tensor part = chunk_rows.to(dtype).contiguous();
    const auto [row, col] = first_non_finite(part);
    DGNN_CHECK(row < 0, out, ": the embedding of node ", begin + row, " (column ", col, ") is ",
               chunk_rows[row][col].item<float>(),
               dtype == at::kHalf ? " as float16 (at most +-65504); write float32 embeddings"
                                  : "; the model's output is not finite");
    file.write(std::string_view(static_cast<const char*>(part.data_ptr()), part.nbytes()));
    progress.update(end);
    stop_if_asked("writing " + out);
  }
  progress.finish();
  file.commit();
}

}  // namespace directgnn
