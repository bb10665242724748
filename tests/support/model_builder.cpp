#include "model_builder.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/model_config.hpp"
#include "model/tensor_names.hpp"

namespace attnscan::test {

ModelShape minilm_shape() { return {"all-MiniLM-L6-v2", 6, 12, 384, 1536, 30522, 512, 2, false}; }
ModelShape bert_base_uncased_shape() { return {"bert-base-uncased", 12, 12, 768, 3072, 30522, 512, 2, false}; }
ModelShape bert_large_cased_shape() { return {"bert-large-cased", 24, 16, 1024, 4096, 28996, 512, 2, true}; }
ModelShape bert_base_multilingual_cased_shape() {
  return {"bert-base-multilingual-cased", 12, 12, 768, 3072, 119547, 512, 2, true};
}
ModelShape tiny_shape() { return {"tiny", 2, 2, 8, 16, 80, 32, 2, false}; }

std::vector<std::string> test_vocab() {
  std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on",
                                "mat", "dog", "store", "straw", "##berries", "##s", "went", "to", ".", ",", "i"};
  for (char c = 'a'; c <= 'z'; ++c) v.push_back(std::string(1, c));
  for (char c = 'a'; c <= 'z'; ++c) v.push_back("##" + std::string(1, c));
  return v;  // 72 tokens
}

namespace {

struct Rng {
  uint64_t s;
  float next() {  // uniform in [-1, 1)
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<float>((s >> 40) * (1.0 / 8388608.0) - 1.0);
  }
};

std::vector<uint8_t> encode(const std::vector<float>& v, const std::string& dtype) {
  std::vector<uint8_t> out;
  if (dtype == "F32") {
    out.resize(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
  } else if (dtype == "BF16" || dtype == "F16") {
    out.resize(v.size() * 2);
    for (std::size_t i = 0; i < v.size(); ++i) {
      uint16_t h;
      if (dtype == "BF16") {
        uint32_t bits;
        std::memcpy(&bits, &v[i], 4);
        h = static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);  // round to nearest even
      } else {  // values here are small normals or zero: a simple conversion suffices
        float f = v[i];
        if (f == 0.0f) {
          h = 0;
        } else {
          uint32_t bits;
          std::memcpy(&bits, &f, 4);
          uint32_t sign = (bits >> 16) & 0x8000;
          int32_t exp = static_cast<int32_t>((bits >> 23) & 0xFF) - 127 + 15;
          uint32_t mant = (bits >> 13) & 0x3FF;
          h = exp <= 0 ? static_cast<uint16_t>(sign) : static_cast<uint16_t>(sign | (exp << 10) | mant);
        }
      }
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  } else {
    throw std::runtime_error("model_builder: unsupported dtype " + dtype);
  }
  return out;
}

}  // namespace

void write_safetensors(const std::filesystem::path& path, const std::vector<Blob>& blobs) {
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const auto& b : blobs) {
    header[b.name] = {{"dtype", b.dtype}, {"shape", b.shape}, {"data_offsets", {offset, offset + b.bytes.size()}}};
    offset += b.bytes.size();
  }
  std::string text = header.dump();
  while (text.size() % 8) text.push_back(' ');
  std::ofstream out(path, std::ios::binary);
  uint64_t n = text.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& b : blobs) out.write(reinterpret_cast<const char*>(b.bytes.data()), static_cast<std::streamsize>(b.bytes.size()));
  if (!out) throw std::runtime_error("model_builder: cannot write " + path.string());
}

std::filesystem::path build_model(const std::filesystem::path& dir, const ModelShape& s, const BuildOptions& o) {
  std::filesystem::create_directories(dir);
  nlohmann::json cfg = {{"architectures", {"BertModel"}},
                        {"model_type", o.model_type},
                        {"vocab_size", s.vocab},
                        {"hidden_size", s.hidden},
                        {"num_hidden_layers", s.layers},
                        {"num_attention_heads", s.heads},
                        {"intermediate_size", s.intermediate},
                        {"hidden_act", "gelu"},
                        {"layer_norm_eps", 1e-12},
                        {"max_position_embeddings", s.max_positions},
                        {"type_vocab_size", s.type_vocab},
                        {"position_embedding_type", "absolute"}};
  std::ofstream(dir / "config.json") << cfg.dump(2);
  std::ofstream(dir / "tokenizer_config.json")
      << nlohmann::json({{"do_lower_case", !s.cased}, {"tokenize_chinese_chars", true}, {"model_max_length", 512}}).dump();
  {
    std::ofstream v(dir / "vocab.txt");
    for (const auto& t : test_vocab()) v << t << "\n";
  }
  ModelConfig c;
  c.vocab_size = s.vocab;
  c.hidden_size = s.hidden;
  c.num_layers = s.layers;
  c.num_heads = s.heads;
  c.intermediate_size = s.intermediate;
  c.max_position_embeddings = s.max_positions;
  c.type_vocab_size = s.type_vocab;
  Rng rng{o.seed * 0x9E3779B97F4A7C15ull + 1};
  std::vector<Blob> blobs;
  auto add = [&](const std::string& name, const std::vector<int64_t>& shape, const std::string& prefix) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    const bool ln = name.find("LayerNorm") != std::string::npos;
    const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    for (auto& x : v) {
      float r = rng.next();
      x = ln ? (bias ? 0.1f * r : 1.0f + 0.1f * r) : (bias ? 0.02f * r : 0.08f * r);
    }
    blobs.push_back({prefix + name, o.dtype, shape, encode(v, o.dtype)});
  };
  for (const auto& spec : required_tensors(c)) add(spec.name, spec.shape, o.prefix);
  if (o.task_heads) {  // the pooler sits inside "bert.", MLM heads beside it
    add("pooler.dense.weight", {s.hidden, s.hidden}, o.prefix);
    add("pooler.dense.bias", {s.hidden}, o.prefix);
    add("cls.predictions.bias", {s.vocab}, "");
    add("cls.predictions.transform.dense.weight", {s.hidden, s.hidden}, "");
  }
  if (o.edit) o.edit(blobs);
  write_safetensors(dir / "model.safetensors", blobs);
  return dir;
}

}  // namespace attnscan::test
