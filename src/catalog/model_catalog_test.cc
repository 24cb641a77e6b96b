#include "catalog/model_catalog.h"

#include <gtest/gtest.h>

namespace headroom::catalog {
namespace {

TEST(ModelCatalogTest, EveryRequiredModelParsesAndMatchesItsPublishedSize) {
  auto catalog = ModelCatalog::Embedded();
  ASSERT_TRUE(catalog) << catalog.error().message();
  for (const char* name :
       {"llama2-7b",   "llama2-13b",   "llama2-70b", "llama3-8b",   "llama3-70b",
        "llama3.1-8b", "llama3.1-70b", "mistral-7b", "qwen2-7b",    "qwen2-72b",
        "gemma2-9b",   "gemma2-27b",   "mpt-7b",     "mpt-30b",     "internlm-20b",
        "bloom-176b",  "gpt-neox-20b", "opt-30b",    "flan-t5-xxl", "roberta-large"}) {
    auto model = catalog->Model(name);
    ASSERT_TRUE(model) << name;
    EXPECT_NEAR((*model)->TotalParams() / 1e9 / (*model)->parameters_b, 1.0, 0.06) << name;
  }
}

TEST(ModelCatalogTest, DerivedSizes) {
  auto catalog = ModelCatalog::Embedded();
  ASSERT_TRUE(catalog);
  const model::ModelSpec& l70 = **catalog->Model("llama2-70b");
  EXPECT_EQ(l70.head_dim, 128);
  // 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes = 320 KiB per token.
  EXPECT_DOUBLE_EQ(l70.KvBytesPerToken(), 2.0 * 80 * 8 * 128 * 2);
  // Gemma 2 gives head_dim: 16 heads of 256 are wider than hidden / heads (3584 / 16 = 224).
  const model::ModelSpec& g9 = **catalog->Model("gemma2-9b");
  EXPECT_EQ(g9.head_dim, 256);
  EXPECT_EQ(g9.attention_dim(), 4096);
  EXPECT_DOUBLE_EQ(g9.KvBytesPerToken(), 2.0 * 42 * 8 * 256 * 2);
  const model::ModelSpec& t5 = **catalog->Model("flan-t5-xxl");
  EXPECT_EQ(t5.architecture, model::ModelArchitecture::kEncoderDecoder);
  EXPECT_LT(t5.PromptWeightParams(), t5.DecoderWeightParams());  // cross-attention
}

TEST(ModelCatalogTest, InconsistentSizesAndBadFieldsAreErrors) {
  const std::string good =
      "name: m\narchitecture: decoder\nparameters_b: 6.74\nlayers: 32\nhidden: 4096\nheads: 32\n"
      "kv_heads: 32\nffn: 11008\nffn_gated: true\nvocab: 32000\ntied_embeddings: false\n"
      "dtype: bf16\nmax_context: 4096\n";
  const SourceFile ok{"m.yaml", good};
  EXPECT_TRUE(ModelCatalog::FromFiles(std::span(&ok, 1)));
  auto parse = [](std::string text) {
    const SourceFile f{"m.yaml", std::move(text)};
    auto c = ModelCatalog::FromFiles(std::span(&f, 1));
    return c ? std::string("parsed") : c.error().message();
  };
  std::string wrong_layers = good;
  wrong_layers.replace(wrong_layers.find("layers: 32"), 10, "layers: 40");
  EXPECT_NE(parse(wrong_layers).find("field 'parameters_b': the layer sizes give"),
            std::string::npos);
  std::string bad_kv = good;
  bad_kv.replace(bad_kv.find("kv_heads: 32"), 12, "kv_heads: 5");
  EXPECT_NE(parse(bad_kv).find("field 'kv_heads': must divide heads"), std::string::npos);
  EXPECT_NE(parse(good + "experts: 8\n").find("unknown field"), std::string::npos);
  auto unknown = ModelCatalog::Embedded()->Model("gpt-5");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("llama2-70b"), std::string::npos);
}

}  // namespace
}  // namespace headroom::catalog
