// CapsRequest: the body of `PUT /v1/caps`, parsed strictly (ParseCapsRequest: malformed JSON,
// wrong types, unknown or missing keys are kInvalidArgument) and then checked against the GPUs'
// ranges (ValidateCapsRequest: unknown GPU index is kNotFound, a value outside a GPU's range is
// kOutOfRange). Both run before anything changes. Pure functions; thread-compatible values.
#ifndef HEADROOM_SERVICE_CAPS_REQUEST_H_
#define HEADROOM_SERVICE_CAPS_REQUEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"
#include "model/gpu_spec.h"

namespace headroom::service {

// A change to one control: std::nullopt (key absent) leaves it as it is; Lift (JSON null) lifts
// the cap; Set(v) caps at v.
template <class T>
using Change = std::optional<std::optional<T>>;

// Longest lease a request may ask for (s): a controller renews every few seconds, so an hour is
// already far beyond any sane value and keeps a typo from disabling the failsafe for days.
inline constexpr double kMaxLeaseSeconds = 3600;
// Longest request_id accepted (characters).
inline constexpr size_t kMaxRequestIdLength = 128;

struct CapsRequest {
  std::optional<std::vector<int>> gpus;  // nullopt: every GPU
  Change<core::Megahertz> sm_clock;
  Change<core::Watts> power_limit;
  std::optional<bool> brake;
  core::Duration lease{0};
  std::string request_id;
  // The parsed body re-serialized with sorted keys, so that a repeat of one request compares
  // equal whatever its key order or whitespace.
  std::string canonical_body;
};

[[nodiscard]] core::Result<CapsRequest> ParseCapsRequest(std::string_view body);

// The range facts of one GPU the agent controls.
struct GpuRange {
  int index = 0;
  core::Megahertz sm_clock_min{0};
  core::Megahertz sm_clock_max{0};
  core::Watts power_limit_min{0};
  core::Watts power_limit_max{0};
};
GpuRange RangeOf(int index, const model::GpuSpec& spec);

// REQUIRES: request came from ParseCapsRequest.
[[nodiscard]] core::Status ValidateCapsRequest(const CapsRequest& request,
                                               const std::vector<GpuRange>& gpus);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_CAPS_REQUEST_H_
