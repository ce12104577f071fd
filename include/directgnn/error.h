// The single error model of directgnn: every failure a user can cause or meet throws
// directgnn::Error, whose message says what is wrong, where (file, row, field) and how to fix
// it. Kinds that callers treat differently are subclasses:
//   InvalidArgument  a value the caller chose is wrong; names the parameter (ValueError)
//   WrongType        an argument of the wrong kind: dtype, shape, device (TypeError)
//   OutOfRange       an id outside its table or graph (IndexError)
//   IoError          reading or writing a file failed (OSError)
// Library messages name parameters, never a front end's spelling of them: an InvalidArgument
// reads "batch_size: must be positive, got 0", and each front end adds its own spelling of the
// parameter (the CLI prints "--batch-size: ...", Python raises ValueError("batch_size: ...")).
// Other parameters a message mentions are named plainly ("set features to host").
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace c10 {
enum class ScalarType : int8_t;
}  // namespace c10

namespace directgnn {

// A dtype as users write it in torch and numpy (float64, int64), not c10's Double and Long;
// messages print dtypes so.
std::string dtype_name(c10::ScalarType type);

namespace detail {
template <typename T>
const T& message_part(const T& value) {
  return value;
}
inline std::string message_part(c10::ScalarType type) { return dtype_name(type); }
}  // namespace detail

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvalidArgument : public Error {
 public:
  InvalidArgument(std::string parameter, const std::string& detail)
      : Error(parameter + ": " + detail), parameter_(std::move(parameter)), detail_(detail) {}
  // The library's name of the parameter (snake_case, e.g. "batch_size").
  const std::string& parameter() const { return parameter_; }
  // The message without the parameter.
  const std::string& detail() const { return detail_; }

 private:
  std::string parameter_, detail_;
};

class WrongType : public Error {
 public:
  using Error::Error;
};

class OutOfRange : public Error {
 public:
  using Error::Error;
};

class IoError : public Error {
 public:
  using Error::Error;
};

template <typename... Args>
std::string message_of(Args&&... args) {
  std::ostringstream message;
  (message << ... << detail::message_part(args));
  return message.str();
}

template <typename... Args>
[[noreturn]] void fail(Args&&... args) {
  throw Error(message_of(std::forward<Args>(args)...));
}

// Throws InvalidArgument for `parameter`, the rest of the arguments making the detail.
template <typename... Args>
[[noreturn]] void fail_argument(const std::string& parameter, Args&&... args) {
  throw InvalidArgument(parameter, message_of(std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_type(Args&&... args) {
  throw WrongType(message_of(std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_index(Args&&... args) {
  throw OutOfRange(message_of(std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void fail_io(Args&&... args) {
  throw IoError(message_of(std::forward<Args>(args)...));
}

}  // namespace directgnn

// Throws directgnn::Error built from the remaining arguments when `cond` is false.
#define DGNN_CHECK(cond, ...)         \
  do {                                \
    if (!(cond)) {                    \
      ::directgnn::fail(__VA_ARGS__); \
    }                                 \
  } while (0)

// The same with the kinds above: DGNN_CHECK_ARG(cond, "parameter", detail...).
#define DGNN_CHECK_ARG(cond, ...)              \
  do {                                         \
    if (!(cond)) {                             \
      ::directgnn::fail_argument(__VA_ARGS__); \
    }                                          \
  } while (0)
#define DGNN_CHECK_TYPE(cond, ...)         \
  do {                                     \
    if (!(cond)) {                         \
      ::directgnn::fail_type(__VA_ARGS__); \
    }                                      \
  } while (0)
#define DGNN_CHECK_INDEX(cond, ...)         \
  do {                                      \
    if (!(cond)) {                          \
      ::directgnn::fail_index(__VA_ARGS__); \
    }                                       \
  } while (0)
#define DGNN_CHECK_IO(cond, ...)         \
  do {                                   \
    if (!(cond)) {                       \
      ::directgnn::fail_io(__VA_ARGS__); \
    }                                    \
  } while (0)
