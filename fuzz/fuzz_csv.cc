// The CSV reader behind `convert --labels TABLE.csv`: RFC 4180 records, then labels of a
// 16-node graph from the columns "id" and "label". The first byte picks which; the rest is
// the text.
#include <cstdint>
#include <string_view>

#include "directgnn/error.h"
#include "fuzz_util.h"
#include "io/csv.h"
#include "io/csv_labels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  directgnn::fuzz::single_threaded();
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] % 2 == 0) {
      directgnn::CsvReader reader(text, "fuzz.csv");
      size_t bytes = 0;
      for (directgnn::CsvRecord record; reader.next(record);) {
        for (const auto& field : record.fields) bytes += field.size();
      }
      (void)directgnn::is_valid_utf8(text);
      (void)bytes;
    } else {
      const auto source = directgnn::TextSource::memory(text, "fuzz.csv");
      directgnn::fuzz::touch(directgnn::read_csv_labels(source, 16, {"label", ""}).labels);
    }
  } catch (const directgnn::Error&) {
  }
  return 0;
}
