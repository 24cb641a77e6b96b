// Error: the failure half of core::Result. A fixed set of codes (absl-like) with named factories.
// Thread-compatible value type.
#ifndef HEADROOM_CORE_ERROR_H_
#define HEADROOM_CORE_ERROR_H_

#include <string>
#include <string_view>

namespace headroom::core {

enum class Code {
  kInvalidArgument,     // bad input from a user, a file or a request
  kNotFound,            // a named thing does not exist
  kOutOfRange,          // a value outside a device's or a model's valid range
  kFailedPrecondition,  // the system is not in a state that allows the operation
  kPermissionDenied,    // e.g. setting a power limit without root
  kResourceExhausted,   // no room left, e.g. for a MIG placement
  kUnimplemented,       // the device or backend lacks this read or control
  kUnavailable,         // library, driver or service missing or unreachable
  kDataLoss,            // a device or data source vanished mid-operation
  kDeadlineExceeded,
  kCancelled,  // stopped on request (Ctrl-C)
  kInternal,
};

std::string_view CodeName(Code code);

class [[nodiscard]] Error {
 public:
  Error(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Error InvalidArgument(std::string message) {
    return {Code::kInvalidArgument, std::move(message)};
  }
  static Error NotFound(std::string message) { return {Code::kNotFound, std::move(message)}; }
  static Error OutOfRange(std::string message) { return {Code::kOutOfRange, std::move(message)}; }
  static Error FailedPrecondition(std::string message) {
    return {Code::kFailedPrecondition, std::move(message)};
  }
  static Error PermissionDenied(std::string message) {
    return {Code::kPermissionDenied, std::move(message)};
  }
  static Error ResourceExhausted(std::string message) {
    return {Code::kResourceExhausted, std::move(message)};
  }
  static Error Unimplemented(std::string message) {
    return {Code::kUnimplemented, std::move(message)};
  }
  static Error Unavailable(std::string message) { return {Code::kUnavailable, std::move(message)}; }
  static Error DataLoss(std::string message) { return {Code::kDataLoss, std::move(message)}; }
  static Error DeadlineExceeded(std::string message) {
    return {Code::kDeadlineExceeded, std::move(message)};
  }
  static Error Cancelled(std::string message) { return {Code::kCancelled, std::move(message)}; }
  static Error Internal(std::string message) { return {Code::kInternal, std::move(message)}; }

  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // A copy whose message is "<context>: <message>", for adding where an error happened
  // (file, field, GPU) as it travels up.
  Error WithContext(std::string_view context) const;

  bool operator==(const Error&) const = default;

 private:
  Code code_;
  std::string message_;
};

}  // namespace headroom::core

#endif  // HEADROOM_CORE_ERROR_H_
