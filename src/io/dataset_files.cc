#include "io/dataset_files.h"

#include <ATen/ATen.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string_view>

#include "core/atomic_file.h"
#include "core/progress.h"
#include "io/npy.h"

namespace directgnn {
namespace {

// Rows [begin, begin + part.size(0)) as stored: every value must be finite.
void check_chunk_finite(const at::Tensor& part, int64_t begin, const std::string& path) {
  const auto [row, col] = first_non_finite(part);
  if (row < 0) return;
  const float value = part[row][col].item<float>();
  const bool overflow = part.scalar_type() == at::kHalf && std::isinf(value);
  fail(path, ": features row ", begin + row, " column ", col, " is ", value,
       overflow ? " once stored as float16, which holds at most +-65504; keep float32 "
                  "features or scale them"
                : "; features must be finite (replace NaN/inf, e.g. numpy.nan_to_num)");
}

}  // namespace

FileStamp file_stamp(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {};
  return {static_cast<int64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
          static_cast<int64_t>(st.st_ino)};
}

FileStamp write_checked_features(const std::string& path, const FeatureStream& features) {
  AtomicFile file(path);
  // Data on a 4 KiB boundary: --features disk then reads each 4 KiB row from one block.
  file.write(npy_header_for(features.dtype, {features.rows, features.dim}, kNpyDiskAlign));
  const int64_t chunk =
      std::max<int64_t>(1, (int64_t{64} << 20) / (4 * std::max<int64_t>(1, features.dim)));
  at::Tensor rows = at::empty({std::min(chunk, features.rows), features.dim}, at::kFloat);
  Progress progress("writing features", features.rows);
  for (int64_t begin = 0; begin < features.rows; begin += chunk) {
    const int64_t end = std::min(features.rows, begin + chunk);
    at::Tensor part = rows.narrow(0, 0, end - begin);
    features.fill(begin, end, part.data_ptr<float>());
    if (features.dtype == at::kHalf) part = part.to(at::kHalf);
    check_chunk_finite(part, begin, path);
    file.write(std::string_view(static_cast<const char*>(part.data_ptr()), part.nbytes()));
    progress.update(end);
  }
  progress.finish();
  file.commit();
  return file_stamp(path);
}

at::Tensor load_required(const std::string& dir, const std::string& file) {
  const std::string path = dir + "/" + file;
  if (!std::filesystem::exists(path)) fail(dir, ": missing ", file, " (see docs/formats.md)");
  return load_npy(path);
}

std::vector<std::string> class_names_field(const nlohmann::json& object, int64_t num_classes,
                                           const std::string& where) {
  if (!object.contains("class_names")) return {};
  const nlohmann::json& names = object.at("class_names");
  DGNN_CHECK(names.is_array() && static_cast<int64_t>(names.size()) == num_classes, where,
             ": field 'class_names' must be a list of ", num_classes,
             " strings (one per class), got ", names.dump().substr(0, 40));
  std::vector<std::string> out;
  for (const nlohmann::json& name : names) {
    DGNN_CHECK(name.is_string(), where, ": field 'class_names' holds ", name.dump().substr(0, 40),
               "; class names must be strings");
    out.push_back(name.get<std::string>());
  }
  return out;
}

}  // namespace directgnn
