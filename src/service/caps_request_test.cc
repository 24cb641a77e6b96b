#include "service/caps_request.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"

namespace headroom::service {
namespace {

TEST(CapsRequestTest, ParsesEveryField) {
  auto r = ParseCapsRequest(
      R"({"gpus": [0, 1], "sm_clock_mhz": 1275, "power_limit_w": null, "brake": false,
          "lease_s": 30, "request_id": "r1"})");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(*r->gpus, (std::vector<int>{0, 1}));
  ASSERT_TRUE(r->sm_clock.has_value());
  EXPECT_EQ(**r->sm_clock, core::Megahertz(1275));
  ASSERT_TRUE(r->power_limit.has_value());    // present ...
  EXPECT_FALSE(r->power_limit->has_value());  // ... and null: lift
  EXPECT_EQ(r->brake, false);
  EXPECT_EQ(r->lease, std::chrono::seconds(30));
  EXPECT_EQ(r->request_id, "r1");
}

TEST(CapsRequestTest, AbsentMeansNoChangeAndKeyOrderDoesNotMatter) {
  auto a = ParseCapsRequest(R"({"lease_s": 5, "request_id": "x"})");
  auto b = ParseCapsRequest(R"({ "request_id":"x",  "lease_s":5 })");
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(a->gpus.has_value());
  EXPECT_FALSE(a->sm_clock.has_value());
  EXPECT_FALSE(a->power_limit.has_value());
  EXPECT_FALSE(a->brake.has_value());
  EXPECT_EQ(a->canonical_body, b->canonical_body);
}

TEST(CapsRequestTest, MalformedBodiesAreInvalidArgument) {
  for (const char* body : {
           "",
           "{",
           "[1]",
           R"({"lease_s": 5})",                                             // no request_id
           R"({"request_id": "a"})",                                        // no lease
           R"({"lease_s": 0, "request_id": "a"})",                          // lease not > 0
           R"({"lease_s": 3601, "request_id": "a"})",                       // lease too long
           R"({"lease_s": "5", "request_id": "a"})",                        // wrong type
           R"({"lease_s": 5, "request_id": 7})",                            // wrong type
           R"({"lease_s": 5, "request_id": ""})",                           // empty id
           R"({"lease_s": 5, "request_id": "a", "sm_clock_mhz": "1275"})",  // wrong type
           R"({"lease_s": 5, "request_id": "a", "sm_clock_mhz": true})",    // bool, not number
           R"({"lease_s": 5, "request_id": "a", "brake": 1})",              // wrong type
           R"({"lease_s": 5, "request_id": "a", "gpus": 0})",               // not an array
           R"({"lease_s": 5, "request_id": "a", "gpus": []})",              // empty
           R"({"lease_s": 5, "request_id": "a", "gpus": [0, 0]})",          // repeated
           R"({"lease_s": 5, "request_id": "a", "gpus": [1.5]})",           // not an integer
           R"({"lease_s": 5, "request_id": "a", "gpus": [-1]})",            // negative
           R"({"lease_s": 5, "request_id": "a", "clock": 1275})",           // unknown key
           R"({"lease_s": 5, "request_id": "a\nINFO forged line"})",        // newline in id
           R"({"lease_s": 5, "request_id": "a\u001b[2J"})",                 // terminal escape
           R"({"lease_s": 5, "request_id": "a b"})",                        // space
       }) {
    auto r = ParseCapsRequest(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().code(), core::Code::kInvalidArgument) << body;
  }
}

std::vector<GpuRange> EightA100s() {
  static const auto catalog = catalog::HardwareCatalog::Embedded();
  const model::GpuSpec& spec = **catalog->Gpu("a100-80gb-sxm");
  std::vector<GpuRange> out;
  for (int i = 0; i < 8; ++i) out.push_back(RangeOf(i, spec));
  return out;
}

TEST(CapsRequestTest, RangesAreCheckedPerGpu) {
  struct Case {
    const char* body;
    std::optional<core::Code> code;  // nullopt: valid
  };
  const std::vector<GpuRange> gpus = EightA100s();
  for (const Case& c : {
           Case{R"({"lease_s": 5, "request_id": "a", "sm_clock_mhz": 1410})", std::nullopt},
           Case{R"({"lease_s": 5, "request_id": "a", "sm_clock_mhz": 210})", std::nullopt},
           Case{R"({"lease_s": 5, "request_id": "a", "sm_clock_mhz": null})", std::nullopt},
           Case{R"({"lease_s": 5, "request_id": "a", "power_limit_w": 100})", std::nullopt},
           Case{R"({"lease_s": 5, "request_id": "a", "gpus": [7], "brake": true})", std::nullopt},
           Case{R"({"lease_s": 5, "request_id": "a", "sm_clock_mhz": 1500})",
                core::Code::kOutOfRange},
           Case{R"({"lease_s": 5, "request_id": "a", "sm_clock_mhz": 100})",
                core::Code::kOutOfRange},
           Case{R"({"lease_s": 5, "request_id": "a", "power_limit_w": 401})",
                core::Code::kOutOfRange},
           Case{R"({"lease_s": 5, "request_id": "a", "power_limit_w": 50})",
                core::Code::kOutOfRange},
           Case{R"({"lease_s": 5, "request_id": "a", "gpus": [8]})", core::Code::kNotFound},
       }) {
    auto r = ParseCapsRequest(c.body);
    ASSERT_TRUE(r) << c.body << ": " << r.error().message();
    auto st = ValidateCapsRequest(*r, gpus);
    if (!c.code) {
      EXPECT_TRUE(st) << c.body << ": " << st.error().message();
    } else {
      ASSERT_FALSE(st) << c.body;
      EXPECT_EQ(st.error().code(), *c.code) << c.body;
    }
  }
}

}  // namespace
}  // namespace headroom::service
