// Helpers shared by the tests: temporary directories, the real datasets, error matching.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "directgnn/error.h"

namespace directgnn::testing {

// A fresh directory removed at the end of the test.
class TempDirectory {
 public:
  TempDirectory() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "directgnn-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The checkout the tests read sources from: $DIRECTGNN_SOURCE_DIR where set (a test binary
// carried to another machine, bench/gpu/), else the one these tests were built from.
inline std::string source_dir() {
  const char* env = std::getenv("DIRECTGNN_SOURCE_DIR");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(DIRECTGNN_SOURCE_DIR);
}

// The real dataset `name` (e.g. "cora.npz") from $DIRECTGNN_DATA or ../shared/datasets
// beside the checkout; empty when absent.
inline std::string dataset_file(const std::string& name) {
  if (const char* env = std::getenv("DIRECTGNN_DATA")) {
    const std::string path = std::string(env) + "/" + name;
    if (std::filesystem::exists(path)) return path;
  }
  const std::string path = source_dir() + "/../shared/datasets/" + name;
  return std::filesystem::exists(path) ? std::filesystem::canonical(path).string() : "";
}

// Writes `text` to `path`, making its directory first.
inline void write_text(const std::string& path, const std::string& text) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream(path, std::ios::binary) << text;
}

// Writes `text` gzip-compressed to `path`, making its directory first.
inline void write_gz(const std::string& path, const std::string& text) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

// Rewrites the meta.json of the dataset directory `path` through `edit`.
inline void edit_meta(const std::string& path, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json meta;
  std::ifstream(path + "/meta.json") >> meta;
  edit(meta);
  std::ofstream(path + "/meta.json") << meta.dump();
}

}  // namespace directgnn::testing

// Skips the test, saying why, when the real dataset is absent.
#define REQUIRE_DATASET(var, name)                                                          \
  const std::string var = ::directgnn::testing::dataset_file(name);                         \
  if (var.empty()) {                                                                        \
    GTEST_SKIP() << name << " not found in $DIRECTGNN_DATA or ../shared/datasets; skipped"; \
  }

// Expects `statement` to throw directgnn::Error whose message contains `needle`.
#define EXPECT_ERROR_CONTAINS(statement, needle)                                    \
  do {                                                                              \
    try {                                                                           \
      statement;                                                                    \
      ADD_FAILURE() << "expected directgnn::Error containing '" << (needle) << "'"; \
    } catch (const ::directgnn::Error& e) {                                         \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)              \
          << "message was: " << e.what();                                           \
    }                                                                               \
  } while (0)
