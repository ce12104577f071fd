# Precompiled headers. Nearly every source includes ATen, and parsing it is most of a
# translation unit's time (about 25 s of a 40 s compile on the 2-core machine), so each big
# target parses these headers once. Turn it off (-DDIRECTGNN_PCH=OFF) to check that every
# file includes what it uses.
option(DIRECTGNN_PCH "Precompile the torch, JSON and standard headers each target uses" ON)

# Adds the shared headers, and `extra` (a target's own heavy headers), to `target`'s C++
# sources; files compiled with their own floating-point options are left out (their inline
# functions must be parsed under those options).
function(directgnn_precompile_headers target)
  if(NOT DIRECTGNN_PCH)
    return()
  endif()
  set(headers <ATen/ATen.h> <ATen/Parallel.h> <torch/nn/module.h> <torch/optim/optimizer.h>
    <nlohmann/json.hpp> <algorithm> <functional> <memory> <string> <unordered_map> <vector>
    ${ARGN})
  set(cxx_headers "")
  foreach(header ${headers})
    list(APPEND cxx_headers "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${cxx_headers})
endfunction()

# Sources that must not see the precompiled headers.
function(directgnn_skip_precompiled_headers)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()

# Unity builds: every translation unit that includes the precompiled headers spends 6-9 s
# loading them (a 0.5 GB file) before it compiles a line, so the test binaries (and, in the
# sanitized build, the library) compile their sources in batches. Turn it off
# (-DDIRECTGNN_UNITY_TESTS=OFF) for quick rebuilds of one test file.
option(DIRECTGNN_UNITY_TESTS "Compile the test binaries' sources in batches" ON)
option(DIRECTGNN_UNITY_LIBRARY
  "Compile the library's sources in batches (the sanitizer preset; not the release build, whose results are pinned per file)" OFF)

# Batches `target`'s sources, `size` files to a translation unit, when `enabled`. A batch is
# one translation unit, so the helpers of a target's anonymous namespaces must not share a
# name and signature across its files (the batches shift as files are added: a collision shows
# up as a redefinition in one build and not another).
function(directgnn_unity_build target enabled size)
  if(enabled)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${size})
  endif()
endfunction()

# Sources that must be compiled on their own (their own floating-point options).
function(directgnn_skip_unity_build)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
