// InferenceFits: the fitted efficiency parameters per GPU type (data/fits/*.yaml, written by
// `headroom model fit`), and which GPU types borrow a measured sibling's parameters because no
// profile of their own exists. Immutable once built; thread-safe.
#ifndef HEADROOM_CATALOG_INFERENCE_FITS_H_
#define HEADROOM_CATALOG_INFERENCE_FITS_H_

#include <map>
#include <string>
#include <string_view>

#include "core/result.h"
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

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_INFERENCE_FITS_H_
