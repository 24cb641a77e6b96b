#include "core/error.h"

#include <string>

namespace headroom::core {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kInvalidArgument:
      return "invalid argument";
    case Code::kNotFound:
      return "not found";
    case Code::kOutOfRange:
      return "out of range";
    case Code::kFailedPrecondition:
      return "failed precondition";
    case Code::kPermissionDenied:
      return "permission denied";
    case Code::kResourceExhausted:
      return "resource exhausted";
    case Code::kUnimplemented:
      return "not supported";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kDataLoss:
      return "data loss";
    case Code::kDeadlineExceeded:
      return "deadline exceeded";
    case Code::kCancelled:
      return "cancelled";
    case Code::kInternal:
      return "internal error";
  }
  return "unknown";
}

Error Error::WithContext(std::string_view context) const {
  std::string message(context);
  message += ": ";
  message += message_;
  return {code_, std::move(message)};
}

}  // namespace headroom::core
