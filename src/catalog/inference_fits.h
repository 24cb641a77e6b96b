// InferenceFits: the fitted efficiency parameters per GPU type (data/fits/*.yaml, written by
// `headroom model fit`), and which GPU types borrow a measured sibling's parameters because no
// profile of their own exists. Immutable once built; thread-safe.
#ifndef HEADROOM_CATALOG_INFERENCE_FITS_H_
#define HEADROOM_CATALOG_INFERENCE_FITS_H_

#include <map>
#include <string>
#include <string_view>

#include "core/result.h"
#include "model/inference_fit.h"
#include "model/inference_model.h"

namespace headroom::catalog {

struct GpuFit {
  model::InferenceEfficiency efficiency;
  std::string fitted_on;  // the GPU type whose profile produced it (itself, or a sibling)
};

class InferenceFits {
 public:
  [[nodiscard]] static core::Result<InferenceFits> Parse(std::string_view text,
                                                         const std::string& source);
  [[nodiscard]] static core::Result<InferenceFits> Embedded();

  // REQUIRES: gpu is a canonical catalog name.
  [[nodiscard]] core::Result<GpuFit> For(const std::string& gpu) const;

 private:
  std::map<std::string, model::InferenceEfficiency> fitted_;
  std::map<std::string, std::string> borrowed_;
};

// The data file `model fit --write` produces from a fitted profile (`profile`: its path as
// shown, `model`: the model whose rows were fitted), which Parse reads back: the fits, where
// each overhead activity came from, and the GPU types that borrow a sibling's fit.
std::string InferenceFitsYaml(const model::ProfileFit& fit, const std::string& profile,
                              const std::string& model);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_INFERENCE_FITS_H_
