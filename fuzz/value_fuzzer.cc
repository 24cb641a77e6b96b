// The values users type: durations (exact in int64 ns, FormatDuration reads back the same) and
// value lists (`--sm-clocks 1110:1410:75`, bounded in length).
#include "core/parse.h"
#include "core/time.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom::core;
  const std::string_view text = headroom::fuzz::Text(data, size);
  if (auto d = ParseDuration(text)) {
    auto back = ParseDuration(FormatDuration(*d));
    HEADROOM_CHECK(back.has_value()) << FormatDuration(*d) << ": " << back.error().message();
    HEADROOM_CHECK(*back == *d) << text << " -> " << FormatDuration(*d);
  }
  (void)ParseValueList(text);
  (void)ParseDouble(text);
  (void)ParseInteger(text);
  return 0;
}
