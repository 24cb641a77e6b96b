// Result<T>: a value or a core::Error (tl::expected, to become std::expected with C++23 in this
// one place). Status is Result<void>. Thread-compatible.
#ifndef HEADROOM_CORE_RESULT_H_
#define HEADROOM_CORE_RESULT_H_

#include <utility>

#include <tl/expected.hpp>

#include "core/error.h"

namespace headroom::core {

template <class T>
using Result = tl::expected<T, Error>;
using Status = Result<void>;

inline tl::unexpected<Error> Fail(Error error) { return tl::unexpected<Error>(std::move(error)); }
inline Status Ok() { return {}; }

}  // namespace headroom::core

#define HEADROOM_CONCAT_INNER_(a, b) a##b
#define HEADROOM_CONCAT_(a, b) HEADROOM_CONCAT_INNER_(a, b)

// Returns the error of a Status or Result expression from the enclosing function.
#define HEADROOM_RETURN_IF_ERROR(expr)                                              \
  do {                                                                              \
    auto&& headroom_status_ = (expr);                                               \
    if (!headroom_status_) return ::headroom::core::Fail(headroom_status_.error()); \
  } while (false)

// `HEADROOM_ASSIGN_OR_RETURN(auto x, Compute());` binds the value or returns the error.
#define HEADROOM_ASSIGN_OR_RETURN(lhs, expr) \
  HEADROOM_ASSIGN_OR_RETURN_IMPL_(HEADROOM_CONCAT_(headroom_result_, __LINE__), lhs, expr)
#define HEADROOM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)            \
  auto tmp = (expr);                                               \
  if (!tmp) return ::headroom::core::Fail(std::move(tmp).error()); \
  lhs = std::move(tmp).value()

#endif  // HEADROOM_CORE_RESULT_H_
