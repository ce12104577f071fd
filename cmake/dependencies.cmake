# Third-party packages. On Debian they come from scripts/install-deps.sh; on the GPU machine
# Torch comes from pip (CMAKE_PREFIX_PATH) and header-only packages from a carried folder.
find_package(Torch REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(ZLIB REQUIRED)
find_package(CLI11 CONFIG QUIET)
find_package(nlohmann_json 3 CONFIG REQUIRED)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()

# Kernels are plain CUDA over raw pointers; they compile wherever nvcc exists, GPU or not.
if(NOT DIRECTGNN_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(DIRECTGNN_HAVE_NVCC ON)
  elseif(DIRECTGNN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DIRECTGNN_CUDA=ON but no CUDA compiler was found: set CMAKE_CUDA_COMPILER "
                        "(e.g. /usr/local/cuda/bin/nvcc) or use -DDIRECTGNN_CUDA=AUTO|OFF")
  endif()
endif()

# Debian's torch carries -D_GLIBCXX_USE_CXX11_ABI in TORCH_CXX_FLAGS; keep ours consistent.
string(REPLACE " " ";" DIRECTGNN_TORCH_FLAGS "${TORCH_CXX_FLAGS}")
