// meta.json of a dataset directory: JSON parsing and the checks of every field's type and
// range.
#include <cstdint>
#include <string_view>

#include "directgnn/error.h"
#include "fuzz_util.h"
#include "io/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  directgnn::fuzz::single_threaded();
  try {
    directgnn::parse_dataset_meta(std::string_view(reinterpret_cast<const char*>(data), size),
                                  "meta.json");
  } catch (const directgnn::Error&) {
  }
  return 0;
}
