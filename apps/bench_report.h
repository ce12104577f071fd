// The page `directgnn bench train --modes ... --html` writes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace directgnn::cli {

// A self-contained HTML page (no scripts, fonts or images from elsewhere) from the comparison's
// result, {"setup": {...}, "runs": [...]} as --json writes it: the setup as a key/value table
// in human units, the runs' table (skipped runs with their reason), and per run that has
// timings two stacked bars on a seconds axis, each bar labelled with its value.
std::string comparison_html(const nlohmann::json& result);

}  // namespace directgnn::cli
