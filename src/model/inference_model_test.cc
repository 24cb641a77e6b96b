// Shapes the inference model must have whatever its fitted parameters: what scales with what,
// and the published power behaviour of prefill vs decode (brief §1).
#include "model/inference_model.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"

namespace headroom::model {
namespace {

InferenceModel Make(const char* model, const char* gpu) {
  static const auto hardware = catalog::HardwareCatalog::Embedded();
  static const auto models = catalog::ModelCatalog::Embedded();
  static const auto fits = catalog::InferenceFits::Embedded();
  EXPECT_TRUE(hardware && models && fits);
  const GpuSpec& spec = **hardware->Gpu(gpu);
  return InferenceModel(**models->Model(model), GpuPowerModel(spec),
                        fits->For(spec.name)->efficiency);
}

double PrefillMs(const InferenceModel& m, int tp, int batch, int prompt) {
  const InferenceShape s{.tp = tp, .batch = batch, .prompt = prompt, .context = prompt};
  return m.AtClock(m.PrefillPhase(s), tp, m.gpu().spec().sm_clock_max).time_s * 1e3;
}

// A serving process's host time adds to every decode step, fixed and per sequence, without
// touching prefill; while the GPU waits it keeps its clocks but does no SM or memory work, so
// the step's energy grows by the wait at idle plus clock-tree power.
TEST(InferenceModelTest, HostTimeStretchesDecodeStepsAtIdlePlusClockTreePower) {
  const InferenceModel offline = Make("llama2-7b", "a100-80gb-sxm");
  InferenceEfficiency e = offline.efficiency();
  e.host_step_s = 0.010;
  e.host_per_sequence_s = 0.0002;
  const InferenceModel served(offline.model(), offline.gpu(), e);
  const InferenceShape s{.tp = 1, .batch = 32, .prompt = 512, .context = 600};
  const core::Megahertz f = offline.gpu().spec().sm_clock_max;
  const PhaseEstimate a = offline.AtClock(*offline.DecodePhase(s), 1, f);
  const PhaseEstimate b = served.AtClock(*served.DecodePhase(s), 1, f);
  const double wait_s = 0.010 + 32 * 0.0002;
  EXPECT_NEAR(b.time_s, a.time_s + wait_s, 1e-12);
  EXPECT_LT(b.power.value(), a.power.value());
  const PowerModelParams& p = offline.gpu().spec().power;
  const double wait_w = offline.gpu().spec().idle_power.value() + p.active_w;
  EXPECT_NEAR(b.energy.value(), a.energy.value() + wait_s * wait_w, 1e-6);
  EXPECT_EQ(served.AtClock(served.PrefillPhase(s), 1, f).time_s,
            offline.AtClock(offline.PrefillPhase(s), 1, f).time_s);
}

TEST(InferenceModelTest, WorkScalesWithTheArchitecture) {
  const InferenceModel m = Make("llama2-70b", "a100-80gb-sxm");
  const InferenceShape base{.tp = 8, .batch = 1, .prompt = 1024, .context = 1024};
  InferenceShape doubled = base;
  doubled.prompt = 2048;
  // Prefill FLOPs grow at least linearly in the prompt (attention makes it superlinear).
  EXPECT_GT(m.PrefillPhase(doubled).flops, 2.0 * m.PrefillPhase(base).flops * 0.999);
  // A decode step streams the GPU's share of the weights plus the KV cache.
  const Phase step = *m.DecodePhase(base);
  EXPECT_NEAR(step.bytes, m.WeightBytesPerGpu(8) + m.KvBytesPerGpu(8, 1024), 0.05 * step.bytes);
  InferenceShape tp4 = base;
  tp4.tp = 4;
  EXPECT_NEAR(m.DecodePhase(tp4)->bytes / step.bytes, 2.0, 0.01);
}

TEST(InferenceModelTest, PrefillIsComputeBoundDecodeMemoryBound) {
  const InferenceModel m = Make("llama2-70b", "a100-80gb-sxm");
  const InferenceShape s{.tp = 8, .batch = 8, .prompt = 2048, .context = 2048};
  const auto f = m.gpu().spec().sm_clock_max;
  const PhaseTiming prefill = m.gpu().Time(m.PrefillPhase(s), f);
  const PhaseTiming decode = m.gpu().Time(*m.DecodePhase(s), f);
  EXPECT_GT(prefill.activity.sm, prefill.activity.mem);
  EXPECT_GT(decode.activity.mem, decode.activity.sm);
}

TEST(InferenceModelTest, PromptLengthAndBatchRaisePrefillPowerAboveDecode) {
  for (const char* gpu : {"a100-80gb-sxm", "h100-80gb-sxm"}) {
    const InferenceModel m = Make("llama2-70b", gpu);
    const auto f = m.gpu().spec().sm_clock_max;
    auto prefill_w = [&](int batch, int prompt) {
      return m.AtClock(m.PrefillPhase({.tp = 8, .batch = batch, .prompt = prompt}), 8, f)
          .power.value();
    };
    EXPECT_LT(prefill_w(1, 256), prefill_w(1, 8192)) << gpu;
    EXPECT_LT(prefill_w(1, 512), prefill_w(16, 512)) << gpu;
    const double decode_w =
        m.AtClock(*m.DecodePhase({.tp = 8, .batch = 8, .prompt = 1024, .context = 1024}), 8, f)
            .power.value();
    EXPECT_LT(decode_w, prefill_w(1, 2048)) << gpu;
    // Near TDP with a long prompt.
    EXPECT_GT(prefill_w(1, 8192), 0.8 * m.gpu().spec().tdp.value()) << gpu;
  }
}

TEST(InferenceModelTest, OutputLengthOnlyStretchesTime) {
  const InferenceModel m = Make("llama2-70b", "a100-80gb-sxm");
  const auto f = m.gpu().spec().sm_clock_max;
  const auto short_out =
      m.AtClock(*m.DecodePhase({.tp = 8, .batch = 1, .prompt = 512, .context = 512 + 64}), 8, f);
  const auto long_out =
      m.AtClock(*m.DecodePhase({.tp = 8, .batch = 1, .prompt = 512, .context = 512 + 1024}), 8, f);
  EXPECT_NEAR(long_out.power.value(), short_out.power.value(), 0.03 * short_out.power.value());
  EXPECT_NEAR(long_out.time_s / short_out.time_s, 1.0, 0.05);
}

TEST(InferenceModelTest, ClockCapsSlowPrefillButBarelyDecode) {
  const InferenceModel m = Make("llama2-70b", "a100-80gb-sxm");
  const InferenceShape s{.tp = 8, .batch = 4, .prompt = 2048, .context = 2048};
  const auto hi = core::Megahertz(1410), lo = core::Megahertz(1110);
  const double prefill_slow =
      m.AtClock(m.PrefillPhase(s), 8, lo).time_s / m.AtClock(m.PrefillPhase(s), 8, hi).time_s;
  const double decode_slow =
      m.AtClock(*m.DecodePhase(s), 8, lo).time_s / m.AtClock(*m.DecodePhase(s), 8, hi).time_s;
  EXPECT_GT(prefill_slow, 1.1);
  EXPECT_LT(decode_slow, 1.05);
}

TEST(InferenceModelTest, EveryCataloguedModelOnEveryGpuGivesFiniteAnswers) {
  static const auto hardware = catalog::HardwareCatalog::Embedded();
  static const auto models = catalog::ModelCatalog::Embedded();
  for (const auto& gpu : hardware->gpus()) {
    for (const auto& spec : models->models()) {
      const InferenceModel m = Make(spec.name.c_str(), gpu.name.c_str());
      const double t = PrefillMs(m, 1, 1, 256);
      EXPECT_GT(t, 0) << spec.name << " " << gpu.name;
      EXPECT_LT(t, 1e5) << spec.name << " " << gpu.name;
      EXPECT_EQ(m.DecodePhase({.tp = 1, .batch = 1, .prompt = 256, .context = 256}).has_value(),
                spec.architecture != ModelArchitecture::kEncoder);
    }
  }
}

TEST(InferenceModelTest, SmallerModelsAreFasterOnTheSameGpu) {
  const double small = PrefillMs(Make("llama2-7b", "h100-80gb-sxm"), 1, 1, 2048);
  const double mid = PrefillMs(Make("llama2-13b", "h100-80gb-sxm"), 1, 1, 2048);
  const double large = PrefillMs(Make("llama2-70b", "h100-80gb-sxm"), 1, 1, 2048);
  EXPECT_LT(small, mid);
  EXPECT_LT(mid, large);
}

}  // namespace
}  // namespace headroom::model
