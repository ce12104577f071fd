# Third-party packages. PyTorch is pip's torch 2.11.0 (a CUDA 13.0 build), found through the
# torch.utils.cmake_prefix_path of a Python: .venv/bin/python, which scripts/install-deps.sh
# makes, or DIRECTGNN_PYTHON (the GPU machine's own python3). The rest comes from Debian's
# packages, or on the GPU machine from a carried folder (bench/gpu/run.sh passes its paths).

# The CUDA architectures of the kernels. Torch's CMake reads TORCH_CUDA_ARCH_LIST and ignores
# CMAKE_CUDA_ARCHITECTURES, so the one list here feeds both.
set(DIRECTGNN_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures of the kernels (80;90)")

set(DIRECTGNN_PYTHON "" CACHE FILEPATH "Python whose torch to build against (default .venv/bin/python)")
if(NOT DIRECTGNN_PYTHON AND SKBUILD AND Python_EXECUTABLE)
  # pip install --no-build-isolation .: the torch of the Python that runs pip.
  set(DIRECTGNN_PYTHON ${Python_EXECUTABLE})
endif()
if(NOT DIRECTGNN_PYTHON)
  if(EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
    set(DIRECTGNN_PYTHON ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  else()
    find_program(DIRECTGNN_PYTHON_FOUND NAMES python3 python)
    set(DIRECTGNN_PYTHON ${DIRECTGNN_PYTHON_FOUND})
  endif()
endif()
if(NOT Torch_DIR)
  execute_process(
    COMMAND ${DIRECTGNN_PYTHON} -c "import torch; print(torch.utils.cmake_prefix_path, end='')"
    OUTPUT_VARIABLE DIRECTGNN_TORCH_PREFIX RESULT_VARIABLE torch_status ERROR_QUIET)
  if(NOT torch_status EQUAL 0)
    message(FATAL_ERROR "PyTorch not found: '${DIRECTGNN_PYTHON}' cannot import torch. Run "
                        "scripts/install-deps.sh (makes .venv/ with torch 2.11.0), or pass "
                        "-DDIRECTGNN_PYTHON=/path/to/python with torch installed")
  endif()
  list(PREPEND CMAKE_PREFIX_PATH ${DIRECTGNN_TORCH_PREFIX})
endif()

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
    set(CMAKE_CUDA_ARCHITECTURES ${DIRECTGNN_CUDA_ARCHITECTURES})
    enable_language(CUDA)
    # Torch's CMake warns about, and ignores, a global list; the kernels target has its own.
    unset(CMAKE_CUDA_ARCHITECTURES)
    unset(CMAKE_CUDA_ARCHITECTURES CACHE)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(DIRECTGNN_HAVE_NVCC ON)
  elseif(DIRECTGNN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DIRECTGNN_CUDA=ON but no CUDA compiler was found: set CMAKE_CUDA_COMPILER "
                        "(e.g. /usr/local/cuda/bin/nvcc) or use -DDIRECTGNN_CUDA=AUTO|OFF")
  endif()
endif()

# "80;90" -> "8.0;9.0", the form torch's CMake takes.
string(REGEX REPLACE "([0-9])([0-9])" "\\1.\\2" torch_arch_list "${DIRECTGNN_CUDA_ARCHITECTURES}")
set(TORCH_CUDA_ARCH_LIST "${torch_arch_list}")
# TorchConfig.cmake finds its libraries with find_library(... PATHS <torch>/lib), which
# searches the system's directories first: a Debian libtorch or libc10 there (PyTorch 1.13)
# would be linked in place of this torch's. Find them in this torch alone, first.
if(DIRECTGNN_TORCH_PREFIX)
  get_filename_component(torch_root "${DIRECTGNN_TORCH_PREFIX}/../.." ABSOLUTE)
elseif(Torch_DIR)
  get_filename_component(torch_root "${Torch_DIR}/../../.." ABSOLUTE)
endif()
foreach(lib torch torch_cpu torch_cuda c10 c10_cuda kineto caffe2_nvrtc)
  string(TOUPPER ${lib} upper)
  foreach(var ${lib}_LIBRARY ${upper}_LIBRARY)
    string(FIND "${${var}}" "${torch_root}/" at)
    if(NOT at EQUAL 0)
      unset(${var} CACHE)  # found elsewhere by an earlier configure
    endif()
    find_library(${var} ${lib} PATHS "${torch_root}/lib" NO_DEFAULT_PATH)
  endforeach()
endforeach()
find_package(Torch REQUIRED)
# Torch's CMake drops the global CUDA architectures; later try_compile checks (FindOpenMP
# under CMake >= 4) need a list whenever CUDA is enabled.
if(DIRECTGNN_HAVE_NVCC)
  set(CMAKE_CUDA_ARCHITECTURES ${DIRECTGNN_CUDA_ARCHITECTURES})
endif()
# Torch's CMake adds its -gencode flags to every CUDA file and switches the per-target
# property off; the kernels target sets its architectures itself (src/CMakeLists.txt).
string(REGEX REPLACE "-gencode arch=[^ ]+" "" CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS}")
message(STATUS "directgnn: torch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}")

# One OpenMP runtime in the process: pip's torch bundles its own libgomp.so.1 (from a newer
# GCC than Debian's), and the loader keeps one library per soname, so our parallel loops are
# linked against that same file rather than g++'s.
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_library(DIRECTGNN_TORCH_GOMP NAMES libgomp.so.1 PATHS ${TORCH_INSTALL_PREFIX}/lib NO_DEFAULT_PATH)
add_library(directgnn_openmp INTERFACE)
target_compile_options(directgnn_openmp INTERFACE ${OpenMP_CXX_FLAGS})
if(DIRECTGNN_TORCH_GOMP)
  target_link_libraries(directgnn_openmp INTERFACE ${DIRECTGNN_TORCH_GOMP})
else()
  target_link_libraries(directgnn_openmp INTERFACE OpenMP::OpenMP_CXX)
endif()
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
# c10d's Gloo header includes gloo's headers, which pip's torch does not ship (its Gloo is
# linked into libtorch_cpu). Debian's libgloo-dev supplies them: ProcessGroupGloo holds gloo
# objects only through shared pointers, and directgnn calls no gloo function itself.
find_path(DIRECTGNN_GLOO_INCLUDE_DIR gloo/config.h HINTS ${TORCH_INCLUDE_DIRS})
if(NOT DIRECTGNN_GLOO_INCLUDE_DIR)
  message(FATAL_ERROR "gloo headers not found: install libgloo-dev (scripts/install-deps.sh)")
endif()

# One CUDA runtime in the process, shared, and the one torch's own libraries load: pip's, beside
# torch (the toolkit's as a fallback). Torch's CMake names the toolkit's libcudart and libnvrtc
# (CUDA::cudart, and CUDA_NVRTC_LIB in TORCH_LIBRARIES), and CMake adds the static runtime to every target that links CUDA
# code; both are replaced, so each link line names exactly torch's runtime.
if(DIRECTGNN_HAVE_NVCC)
  set(pip_cuda_libs ${TORCH_INSTALL_PREFIX}/../nvidia/cu13/lib
    ${TORCH_INSTALL_PREFIX}/../nvidia/cuda_runtime/lib ${TORCH_INSTALL_PREFIX}/../nvidia/cuda_nvrtc/lib)
  find_library(DIRECTGNN_CUDART NAMES libcudart.so.13 libcudart.so.12 PATHS ${pip_cuda_libs}
    NO_DEFAULT_PATH)
  find_library(DIRECTGNN_NVRTC NAMES libnvrtc.so.13 libnvrtc.so.12 PATHS ${pip_cuda_libs}
    NO_DEFAULT_PATH)
  if(NOT DIRECTGNN_CUDART)
    set(DIRECTGNN_CUDART CUDA::cudart)
  endif()
  set(CMAKE_CUDA_RUNTIME_LIBRARY None)
  if(TARGET torch::cudart)
    set_property(TARGET torch::cudart PROPERTY INTERFACE_LINK_LIBRARIES ${DIRECTGNN_CUDART})
  endif()
  if(DIRECTGNN_NVRTC AND CUDA_NVRTC_LIB)
    list(TRANSFORM TORCH_LIBRARIES REPLACE "^${CUDA_NVRTC_LIB}$" "${DIRECTGNN_NVRTC}")
  endif()
endif()

# The tensor glue of the GPU code needs a CUDA build of Torch, and NCCL's header for c10d's
# NCCL process group: the one pip's nvidia-nccl package ships beside torch.
set(DIRECTGNN_TORCH_CUDA OFF)
if(DIRECTGNN_HAVE_NVCC AND TORCH_CUDA_LIBRARIES)
  set(DIRECTGNN_TORCH_CUDA ON)
  find_path(DIRECTGNN_NCCL_INCLUDE_DIR nccl.h
    HINTS ${TORCH_INSTALL_PREFIX}/../nvidia/nccl/include ${CUDAToolkit_INCLUDE_DIRS})
  if(NOT DIRECTGNN_NCCL_INCLUDE_DIR)
    message(FATAL_ERROR "nccl.h not found beside torch (pip's nvidia-nccl-cu13) or in the CUDA "
                        "toolkit: reinstall torch (scripts/install-deps.sh)")
  endif()
elseif(DIRECTGNN_CUDA STREQUAL "ON")
  message(FATAL_ERROR "DIRECTGNN_CUDA=ON but torch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX} "
                      "has no CUDA: use pip's torch==2.11.0 (scripts/install-deps.sh)")
endif()
if(DIRECTGNN_HAVE_NVCC)
  message(STATUS "directgnn: CUDA kernels for ${DIRECTGNN_CUDA_ARCHITECTURES}; "
                 "GPU glue: ${DIRECTGNN_TORCH_CUDA} (needs a CUDA build of Torch)")
endif()

# Torch's compile flags (e.g. -D_GLIBCXX_USE_CXX11_ABI) go on every target that includes it.
string(REPLACE " " ";" DIRECTGNN_TORCH_FLAGS "${TORCH_CXX_FLAGS}")

# liburing (Debian's liburing-dev), optional: io_uring reads for --features disk. Machines
# without it (the GPU machine has no package manager) build the pread reader only.
option(DIRECTGNN_IO_URING "Use liburing for --features disk where it is installed" ON)
if(DIRECTGNN_IO_URING)
  find_library(DIRECTGNN_LIBURING NAMES uring)
  find_path(DIRECTGNN_LIBURING_INCLUDE_DIR NAMES liburing.h)
endif()
if(DIRECTGNN_IO_URING AND DIRECTGNN_LIBURING AND DIRECTGNN_LIBURING_INCLUDE_DIR)
  message(STATUS "liburing: ${DIRECTGNN_LIBURING} (--features disk can read with io_uring)")
else()
  set(DIRECTGNN_LIBURING "")
  message(STATUS "liburing not found or DIRECTGNN_IO_URING=OFF: --features disk reads with pread "
                 "threads only")
endif()

# METIS (Debian's libmetis-dev), optional: `directgnn partition --method metis`. Without it
# (the GPU machine's carried pack) partitioning offers `random` only and says why.
option(DIRECTGNN_METIS "Use METIS for directgnn partition where it is installed" ON)
if(DIRECTGNN_METIS)
  find_library(DIRECTGNN_METIS_LIBRARY NAMES metis)
  find_path(DIRECTGNN_METIS_INCLUDE_DIR NAMES metis.h)
endif()
if(DIRECTGNN_METIS AND DIRECTGNN_METIS_LIBRARY AND DIRECTGNN_METIS_INCLUDE_DIR)
  message(STATUS "METIS: ${DIRECTGNN_METIS_LIBRARY} (directgnn partition --method metis)")
else()
  set(DIRECTGNN_METIS_LIBRARY "")
  message(STATUS "METIS not found or DIRECTGNN_METIS=OFF: directgnn partition offers random only")
endif()
