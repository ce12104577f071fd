// Library messages name parameters, never a front end's flags (include/directgnn/error.h): a
// Python user never typed "--batch-size". Every string literal under src/ is checked.
#include <c10/core/ScalarType.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "directgnn/error.h"
#include "test_util.h"

namespace {

std::string without_line_comments(const std::string& text) {
  std::ostringstream out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    // A `//` outside a string literal starts a comment; literals here never hold one first.
    bool in_string = false;
    size_t cut = line.size();
    for (size_t i = 0; i + 1 < line.size(); ++i) {
      if (line[i] == '"' && (i == 0 || line[i - 1] != '\\')) in_string = !in_string;
      if (!in_string && line[i] == '/' && line[i + 1] == '/') {
        cut = i;
        break;
      }
    }
    out << line.substr(0, cut) << "\n";
  }
  return out.str();
}

TEST(LibraryMessages, NameNoCommandLineFlag) {
  const std::filesystem::path src = std::filesystem::path(directgnn::testing::source_dir()) / "src";
  const std::regex literal(R"("(?:[^"\\\n]|\\.)*")");
  const std::regex flag(R"(--[a-z][a-z0-9-]*)");
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h" && ext != ".cu" && ext != ".cuh") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string code = without_line_comments(buffer.str());
    for (std::sregex_iterator it(code.begin(), code.end(), literal), end; it != end; ++it) {
      std::smatch m;
      const std::string text = it->str();
      EXPECT_FALSE(std::regex_search(text, m, flag))
          << entry.path() << ": the message " << text << " names the flag " << m.str()
          << "; name the parameter instead (include/directgnn/error.h)";
    }
  }
  EXPECT_GT(files, 50) << "the sources were not found under " << src;
}

// Dtypes read as users write them in torch and numpy, not as c10 names them (Double, Long).
TEST(LibraryMessages, DtypesReadAsUsersWriteThem) {
  EXPECT_EQ(directgnn::message_of("has dtype ", c10::ScalarType::Double, "; use ",
                                  c10::ScalarType::Float),
            "has dtype float64; use float32");
  EXPECT_EQ(directgnn::message_of(c10::ScalarType::Long, " ", c10::ScalarType::Half, " ",
                                  c10::ScalarType::Byte),
            "int64 float16 uint8");
}

}  // namespace
