// The .npy reader: header parsing (versions 1-3, dict syntax, shapes, dtypes) and the view of
// the array body, from a buffer. A clean directgnn::Error is the only allowed failure.
#include <cstdint>
#include <string>

#include "directgnn/error.h"
#include "fuzz_util.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  directgnn::fuzz::single_threaded();
  try {
    const directgnn::NpyHeader header = directgnn::parse_npy_header(data, size, "fuzz.npy");
    (void)header;
    const at::Tensor t = directgnn::npy_view(nullptr, data, size, "fuzz.npy");
    directgnn::fuzz::touch(t);
  } catch (const directgnn::Error&) {
  }
  return 0;
}
