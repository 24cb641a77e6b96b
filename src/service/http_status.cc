#include "service/http_status.h"

#include <array>
#include <utility>

namespace headroom::service {
namespace {

// Both directions; the first entry for a code or a status wins.
constexpr std::array<std::pair<core::Code, int>, 5> kStatuses = {{
    {core::Code::kInvalidArgument, 400},
    {core::Code::kOutOfRange, 422},
    {core::Code::kNotFound, 422},
    {core::Code::kFailedPrecondition, 409},
    {core::Code::kUnavailable, 503},
}};

}  // namespace

int HttpStatusFor(core::Code code) {
  for (const auto& [c, status] : kStatuses) {
    if (c == code) return status;
  }
  return 500;
}

core::Code CodeForHttpStatus(int status) {
  if (status == 401 || status == 403) return core::Code::kPermissionDenied;
  for (const auto& [code, s] : kStatuses) {
    if (s == status) return code;
  }
  return core::Code::kInternal;
}

}  // namespace headroom::service
