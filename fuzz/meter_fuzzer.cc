// Row power from outside: a Prometheus HTTP API query response, or a meter command's output
// (the first byte picks which). A reading that parses is a finite, non-negative power.
#include <cmath>

#include "fuzz/fuzz_support.h"
#include "service/row_meter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom;
  if (size == 0) return 0;
  const std::string_view text = fuzz::Text(data + 1, size - 1);
  auto watts = data[0] % 2 == 0 ? service::ParsePrometheusQueryResponse(text)
                                : service::ParseMeterOutput(text);
  if (watts) HEADROOM_CHECK(std::isfinite(watts->value()) && watts->value() >= 0);
  return 0;
}
