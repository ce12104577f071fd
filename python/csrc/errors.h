// The Python boundary's kinds of error. Every operator and class method the package registers
// is wrapped so that the library's errors (include/directgnn/error.h) reach Python as torch
// raises its own: InvalidArgument as ValueError, WrongType as TypeError, OutOfRange as
// IndexError (from c10's types of the same names), IoError as OSError (a RuntimeError marked
// here that python/directgnn/_ops.py re-raises), any other Error as RuntimeError. The message
// is the library's, which names parameters as Python's keywords do.
#pragma once

#include <c10/util/intrusive_ptr.h>
#include <torch/custom_class.h>

#include <utility>

#include "directgnn/error.h"

namespace directgnn::ops {

// The prefix of an IoError's message as Python first sees it (a RuntimeError).
inline constexpr const char* kOsErrorMark = "[directgnn OSError] ";

// Inside a catch block: throws the exception being handled as its Python kind.
[[noreturn]] void rethrow_for_python();

// Runs fn(), throwing its errors as their Python kinds.
template <typename Fn>
decltype(auto) translating(Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const Error&) {
    rethrow_for_python();
  }
}

// Guard<&f>::call has f's signature and throws f's errors as their Python kinds.
template <auto F>
struct Guard;

template <typename R, typename... A, R (*F)(A...)>
struct Guard<F> {
  static R call(A... args) {
    return translating([&]() -> R { return F(std::forward<A>(args)...); });
  }
};

template <typename C, typename R, typename... A, R (C::*F)(A...)>
struct Guard<F> {
  static R call(const c10::intrusive_ptr<C>& self, A... args) {
    return translating([&]() -> R { return ((*self).*F)(std::forward<A>(args)...); });
  }
};

template <typename C, typename R, typename... A, R (C::*F)(A...) const>
struct Guard<F> {
  static R call(const c10::intrusive_ptr<C>& self, A... args) {
    return translating([&]() -> R { return ((*self).*F)(std::forward<A>(args)...); });
  }
};

// `f` with its errors translated, for m.impl / m.def and class_::def.
template <auto F>
constexpr auto guarded = &Guard<F>::call;

// torch::init for class C from Args, with its errors translated.
template <typename C, typename... Args>
auto guarded_init() {
  return torch::init([](Args... args) {
    return translating([&] { return c10::make_intrusive<C>(std::move(args)...); });
  });
}

}  // namespace directgnn::ops
