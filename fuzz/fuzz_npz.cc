// The .npz reader: the zip central directory (zip64 end records and extra fields), local
// headers, STORED and DEFLATE members with their CRC-32, and the .npy members inside.
#include <cstdint>
#include <string>

#include "directgnn/error.h"
#include "fuzz_util.h"
#include "io/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  directgnn::fuzz::single_threaded();
  try {
    const directgnn::NpzFile npz(nullptr, data, size, "fuzz.npz");
    for (const std::string& key : npz.keys()) {
      try {
        directgnn::fuzz::touch(npz.get(key));
      } catch (const directgnn::Error&) {
        // One bad member must not hide the others.
      }
    }
  } catch (const directgnn::Error&) {
  }
  return 0;
}
