// The single error model of directgnn: every failure a user can cause or meet throws
// directgnn::Error whose message says what is wrong, where (file, row, field) and how to fix it.
// The command-line front end prints it as `error: ...` and exits non-zero.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace directgnn {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void fail(Args&&... args) {
  std::ostringstream message;
  (message << ... << std::forward<Args>(args));
  throw Error(message.str());
}

}  // namespace directgnn

// Throws directgnn::Error built from the remaining arguments when `cond` is false.
#define DGNN_CHECK(cond, ...)         \
  do {                                \
    if (!(cond)) {                    \
      ::directgnn::fail(__VA_ARGS__); \
    }                                 \
  } while (0)
