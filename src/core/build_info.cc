#include "core/build_info.h"

#include <ATen/Config.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <dlfcn.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <torch/version.h>

#include <cstdio>
#include <sstream>

#include "gpu/runtime.h"

namespace directgnn {
namespace {

// The value of `key=` in torch's one-line build settings ("BLAS_INFO=mkl, ...").
std::string setting(const std::string& config, const std::string& key) {
  const auto at = config.find(key + "=");
  if (at == std::string::npos) return "";
  const auto begin = at + key.size() + 1;
  return config.substr(begin, config.find_first_of(",\n", begin) - begin);
}

// The first line of `text` that contains `needle`, trimmed.
std::string line_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) == std::string::npos) continue;
    const auto first = line.find_first_not_of(" \t-");
    return first == std::string::npos ? "" : line.substr(first);
  }
  return "";
}

// Which file a loaded symbol came from: tells apart torch's bundled runtimes from the system's.
std::string library_of(const void* symbol) {
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

// The CUDA runtime loaded in this process: its version and the file it came from (a static
// runtime would name the executable itself). Empty without one.
std::string cuda_runtime() {
  using GetVersion = int (*)(int*);
  void* symbol = dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
  if (symbol == nullptr) return "";
  int version = 0;
  reinterpret_cast<GetVersion>(symbol)(&version);
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10) + " (" +
         library_of(symbol) + ")";
}

std::string gpu_line(int device) {
  const gpu::DeviceMemory memory = gpu::device_memory(device);
  char text[64];
  std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(memory.total) / (1 << 30));
  return gpu::device_name(device) + ", " + text + "; read-only pinning " +
         (gpu::read_only_registration_supported(device) ? "supported" : "not supported");
}

}  // namespace

BuildInfo build_info() {
  BuildInfo b;
  b.directgnn_version = DIRECTGNN_VERSION;
  b.torch_version = TORCH_VERSION;
  const std::string config = at::show_config();
  b.torch_cuda = setting(config, "CUDA_VERSION");
  b.cuda_architectures = DIRECTGNN_CUDA_ARCHS;
  b.cuda_compiled = !b.cuda_architectures.empty();
  b.nvcc_version = b.cuda_compiled ? DIRECTGNN_CUDA_COMPILER_VERSION : "";
  b.cuda_runtime = cuda_runtime();
  b.gpus = gpu::device_count();
  for (int d = 0; d < b.gpus; ++d) b.gpu_lines.push_back(gpu_line(d));
  if (b.gpus == 0)
    b.gpu_note = b.cuda_compiled ? gpu::unavailable_reason() : "no CUDA in this build";
  const std::string blas = setting(config, "BLAS_INFO");
  const std::string mkl = line_with(config, "Math Kernel Library");
  b.blas = blas + (mkl.empty() || blas != "mkl" ? "" : " (" + mkl + ")");
  const std::string parallel = at::get_parallel_info();
  const std::string backend = line_with(parallel, "ATen parallel backend:");
  const auto colon = backend.find(": ");
  b.parallel_backend = colon == std::string::npos ? backend : backend.substr(colon + 2);
#ifdef _OPENMP
  b.openmp = line_with(parallel, "OpenMP 2") + ", " +
             library_of(reinterpret_cast<const void*>(&omp_get_max_threads));
#else
  b.openmp = "not compiled in";
#endif
  b.threads = at::get_num_threads();
  return b;
}

std::string build_info_text(const BuildInfo& b) {
  std::ostringstream out;
  out << "directgnn:  " << b.directgnn_version << "\n"
      << "torch:      " << b.torch_version
      << (b.torch_cuda.empty() ? " (CPU only)" : " (CUDA " + b.torch_cuda + ")") << "\n"
      << "CUDA:       "
      << (b.cuda_compiled ? "compiled in, kernels for " + b.cuda_architectures + " (nvcc " +
                                b.nvcc_version + ")"
                          : "not compiled in")
      << "\n"
      << "CUDA runtime: " << (b.cuda_runtime.empty() ? "none loaded" : b.cuda_runtime) << "\n"
      << "GPUs:       " << b.gpus << (b.gpus == 0 ? " (" + b.gpu_note + ")" : "") << "\n";
  for (size_t d = 0; d < b.gpu_lines.size(); ++d) {
    out << "  GPU " << d << ":    " << b.gpu_lines[d] << "\n";
  }
  out << "BLAS:       " << b.blas << "\n"
      << "OpenMP:     " << b.openmp << "\n"
      << "Threads:    " << b.threads << " (" << b.parallel_backend << ")\n";
  return out.str();
}

}  // namespace directgnn
