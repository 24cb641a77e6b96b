// MIG layout text (`headroom mig apply --layout`, `mig characterize --layouts`). The canonical
// form of a layout that parses parses to the same canonical form.
#include "fuzz/fuzz_support.h"
#include "mig/layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom::mig;
  auto layout = ParseLayout(headroom::fuzz::Text(data, size));
  if (!layout) return 0;
  const std::string text = FormatLayout(*layout);
  auto again = ParseLayout(text);
  HEADROOM_CHECK(again.has_value()) << text << ": " << again.error().message();
  HEADROOM_CHECK(FormatLayout(*again) == text);
  return 0;
}
