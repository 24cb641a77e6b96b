// Serving-engine calibrations (data/fits/<engine>.yaml, written by `headroom model fit`): the
// inference model's fitted efficiency per GPU type for one serving stack (the SplitwiseSim
// profile's, vLLM, TensorRT-LLM, lmdeploy, ... or a user's own), which rows of the validation
// suite each was fitted on, and which GPU types borrow a measured sibling's parameters because
// the engine was not measured on them. Immutable once built; thread-safe.
#ifndef HEADROOM_CATALOG_INFERENCE_FITS_H_
#define HEADROOM_CATALOG_INFERENCE_FITS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/inference_fit.h"
#include "model/inference_model.h"
#include "model/measurement.h"

namespace headroom::catalog {

// The engine every command and scenario assumes unless told otherwise: today's vLLM server
// (data/fits/vllm-server.yaml).
inline constexpr std::string_view kDefaultEngine = "vllm-server";
// The stack SplitwiseSim's profile measured (2023): the engine of the POLCA reproduction (its
// scenarios name it), the one `model fit` calibrates from that profile, and the overhead
// activity of fits without power measurements.
inline constexpr std::string_view kProfileEngine = "splitwise-sim";

struct GpuFit {
  model::InferenceEfficiency efficiency;
  std::string fitted_on;  // the GPU type whose measurements produced it (itself, or a sibling)
};

// The rows of the validation suite (data/validation/) an engine was fitted on: its own engine's
// rows in these data sets, of these models. Every other row of the engine is held out.
struct EngineCalibration {
  std::vector<std::string> datasets;
  std::vector<std::string> models;
  std::vector<int> tp = {};  // only rows at these tensor-parallel degrees; empty: any
  // An engine measured only end to end (served runs) keeps this engine's kernel parameters and
  // fits what serving changes (model::FitServingEngineOnGpu); empty: a full fit.
  std::string base = {};
};

// The scheduler settings an engine's server starts with unless told otherwise (vLLM's
// max_num_batched_tokens, chunked prefill on, and max_num_seqs), which the row simulator takes
// where a scenario does not set them.
struct SchedulerDefaults {
  int max_num_batched_tokens = 0;  // 0: whole prompts (no chunked prefill)
  int max_num_seqs = 0;
  bool operator==(const SchedulerDefaults&) const = default;
};

class InferenceFits {
 public:
  InferenceFits(std::string engine, std::string description);

  [[nodiscard]] static core::Result<InferenceFits> Parse(std::string_view text,
                                                         const std::string& source);
  [[nodiscard]] static core::Result<InferenceFits> Load(const std::string& path);
  // The profile engine's calibration (kProfileEngine).
  [[nodiscard]] static core::Result<InferenceFits> Embedded();

  const std::string& engine() const { return engine_; }
  const std::string& description() const { return description_; }
  // The releases it describes, e.g. ">= 0.6 (CUDA graphs)"; empty where not known.
  const std::string& version() const { return version_; }
  // "NAME" or "NAME VERSION": how every output names the engine it assumed.
  std::string Label() const { return version_.empty() ? engine_ : engine_ + " " + version_; }
  const std::optional<EngineCalibration>& calibration() const { return calibration_; }
  // Whether `m` is one of the rows this engine was fitted on.
  bool IsCalibrationRow(const model::Measurement& m) const;
  // The GPU types fitted on their own measurements, in name order.
  std::vector<std::string> FittedGpus() const;

  // REQUIRES: gpu is a canonical catalog name.
  [[nodiscard]] core::Result<GpuFit> For(const std::string& gpu) const;
  // The scheduler's defaults on `gpu` (its own entry, else the engine's "default"); nullopt for
  // an engine that names none.
  std::optional<SchedulerDefaults> SchedulerFor(const std::string& gpu) const;
  // Keyed by GPU type or "default".
  void SetScheduler(std::map<std::string, SchedulerDefaults> scheduler) {
    scheduler_ = std::move(scheduler);
  }
  const std::map<std::string, SchedulerDefaults>& scheduler() const { return scheduler_; }

  // Building a calibration to write (`model fit`). `activity_from` says where an overhead
  // activity not fitted on this GPU's own power came from: a GPU of this file, or a note.
  void SetFit(const std::string& gpu, const model::InferenceEfficiency& efficiency,
              const std::string& activity_from = "");
  void SetCalibration(EngineCalibration calibration) { calibration_ = std::move(calibration); }
  void SetProfile(std::string profile) { profile_ = std::move(profile); }
  void SetVersion(std::string version) { version_ = std::move(version); }
  // The data file Parse reads back, under a comment saying how it was made; GPU types without a
  // fit borrow their closest fitted sibling's.
  std::string ToYaml(std::string_view comment) const;

 private:
  std::string engine_;
  std::string description_;
  std::string version_;
  std::string profile_;  // the measured profile it was fitted on, if one
  std::optional<EngineCalibration> calibration_;
  std::map<std::string, model::InferenceEfficiency> fitted_;
  std::map<std::string, std::string> activity_from_;
  std::map<std::string, std::string> borrowed_;
  std::map<std::string, SchedulerDefaults> scheduler_;
};

// Every engine calibration: the built-in ones, and any loaded from a file (`--engine-file`).
class EngineCatalog {
 public:
  [[nodiscard]] static core::Result<EngineCatalog> Embedded();

  // kNotFound listing the engines there are.
  [[nodiscard]] core::Result<const InferenceFits*> Engine(std::string_view name) const;
  std::vector<std::string> Names() const;
  // Adds the calibration of `path`, replacing a built-in one of the same name; its engine name.
  [[nodiscard]] core::Result<std::string> AddFile(const std::string& path);
  // Adds `fits`, replacing any engine of the same name.
  void Add(InferenceFits fits);

 private:
  std::vector<InferenceFits> engines_;
};

// The calibration `model fit --write` produces from a fitted profile (`profile`: its path as
// shown, `model`: the model whose rows were fitted), for the engine `engine`.
InferenceFits ProfileCalibration(const model::ProfileFit& fit, const std::string& profile,
                                 const std::string& engine, const std::string& description);
// Its data file (ProfileCalibration(...).ToYaml with the profile's comment).
std::string InferenceFitsYaml(const model::ProfileFit& fit, const std::string& profile,
                              const std::string& model, const std::string& engine,
                              const std::string& description);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_INFERENCE_FITS_H_
