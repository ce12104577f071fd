// The text readers behind `convert` for SNAP/CSV edge lists and OGB raw directories: edge
// lines (with comments and a header, or strict CSV), integer columns (labels with "nan"),
// and float feature rows. The first byte picks the reader; the rest is the text.
#include <cstdint>
#include <string_view>

#include "directgnn/error.h"
#include "fuzz_util.h"
#include "io/text_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  directgnn::fuzz::single_threaded();
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto source = directgnn::TextSource::memory(text, "fuzz.txt");
  try {
    switch (mode % 4) {
      case 0:
      case 1: {
        const directgnn::EdgeColumns e = directgnn::parse_edge_lines(source, mode % 4 == 0);
        directgnn::fuzz::touch(e.src);
        directgnn::fuzz::touch(e.dst);
        break;
      }
      case 2:
        directgnn::parse_int_column(source, (mode & 4) != 0);
        break;
      default:
        directgnn::fuzz::touch(directgnn::parse_feature_rows(source, 1 + (mode >> 2)));
        break;
    }
  } catch (const directgnn::Error&) {
  }
  return 0;
}
