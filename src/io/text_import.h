// The text parsers behind the OGB and edge-list importers, reading any TextSource (a file, or
// bytes in memory for tests and the fuzz targets). Errors name the source and line.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <vector>

#include "io/text_lines.h"

namespace directgnn {

struct EdgeColumns {
  at::Tensor src, dst;  // int64, one entry per edge line
};

// Two non-negative node ids per line, further columns ignored. With `text_format` (SNAP/CSV
// edge lists) '#'/'%' comments, blank lines and one header line before the first edge are
// skipped; without it (OGB's edge.csv) every line must be an edge.
EdgeColumns parse_edge_lines(const TextSource& source, bool text_format);

// One integer per line; with `allow_nan`, "nan" reads as -1 and integral floats ("3.0") as
// integers (OGB labels).
std::vector<int64_t> parse_int_column(const TextSource& source, bool allow_nan);

// Exactly `rows` lines of comma-separated floats, as wide as the first line: a [rows, width]
// float32 table.
at::Tensor parse_feature_rows(const TextSource& source, int64_t rows);

}  // namespace directgnn
