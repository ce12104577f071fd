// meta.json of a heterogeneous dataset directory: JSON parsing, every node type's and
// relation's fields, names that must stay inside the directory, and the target.
#include <cstdint>
#include <string_view>

#include "directgnn/error.h"
#include "fuzz_util.h"
#include "io/hetero_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  directgnn::fuzz::single_threaded();
  try {
    directgnn::parse_hetero_meta(std::string_view(reinterpret_cast<const char*>(data), size),
                                 "meta.json");
  } catch (const directgnn::Error&) {
  }
  return 0;
}
