// ModelSpec: an LLM's architecture as data (data/models/*.yaml), and the sizes derived from it
// that the inference model needs: weight parameters, FLOPs per token, KV-cache bytes per token.
// Pure value type, thread-compatible.
#ifndef HEADROOM_MODEL_MODEL_SPEC_H_
#define HEADROOM_MODEL_MODEL_SPEC_H_

#include <string>
#include <vector>

namespace headroom::model {

enum class ModelArchitecture { kDecoder, kEncoderDecoder, kEncoder };

struct ModelSpec {
  std::string name;
  std::vector<std::string> aliases;
  ModelArchitecture architecture = ModelArchitecture::kDecoder;
  double parameters_b = 0;  // as published, billions (a cross-check of the derived count)
  int layers = 0;           // decoder layers (encoder layers for an encoder-only model)
  int encoder_layers = 0;   // encoder-decoder only
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;  // hidden / heads unless the model says otherwise
  int ffn = 0;
  bool ffn_gated = false;  // SwiGLU / gated GELU: three FFN matrices instead of two
  int vocab = 0;
  bool tied_embeddings = false;
  int bytes_per_param = 2;  // bf16 / fp16
  int max_context = 0;

  int attention_dim() const { return heads * head_dim; }
  int kv_dim() const { return kv_heads * head_dim; }
  // Weights of one transformer layer (self-attention + FFN; decoder layers of an
  // encoder-decoder model add cross-attention).
  double LayerParams(bool with_cross_attention) const;
  // Everything: layers, embeddings and (untied) LM head.
  double TotalParams() const;
  // Weights a decode step streams: the decoder layers plus the LM head.
  double DecoderWeightParams() const;
  // Weights the prompt pass uses (the encoder's, for encoder-decoder models).
  double PromptWeightParams() const;
  // Bytes of K and V that one token adds to the cache, over all decoder layers.
  double KvBytesPerToken() const;
};

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_MODEL_SPEC_H_
