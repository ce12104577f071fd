// Typed CSV edge lists (`convert` of a directory of S___R___D.csv files): nodes.csv's
// "type,count" table, the relation names in a file name, and one relation's edge list built
// into its CSR between a source type of 1-8 nodes and a destination type of 1-8. The first
// byte picks the reader (low two bits) and the two types' sizes; the rest is the text.
#include <cstdint>
#include <string>
#include <string_view>

#include "directgnn/error.h"
#include "fuzz_util.h"
#include "graph/hetero_graph.h"
#include "io/hetero_dir.h"
#include "io/text_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  directgnn::fuzz::single_threaded();
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (mode % 4) {
      case 0:
        directgnn::parse_node_table(text, "nodes.csv");
        break;
      case 1: {
        std::string names[3];
        directgnn::relation_file_names(std::string(text), names);
        break;
      }
      default: {
        const int64_t num_src = 1 + ((mode >> 2) & 7), num_dst = 1 + (mode >> 5);
        const auto source = directgnn::TextSource::memory(text, "a___r___b.csv");
        directgnn::EdgeColumns e = directgnn::parse_edge_lines(source, true);
        const directgnn::CsrGraph g = directgnn::build_relation_csr(
            std::move(e.src), std::move(e.dst), num_src, num_dst, "a___r___b.csv");
        directgnn::fuzz::touch(g.indptr);
        directgnn::fuzz::touch(g.indices);
        break;
      }
    }
  } catch (const directgnn::Error&) {
  }
  return 0;
}
