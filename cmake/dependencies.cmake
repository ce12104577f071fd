# Third-party packages. On Debian they come from scripts/install-deps.sh; on the GPU machine
# Torch comes from pip (CMAKE_PREFIX_PATH) and header-only packages from a carried folder
# (bench/gpu/run.sh passes their locations).

# Kernels are plain CUDA over raw pointers; they compile wherever nvcc exists, GPU or not.
# The language is enabled before Torch so a CUDA build of Torch finds the same toolkit.
if(NOT DIRECTGNN_CUDA STREQUAL "OFF")
  # The toolkit's usual home, for shells whose PATH does not name it.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(DIRECTGNN_NVCC nvcc HINTS /usr/local/cuda/bin)
    if(DIRECTGNN_NVCC)
      set(ENV{CUDACXX} ${DIRECTGNN_NVCC})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(DIRECTGNN_HAVE_NVCC ON)
  elseif(DIRECTGNN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DIRECTGNN_CUDA=ON but no CUDA compiler was found: set CMAKE_CUDA_COMPILER "
                        "(e.g. /usr/local/cuda/bin/nvcc) or use -DDIRECTGNN_CUDA=AUTO|OFF")
  endif()
endif()

find_package(Torch REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  find_path(NLOHMANN_JSON_INCLUDE_DIR nlohmann/json.hpp REQUIRED)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${NLOHMANN_JSON_INCLUDE_DIR})
endif()
find_package(ZLIB REQUIRED)
# Gloo's headers, which torch's c10d headers include (Debian: libgloo-dev; pip torch ships them).
find_path(DIRECTGNN_GLOO_INCLUDE_DIR gloo/config.h HINTS ${TORCH_INCLUDE_DIRS})
if(NOT DIRECTGNN_GLOO_INCLUDE_DIR)
  message(FATAL_ERROR "gloo headers not found: install libgloo-dev (scripts/install-deps.sh)")
endif()

# The tensor glue of the GPU gather needs a CUDA build of Torch.
set(DIRECTGNN_TORCH_CUDA OFF)
if(DIRECTGNN_HAVE_NVCC AND TORCH_CUDA_LIBRARIES)
  set(DIRECTGNN_TORCH_CUDA ON)
endif()
if(DIRECTGNN_HAVE_NVCC)
  message(STATUS "directgnn: CUDA kernels for ${CMAKE_CUDA_ARCHITECTURES}; "
                 "GPU gather glue: ${DIRECTGNN_TORCH_CUDA} (needs a CUDA build of Torch)")
endif()

# Debian's torch carries -D_GLIBCXX_USE_CXX11_ABI in TORCH_CXX_FLAGS; keep ours consistent.
string(REPLACE " " ";" DIRECTGNN_TORCH_FLAGS "${TORCH_CXX_FLAGS}")
