#include "model/model_spec.h"

namespace headroom::model {

double ModelSpec::LayerParams(bool with_cross_attention) const {
  const double h = hidden;
  // Q and O are attention_dim wide, K and V kv_dim (grouped-query attention).
  const double attention = h * attention_dim() * 2.0 + h * kv_dim() * 2.0;
  const double ffn_params = (ffn_gated ? 3.0 : 2.0) * h * ffn;
  return attention * (with_cross_attention ? 2.0 : 1.0) + ffn_params;
}

double ModelSpec::TotalParams() const {
  const double embeddings = static_cast<double>(vocab) * hidden * (tied_embeddings ? 1.0 : 2.0);
  switch (architecture) {
    case ModelArchitecture::kDecoder:
    case ModelArchitecture::kEncoder:
      return layers * LayerParams(false) + embeddings;
    case ModelArchitecture::kEncoderDecoder:
      return encoder_layers * LayerParams(false) + layers * LayerParams(true) + embeddings;
  }
  return 0;
}

double ModelSpec::DecoderWeightParams() const {
  const double lm_head = static_cast<double>(vocab) * hidden;
  const bool cross = architecture == ModelArchitecture::kEncoderDecoder;
  return layers * LayerParams(cross) + lm_head;
}

double ModelSpec::PromptWeightParams() const {
  if (architecture == ModelArchitecture::kEncoderDecoder) {
    return encoder_layers * LayerParams(false);
  }
  return DecoderWeightParams();
}

double ModelSpec::KvBytesPerToken() const { return 2.0 * layers * kv_dim() * bytes_per_param; }

}  // namespace headroom::model
