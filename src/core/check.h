// HEADROOM_CHECK(cond) << "context": a broken invariant is a bug, not an error. It logs the
// condition and context to stderr and aborts, in every build type. Thread-safe.
#ifndef HEADROOM_CORE_CHECK_H_
#define HEADROOM_CORE_CHECK_H_

#include <sstream>

namespace headroom::core::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Gives the ternary in HEADROOM_CHECK a void type on both branches.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace headroom::core::internal

#define HEADROOM_CHECK(condition)               \
  (condition)                                   \
      ? (void)0                                 \
      : ::headroom::core::internal::Voidify() & \
            ::headroom::core::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#endif  // HEADROOM_CORE_CHECK_H_
