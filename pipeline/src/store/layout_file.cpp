#include "store/layout_file.hpp"

#include <cmath>

#include "attnscan/error.hpp"

namespace attnscan {

std::size_t attention_value_size(AttentionDType t) {
  return t == AttentionDType::F32 ? 4 : t == AttentionDType::F16 ? 2 : 1;
}

const char* dtype_name(AttentionDType t) {
  return t == AttentionDType::F32 ? "float32" : t == AttentionDType::F16 ? "float16" : "uint8";
}

const char* compression_name(Compression c) {
  return c == Compression::None ? "none" : c == Compression::Lz4 ? "lz4" : "deflate";
}

namespace {

// Chunk sizes: per-example columns in thousands, attention in blocks of 256 Ki values (512 KiB in
// fp16) so reading one example touches one or two chunks.
constexpr std::size_t kExampleChunk = 4096, kTokenChunk = 65536, kAttentionChunk = 256 * 1024;

hid_t attention_type(AttentionDType t) {
  return t == AttentionDType::F32 ? H5T_IEEE_F32LE : t == AttentionDType::F16 ? h5::half_type() : H5T_STD_U8LE;
}

}  // namespace

namespace {
const char* const kMetadataSets[] = {
    "examples/index", "examples/row", "examples/token_offset", "examples/id", "examples/sentence_a",
    "examples/sentence_b", "examples/label", "examples/has_label", "examples/label_value", "examples/n_tokens",
    "examples/tokens_a", "examples/tokens_b", "examples/truncated", "examples/attention_offset", "tokens/id",
    "tokens/text", "tokens/word", "tokens/segment", "tokens/word_index", "tokens/special", "rejects/index", "rejects/line",
    "rejects/file", "rejects/reason"};
}  // namespace

LayoutWriter LayoutWriter::reopen(const std::filesystem::path& path, const LayoutParams& params) {
  LayoutWriter w(h5::File::open_rw(path), params);
  for (const char* name : kMetadataSets) w.file_.resize(name, 0);
  return w;
}

LayoutWriter::LayoutWriter(const std::filesystem::path& path, const LayoutParams& params, int64_t attention_values,
                           bool external_attention)
    : file_(h5::File::create(path)), params_(params) {
  auto& f = file_;
  const auto str = h5::utf8_string_type();
  for (const char* n : {"examples/index", "examples/row", "examples/token_offset"}) f.create_dataset(n, H5T_STD_U64LE, kExampleChunk);
  for (const char* n : {"examples/id", "examples/sentence_a", "examples/sentence_b", "examples/label"}) f.create_dataset(n, str, kExampleChunk);
  f.create_dataset("examples/has_label", H5T_STD_U8LE, kExampleChunk);
  f.create_dataset("examples/label_value", H5T_IEEE_F64LE, kExampleChunk);
  for (const char* n : {"examples/n_tokens", "examples/tokens_a", "examples/tokens_b"}) f.create_dataset(n, H5T_STD_U32LE, kExampleChunk);
  f.create_dataset("examples/truncated", H5T_STD_U8LE, kExampleChunk);
  f.create_dataset("examples/attention_offset", H5T_STD_I64LE, kExampleChunk);
  f.create_dataset("tokens/id", H5T_STD_I32LE, kTokenChunk);
  f.create_dataset("tokens/text", str, kTokenChunk);
  f.create_dataset("tokens/word", str, kTokenChunk);
  f.create_dataset("tokens/segment", H5T_STD_U8LE, kTokenChunk);
  f.create_dataset("tokens/word_index", H5T_STD_I32LE, kTokenChunk);
  f.create_dataset("tokens/special", H5T_STD_U8LE, kTokenChunk);
  if (attention_values >= 0 && params.compression == Compression::None)
    f.create_fixed_dataset("attention/values", attention_type(params.dtype), static_cast<std::size_t>(attention_values),
                           external_attention);
  else
    f.create_dataset("attention/values", attention_type(params.dtype), kAttentionChunk, params.compression);
  for (const char* n : {"rejects/index", "rejects/line"}) f.create_dataset(n, H5T_STD_U64LE, 1024);
  for (const char* n : {"rejects/file", "rejects/reason"}) f.create_dataset(n, str, 1024);
  f.set_attr("/attention", "layers", params.layers);
  f.set_attr("/attention", "heads", params.heads);
  f.set_attr("/attention", "model_layers", params.model_layers);
  f.set_attr("/attention", "model_heads", params.model_heads);
  f.set_attr("/attention", "dtype", std::string(dtype_name(params.dtype)));
  f.set_attr("/attention", "compression", std::string(compression_name(params.compression)));
  f.set_attr("/attention", "layout", std::string("values[o:o + L*H*n*n].reshape(L, H, n, n): [layer][head][query][key]"));
  std::vector<std::string> keys;
  for (const auto& so : params.scores) {
    const std::vector<uint64_t> lh = {static_cast<uint64_t>(params.model_layers), static_cast<uint64_t>(params.model_heads)};
    f.create_rows_dataset("scores/" + so.key() + "/values", lh, 256);
    f.create_rows_dataset("scores/" + so.key() + "/baseline", {}, 4096);
    f.set_attr("/scores/" + so.detector, "name", so.detector);
    f.set_attr("/scores/" + so.detector, "version", so.version);
    f.set_attr("/scores/" + so.detector, "description", so.description);
    f.set_attr("/scores/" + so.detector, "parameters", so.parameters);
    keys.push_back(so.key());
  }
  if (!keys.empty()) f.set_attr("/scores", "outputs", keys);
  if (params.dtype == AttentionDType::U8) {  // CF conventions: xarray decodes value * scale_factor
    f.set_attr("/attention/values", "scale_factor", 1.0 / 255.0);
    f.set_attr("/attention/values", "add_offset", 0.0);
  }
}

void LayoutWriter::append(const LayoutChunk& c) {
  auto& f = file_;
  const auto& e = c.examples;
  std::vector<uint64_t> token_offset(e.token_offset);
  for (auto& o : token_offset) o += tokens_;
  std::vector<int64_t> attention_offset(e.attention_offset);
  for (auto& o : attention_offset)
    if (o >= 0) o += static_cast<int64_t>(attention_);
  f.append("examples/index", e.index);
  f.append("examples/row", e.row);
  f.append_strings("examples/id", e.id);
  f.append_strings("examples/sentence_a", e.sentence_a);
  f.append_strings("examples/sentence_b", e.sentence_b);
  f.append_strings("examples/label", e.label);
  f.append("examples/has_label", e.has_label);
  f.append("examples/label_value", e.label_value);
  f.append("examples/n_tokens", e.n_tokens);
  f.append("examples/tokens_a", e.tokens_a);
  f.append("examples/tokens_b", e.tokens_b);
  f.append("examples/truncated", e.truncated);
  f.append("examples/token_offset", token_offset);
  f.append("examples/attention_offset", attention_offset);
  f.append("tokens/id", c.tokens.id);
  f.append_strings("tokens/text", c.tokens.text);
  f.append_strings("tokens/word", c.tokens.word);
  f.append("tokens/segment", c.tokens.segment);
  f.append("tokens/word_index", c.tokens.word_index);
  f.append("tokens/special", c.tokens.special);
  const std::size_t vs = attention_value_size(params_.dtype);
  f.append_raw("attention/values", c.attention.data(), c.attention.size() / vs);
  f.append("rejects/index", c.rejects.index);
  f.append("rejects/line", c.rejects.line);
  f.append_strings("rejects/file", c.rejects.file);
  f.append_strings("rejects/reason", c.rejects.reason);
  for (const auto& so : params_.scores) {
    auto it = c.scores.find(so.key());
    if (e.size() == 0) continue;
    if (it == c.scores.end() || it->second.baseline.size() != e.size())
      throw Error(f.path().string() + ": internal: scores of " + so.key() + " missing for a chunk");
    f.append_rows("scores/" + so.key() + "/values", it->second.values.data(), e.size());
    f.append_rows("scores/" + so.key() + "/baseline", it->second.baseline.data(), e.size());
  }
  tokens_ += c.tokens.size();
  attention_ += c.attention.size() / vs;
}

LayoutReader::LayoutReader(const std::filesystem::path& path) : file_(h5::File::open_read(path)) {
  auto& f = file_;
  if (!f.has_attr("/", "format") || f.attr_string("/", "format") != kFormatName)
    throw Error(path.string() + ": not an attnscan file (root attribute format is not 'attnscan')");
  int64_t version = f.attr_int("/", "format_version");
  if (version != kFormatVersion)
    throw Error(path.string() + ": format_version " + std::to_string(version) + ", this attnscan reads version " +
                std::to_string(kFormatVersion));
  params_.layers = f.attr_ints("/attention", "layers");
  params_.heads = f.attr_ints("/attention", "heads");
  params_.model_layers = f.attr_int("/attention", "model_layers");
  params_.model_heads = f.attr_int("/attention", "model_heads");
  std::string dt = f.attr_string("/attention", "dtype");
  params_.dtype = dt == "float32" ? AttentionDType::F32 : dt == "float16" ? AttentionDType::F16 : AttentionDType::U8;
  std::string comp = f.attr_string("/attention", "compression");
  params_.compression = comp == "lz4" ? Compression::Lz4 : comp == "deflate" ? Compression::Deflate : Compression::None;
  if (f.has_attr("/scores", "outputs")) {
    for (const std::string& key : f.attr_strings("/scores", "outputs")) {
      const std::string detector = key.substr(0, key.find('/')), group = "/scores/" + detector;
      params_.scores.push_back({detector, key.substr(detector.size() + 1), f.attr_string(group, "version"),
                                f.attr_string(group, "description"), f.attr_string(group, "parameters")});
    }
  }
  n_examples_ = f.length("examples/index");
  n_rejects_ = f.length("rejects/index");
}

uint64_t LayoutReader::attention_count(uint32_t n) const {
  return static_cast<uint64_t>(params_.layers.size() * params_.heads.size()) * n * n;
}

LayoutChunk LayoutReader::read(std::size_t a, std::size_t b, std::size_t c, std::size_t d) const {
  const auto& f = file_;
  LayoutChunk out;
  auto& e = out.examples;
  e.index = f.read<uint64_t>("examples/index", a, b);
  e.row = f.read<uint64_t>("examples/row", a, b);
  e.id = f.read_strings("examples/id", a, b);
  e.sentence_a = f.read_strings("examples/sentence_a", a, b);
  e.sentence_b = f.read_strings("examples/sentence_b", a, b);
  e.label = f.read_strings("examples/label", a, b);
  e.has_label = f.read<uint8_t>("examples/has_label", a, b);
  e.label_value = f.read<double>("examples/label_value", a, b);
  e.n_tokens = f.read<uint32_t>("examples/n_tokens", a, b);
  e.tokens_a = f.read<uint32_t>("examples/tokens_a", a, b);
  e.tokens_b = f.read<uint32_t>("examples/tokens_b", a, b);
  e.truncated = f.read<uint8_t>("examples/truncated", a, b);
  e.token_offset = f.read<uint64_t>("examples/token_offset", a, b);
  e.attention_offset = f.read<int64_t>("examples/attention_offset", a, b);
  const bool external = f.has_attr("/", kExternalAttentionAttr) && f.attr_int("/", kExternalAttentionAttr) == 1;
  if (b > a) {
    const uint64_t t0 = e.token_offset.front(), t1 = e.token_offset.back() + e.n_tokens.back();
    for (auto& o : e.token_offset) o -= t0;
    out.tokens.id = f.read<int32_t>("tokens/id", t0, t1);
    out.tokens.text = f.read_strings("tokens/text", t0, t1);
    out.tokens.word = f.read_strings("tokens/word", t0, t1);
    out.tokens.segment = f.read<uint8_t>("tokens/segment", t0, t1);
    out.tokens.word_index = f.read<int32_t>("tokens/word_index", t0, t1);
    out.tokens.special = f.read<uint8_t>("tokens/special", t0, t1);
    int64_t v0 = -1, v1 = -1;
    for (std::size_t i = 0; i < e.size(); ++i) {
      if (e.attention_offset[i] < 0) continue;
      if (v0 < 0) v0 = e.attention_offset[i];
      v1 = e.attention_offset[i] + static_cast<int64_t>(attention_count(e.n_tokens[i]));
    }
    if (v0 >= 0 && !external) {
      for (auto& o : e.attention_offset)
        if (o >= 0) o -= v0;
      out.attention.resize(static_cast<std::size_t>(v1 - v0) * attention_value_size(params_.dtype));
      f.read_raw("attention/values", static_cast<std::size_t>(v0), static_cast<std::size_t>(v1), out.attention.data());
    }
  }
  for (const auto& so : params_.scores)
    out.scores[so.key()] = {f.read_rows("scores/" + so.key() + "/values", a, b),
                            f.read_rows("scores/" + so.key() + "/baseline", a, b)};
  out.rejects.index = f.read<uint64_t>("rejects/index", c, d);
  out.rejects.line = f.read<uint64_t>("rejects/line", c, d);
  out.rejects.file = f.read_strings("rejects/file", c, d);
  out.rejects.reason = f.read_strings("rejects/reason", c, d);
  return out;
}

}  // namespace attnscan
