// Node labels from a CSV table with a header line (`id,...,label`, class names as strings), as
// many public graph datasets ship them beside their edge lists (docs/formats.md).
#pragma once

#include <ATen/Tensor.h>

#include <string>
#include <vector>

#include "io/text_lines.h"

namespace directgnn {

struct CsvLabelColumns {
  std::string label;  // the header name of the class column (required)
  std::string id;     // the node id column; empty: the column named "id", else the first
};

struct NamedLabels {
  at::Tensor labels;                     // int64 [num_nodes]; -1 for nodes without a row
  std::vector<std::string> class_names;  // class k is class_names[k]
};

// Reads `source` (RFC 4180 CSV, plain or gzip) for a graph of `num_nodes` nodes. Class names
// are numbered in sorted order: numerically when every name is an integer, else by their UTF-8
// bytes. Spaces around an id or a name are ignored. Throws naming the file and line for a
// missing column, an id that is not a node of the graph, a node given twice, an empty label
// or a label that is not UTF-8.
NamedLabels read_csv_labels(const TextSource& source, int64_t num_nodes,
                            const CsvLabelColumns& columns);

}  // namespace directgnn
