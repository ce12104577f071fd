// What this build of directgnn is made of, for `directgnn info --build` and bug reports: the
// torch it was built against and runs with, whether its GPU code is compiled in and for which
// CUDA architectures, and the BLAS and OpenMP runtime the process actually loaded.
#pragma once

#include <string>
#include <vector>

namespace directgnn {

struct BuildInfo {
  std::string directgnn_version;
  std::string torch_version;       // the torch headers built against
  std::string torch_cuda;          // CUDA runtime torch was built with ("13.0"), or empty
  bool cuda_compiled = false;      // GPU glue and kernels linked into this binary
  std::string cuda_architectures;  // of the kernels, e.g. "sm_80,sm_90"; empty without CUDA
  std::string nvcc_version;        // the compiler of the kernels
  std::string cuda_runtime;        // the CUDA runtime the process loaded: version and file
  int gpus = 0;                    // visible now
  std::string gpu_note;            // why none is usable, when gpus == 0
  // Per visible GPU: name, memory, and whether it maps host memory registered read-only.
  std::vector<std::string> gpu_lines;
  std::string blas;              // e.g. "mkl (Intel(R) oneAPI Math Kernel Library ...)"
  std::string openmp;            // the OpenMP runtime loaded, with its file
  std::string parallel_backend;  // ATen's intra-op backend
  int threads = 0;               // ATen intra-op threads
};

BuildInfo build_info();
// One "Key: value" line per field.
std::string build_info_text(const BuildInfo& info);

}  // namespace directgnn
