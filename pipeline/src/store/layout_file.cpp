#include "store/layout_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "common/error.hpp"
#include "common/half_float.hpp"
#include "store/source_identity.hpp"

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

// Attention in blocks of 256 Ki values (512 KiB in fp16), so reading one example touches one or two chunks.
constexpr std::size_t kAttentionChunk = 256 * 1024;

hid_t attention_type(AttentionDType t) {
  return t == AttentionDType::F32 ? H5T_IEEE_F32LE : t == AttentionDType::F16 ? h5::half_type() : H5T_STD_U8LE;
}

// The file type of a column, from its element type.
template <typename T>
hid_t column_type() {
  if constexpr (std::is_same_v<T, std::string>) return h5::utf8_string_type();
  else if constexpr (std::is_same_v<T, uint64_t>) return H5T_STD_U64LE;
  else if constexpr (std::is_same_v<T, int64_t>) return H5T_STD_I64LE;
  else if constexpr (std::is_same_v<T, uint32_t>) return H5T_STD_U32LE;
  else if constexpr (std::is_same_v<T, int32_t>) return H5T_STD_I32LE;
  else if constexpr (std::is_same_v<T, uint8_t>) return H5T_STD_U8LE;
  else if constexpr (std::is_same_v<T, double>) return H5T_IEEE_F64LE;
  else static_assert(sizeof(T) == 0, "a column type without an HDF5 type");
}

template <typename T>
void append_column(h5::File& f, const std::string& name, const std::vector<T>& values) {
  if constexpr (std::is_same_v<T, std::string>) f.append_strings(name, values);
  else f.append(name, values);
}

template <typename T>
void read_column(const h5::File& f, const std::string& name, std::size_t begin, std::size_t end, std::vector<T>& out) {
  if constexpr (std::is_same_v<T, std::string>) out = f.read_strings(name, begin, end);
  else out = f.read<T>(name, begin, end);
}

bool starts_with(const char* s, const char* prefix) { return std::string_view(s).rfind(prefix, 0) == 0; }

// The attribute /attention:dtype; anything else is refused, never read as another dtype.
AttentionDType parse_dtype(const std::filesystem::path& path, const std::string& dt) {
  for (auto t : {AttentionDType::F32, AttentionDType::F16, AttentionDType::U8})
    if (dt == dtype_name(t)) return t;
  throw Error(path.string() + ": attribute /attention:dtype is '" + dt +
              "', not float32, float16 or uint8 (the file is damaged or was not written by attnscan)");
}

Compression parse_compression(const std::filesystem::path& path, const std::string& c) {
  for (auto k : {Compression::None, Compression::Lz4, Compression::Deflate})
    if (c == compression_name(k)) return k;
  throw Error(path.string() + ": attribute /attention:compression is '" + c +
              "', not none, lz4 or deflate (the file is damaged or was not written by attnscan)");
}

}  // namespace

bool LayoutParams::stores(std::string_view layer_map) const {
  return std::find(layer_maps.begin(), layer_maps.end(), layer_map) != layer_maps.end();
}

bool is_char_offset_column(std::string_view name) {
  return name == "tokens/char_start" || name == "tokens/char_end";
}

std::vector<float> read_baseline_rows(const h5::File& f, const std::string& key, std::size_t begin, std::size_t end,
                                      std::size_t layers) {
  const std::string name = score_baseline(key);
  const auto dims = f.dims(name);
  std::vector<float> rows = f.read_rows(name, begin, end);
  if (dims.size() == 2 && dims[1] == layers) return rows;
  if (dims.size() != 1)
    throw Error(f.path().string() + ": dataset " + name + " is not [examples] or [examples, " + std::to_string(layers) +
                "] (one baseline per layer)");
  std::vector<float> out;
  out.reserve(rows.size() * layers);
  for (float b : rows) out.insert(out.end(), layers, b);
  return out;
}

LayoutWriter LayoutWriter::reopen(const std::filesystem::path& path, const LayoutParams& params) {
  LayoutWriter w(h5::File::open_rw(path), params);
  LayoutChunk none;
  for_each_column(none, [&](const char* name, const auto&, std::size_t) { w.file_.resize(name, 0); });
  for (const auto& so : params.scores) {  // rows of an earlier, interrupted pass
    w.file_.resize(score_values(so.key()), 0);
    w.file_.resize(score_baseline(so.key()), 0);
  }
  if (params.value_norms) w.file_.resize(kValueNorms, 0);
  for (const auto& name : params.layer_maps) w.file_.resize(find_layer_map(name)->dataset, 0);
  if (params.trees) w.file_.resize(kDepHead, 0), w.file_.resize(kDepRelation, 0);
  if (w.file_.exists(kAttentionChecksums)) w.file_.remove(kAttentionChecksums);
  return w;
}

LayoutWriter::LayoutWriter(const std::filesystem::path& path, const LayoutParams& params, int64_t attention_values,
                           bool external_attention)
    : file_(h5::File::create(path)), params_(params) {
  create_datasets(attention_values, external_attention, nullptr, 0);
}

LayoutWriter LayoutWriter::for_block(const std::filesystem::path& path, const LayoutParams& params, const LayoutChunk& block,
                                     uint64_t attention_values) {
  LayoutWriter w(h5::File::create(path, /*compact_metadata=*/true), params);
  w.create_datasets(-1, false, &block, attention_values);
  return w;
}

void LayoutWriter::create_datasets(int64_t attention_values, bool external_attention, const LayoutChunk* fit_to,
                                   uint64_t fit_attention) {
  auto& f = file_;
  const LayoutParams& params = params_;
  // HDF5 allocates whole chunks: a block part's are cut to its own rows.
  auto fit = [&](std::size_t chunk, std::size_t rows) { return fit_to ? std::clamp<std::size_t>(rows, 1, chunk) : chunk; };
  const LayoutChunk none;
  const LayoutChunk& rows = fit_to ? *fit_to : none;
  for_each_column(rows, [&](const char* name, const auto& column, std::size_t chunk) {
    f.create_dataset(name, column_type<typename std::decay_t<decltype(column)>::value_type>(), fit(chunk, column.size()));
  });
  const std::size_t examples = rows.examples.size(), tokens = rows.tokens.size();
  if (attention_values >= 0 && params.compression == Compression::None)
    f.create_fixed_dataset("attention/values", attention_type(params.dtype), static_cast<std::size_t>(attention_values),
                           external_attention);
  else
    f.create_dataset("attention/values", attention_type(params.dtype), fit(kAttentionChunk, fit_attention), params.compression);
  describe_attention();
  std::vector<std::string> keys;
  for (const auto& so : params.scores) {
    const std::vector<uint64_t> lh = {static_cast<uint64_t>(params.model_layers), static_cast<uint64_t>(params.model_heads)};
    f.create_rows_dataset(score_values(so.key()), lh, fit(256, examples));
    f.create_rows_dataset(score_baseline(so.key()), {static_cast<uint64_t>(params.model_layers)}, fit(1024, examples));
    f.set_attr("/scores/" + so.detector, "name", so.detector);
    f.set_attr("/scores/" + so.detector, "version", so.version);
    f.set_attr("/scores/" + so.detector, "description", so.description);
    f.set_attr("/scores/" + so.detector, "parameters", so.parameters);
    f.set_attr("/scores/" + so.detector, "plugin", so.plugin.empty() ? so.detector : so.plugin);
    f.set_attr("/scores/" + so.detector, "map", so.map);
    keys.push_back(so.key());
  }
  if (!keys.empty()) f.set_attr("/scores", "outputs", keys);
  const std::vector<uint64_t> lh = {static_cast<uint64_t>(params.model_layers), static_cast<uint64_t>(params.model_heads)};
  if (params.value_norms) {
    f.create_rows_dataset(kValueNorms, lh, fit(4096, tokens));
    f.set_attr(std::string("/") + kValueNorms, "layout", std::string("[token][layer][head]: ||f_h(x_j)|| (Kobayashi et al. 2020), rows as tokens/*"));
  }
  for (const auto& name : params.layer_maps) {
    const LayerMapDataset& m = *find_layer_map(name);
    const auto held = rows.layer_maps.find(name);
    f.create_rows_dataset(m.dataset, {}, fit(kAttentionChunk, held == rows.layer_maps.end() ? 0 : held->second.size()));
    f.set_attr(std::string("/") + m.dataset, "layout",
               std::string(m.what) + ", example i: values[o:o + L*n*n].reshape(L, n, n) ([layer][receiving token][token]), "
               "o = L * sum(n_tokens[:i]**2) (every example)");
  }
  if (params.trees) {
    f.create_dataset(kDepHead, H5T_STD_I32LE, fit(kTokenChunk, tokens));
    f.create_dataset(kDepRelation, h5::utf8_string_type(), fit(kTokenChunk, tokens));
    f.set_attr(std::string("/") + kDepHead, "layout",
               std::string("rows as tokens/*: word_index of the head of the token's word in its sentence; -1 root, -2 template specials"));
    f.set_attr(std::string("/") + kDepRelation, "layout",
               std::string("rows as tokens/*: dependency relation (DEPREL as written) of the token's word; empty for template specials"));
  }
}

LayoutWriter LayoutWriter::with_virtual_attention(const std::filesystem::path& path, const LayoutParams& params) {
  LayoutWriter w(path, params);
  w.file_.remove("attention/values");  // made by finish_virtual_attention(), once every piece is known
  w.virtual_attention_ = true;
  return w;
}

void LayoutWriter::finish_virtual_attention() {
  auto& f = file_;
  const std::filesystem::path folder = std::filesystem::absolute(f.path()).parent_path().lexically_normal();
  std::vector<std::string> files;  // relative to this file's folder, so the folder can move
  std::vector<std::string> identities;  // of each file as merged, checked by every reader that opens it
  std::vector<uint64_t> begin, count, file_index, source_begin;
  std::vector<h5::File::VirtualPiece> mapping;
  uint64_t at = 0;
  for (const auto& p : pieces_) {
    const std::string relative = std::filesystem::absolute(p.file).lexically_normal().lexically_proximate(folder).string();
    auto it = std::find(files.begin(), files.end(), relative);
    if (it == files.end()) {
      it = files.insert(files.end(), relative);
      identities.push_back(source_identity(h5::File::open_read(p.file)));
    }
    begin.push_back(at);
    count.push_back(p.count);
    file_index.push_back(static_cast<uint64_t>(it - files.begin()));
    source_begin.push_back(p.begin);
    mapping.push_back({at, p.count, p.begin, relative, "attention/values"});
    at += p.count;
  }
  f.create_virtual_dataset("attention/values", attention_type(params_.dtype), static_cast<std::size_t>(at), mapping);
  f.create_dataset(kAttentionSourceBegin, H5T_STD_U64LE, 4096);
  f.create_dataset(kAttentionSourceCount, H5T_STD_U64LE, 4096);
  f.create_dataset(kAttentionSourceFile, H5T_STD_U64LE, 4096);
  f.create_dataset(kAttentionSourceOffset, H5T_STD_U64LE, 4096);
  f.append(kAttentionSourceBegin, begin);
  f.append(kAttentionSourceCount, count);
  f.append(kAttentionSourceFile, file_index);
  f.append(kAttentionSourceOffset, source_begin);
  f.set_attr("/attention", "source_files", files);
  f.set_attr("/attention", kSourceIdentitiesAttr, identities);
  f.set_attr("/attention", "sources",
             std::string("attention/values is virtual: values [source_begin[k], + source_count[k]) are values "
                         "[source_offset[k], ...) of attention/values in source_files[source_file[k]] (relative to this "
                         "file's folder), checked against that file's own checksums; each source file is refused unless it still matches "
                         "its line in source_identities (shard, model, dataset, configuration, numerics, attention)"));
  describe_attention();
}

void LayoutWriter::describe_attention() {
  auto& f = file_;
  const auto& params = params_;
  f.set_attr("/attention", "layers", params.layers);
  f.set_attr("/attention", "heads", params.heads);
  f.set_attr("/attention", "model_layers", params.model_layers);
  f.set_attr("/attention", "model_heads", params.model_heads);
  f.set_attr("/attention", "dtype", std::string(dtype_name(params.dtype)));
  f.set_attr("/attention", "compression", std::string(compression_name(params.compression)));
  f.set_attr("/attention", "layout", std::string("values[o:o + L*H*n*n].reshape(L, H, n, n): [layer][head][query][key]"));
  if (!params.key_ranges.empty()) {
    f.set_attr("/attention", "key_ranges", params.key_ranges);
    f.set_attr("/attention", "key_ranges_layout",
               std::string("key_ranges.reshape(len(layers), 2): stored layer l's query i sees keys i - before .. i + after "
                           "(-1: unbounded; causal: before -1, after 0); its attention outside them is a structural 0"));
  }
  if (params.dtype == AttentionDType::U8) {  // CF conventions: xarray decodes value * scale_factor
    f.set_attr("/attention/values", "scale_factor", 1.0 / 255.0);
    f.set_attr("/attention/values", "add_offset", 0.0);
  }
}

void LayoutWriter::append_attention(const uint8_t* bytes, uint64_t values) {
  if (checksum_appends_) appended_attention_.add(attention_, bytes, values, attention_value_size(params_.dtype));
  file_.append_raw("attention/values", bytes, values);
  attention_ += values;
}

void LayoutWriter::append(const LayoutChunk& c) {
  auto& f = file_;
  const auto& e = c.examples;
  std::vector<int64_t> token_offset(e.token_offset);  // made absolute in this file
  for (auto& o : token_offset) o += static_cast<int64_t>(tokens_);
  std::vector<int64_t> attention_offset(e.attention_offset);
  for (auto& o : attention_offset)
    if (o >= 0) o += static_cast<int64_t>(attention_);
  for_each_column(c, [&](const char* name, const auto& column, std::size_t) {
    if (std::string_view(name) == "examples/token_offset") f.append(name, token_offset);
    else if (std::string_view(name) == "examples/attention_offset") f.append(name, attention_offset);
    else append_column(f, name, column);
  });
  const std::size_t vs = attention_value_size(params_.dtype);
  if (virtual_attention_) {
    if (!c.attention.empty()) throw Error(f.path().string() + ": internal: attention bytes for a virtual attention dataset");
    const auto& p = c.attention_elsewhere;
    if (!pieces_.empty() && pieces_.back().file == p.file && pieces_.back().begin + pieces_.back().count == p.begin)
      pieces_.back().count += p.count;  // the next values of the same source: one mapping
    else if (p.count > 0)
      pieces_.push_back(p);
    attention_ += p.count;
  } else {
    append_attention(c.attention.data(), c.attention.size() / vs);
  }
  for (const auto& so : params_.scores) {
    auto it = c.scores.find(so.key());
    if (e.size() == 0) continue;
    if (it == c.scores.end() || it->second.baseline.size() != e.size() * static_cast<std::size_t>(params_.model_layers))
      throw Error(f.path().string() + ": internal: scores of " + so.key() + " missing for a chunk");
    f.append_rows(score_values(so.key()), it->second.values.data(), e.size());
    f.append_rows(score_baseline(so.key()), it->second.baseline.data(), e.size());
  }
  if (params_.value_norms) f.append_rows(kValueNorms, c.value_norms.data(), c.tokens.size());
  std::size_t map_values = 0;  // every layer map holds [L][n][n] per example
  for (auto n : e.n_tokens) map_values += static_cast<std::size_t>(params_.model_layers * n * n);
  for (const auto& name : params_.layer_maps) {
    auto it = c.layer_maps.find(name);
    if (map_values > 0 && (it == c.layer_maps.end() || it->second.size() != map_values))
      throw Error(f.path().string() + ": internal: " + find_layer_map(name)->dataset + " does not match the chunk's examples");
    if (map_values > 0) f.append_rows(find_layer_map(name)->dataset, it->second.data(), map_values);
  }
  if (params_.trees) {
    if (c.dep_head.size() != c.tokens.size() || c.dep_relation.size() != c.tokens.size())
      throw Error(f.path().string() + ": internal: " + kDepHead + "/" + kDepRelation + " rows do not match the chunk's tokens");
    f.append(kDepHead, c.dep_head);
    f.append_strings(kDepRelation, c.dep_relation);
  }
  tokens_ += c.tokens.size();
}

LayoutReader::LayoutReader(const std::filesystem::path& path) : file_(h5::File::open_read(path)) {
  auto& f = file_;
  if (!f.has_attr("/", "format") || f.attr_string("/", "format") != kFormatName)
    throw Error(path.string() + ": not an attnscan file (root attribute format is not 'attnscan')");
  format_version_ = f.attr_int("/", "format_version");
  if (format_version_ < kOldestFormatVersion || format_version_ > kFormatVersion)
    throw Error(path.string() + ": format_version " + std::to_string(format_version_) + ", this attnscan reads versions " +
                std::to_string(kOldestFormatVersion) + " to " + std::to_string(kFormatVersion));
  params_.layers = f.attr_ints("/attention", "layers");
  params_.heads = f.attr_ints("/attention", "heads");
  params_.model_layers = f.attr_int("/attention", "model_layers");
  params_.model_heads = f.attr_int("/attention", "model_heads");
  if (f.has_attr("/attention", "key_ranges")) params_.key_ranges = f.attr_ints("/attention", "key_ranges");
  params_.dtype = parse_dtype(path, f.attr_string("/attention", "dtype"));
  params_.compression = parse_compression(path, f.attr_string("/attention", "compression"));
  if (f.has_attr("/scores", "outputs")) {
    for (const std::string& key : f.attr_strings("/scores", "outputs")) {
      const std::string detector = key.substr(0, key.find('/')), group = "/scores/" + detector;
      const std::string plugin = f.has_attr(group, "plugin") ? f.attr_string(group, "plugin") : detector;
      params_.scores.push_back({detector, key.substr(detector.size() + 1), f.attr_string(group, "version"),
                                f.attr_string(group, "description"), f.attr_string(group, "parameters"),
                                plugin == detector ? "" : plugin,
                                f.has_attr(group, "map") ? f.attr_string(group, "map") : "weights"});
    }
  }
  params_.value_norms = f.exists(kValueNorms);
  for (const auto& m : kLayerMaps)
    if (f.exists(m.dataset)) params_.layer_maps.push_back(m.name);
  params_.trees = f.exists(kDepHead);
  n_examples_ = f.length("examples/index");
  n_rejects_ = f.length("rejects/index");
  external_ = f.has_attr("/", kExternalAttentionAttr) && f.attr_int("/", kExternalAttentionAttr) == 1;
  checks_ = std::make_unique<AttentionChecks>(f);
}

void LayoutReader::attention_raw(uint64_t begin, uint64_t end, void* out) const {
  if (external_) throw Error(file_.path().string() + ": internal: the attention of this block part is in OUT.h5.tmp");
  checks_->read(file_, begin, end, out);
}

std::vector<float> LayoutReader::attention_floats(uint64_t begin, uint64_t end) const {
  std::vector<float> out(end > begin ? static_cast<std::size_t>(end - begin) : 0);
  if (out.empty()) return out;
  attention_raw(begin, end, out.data());
  if (params_.dtype == AttentionDType::F16) {  // in place, from the back: each float is wider than its half
    const auto* half = reinterpret_cast<const uint16_t*>(out.data());
    for (std::size_t i = out.size(); i-- > 0;) {
      uint16_t h;
      std::memcpy(&h, half + i, sizeof h);  // little-endian in the file, as on every host attnscan builds for
      out[i] = half_to_float(h);
    }
  } else if (params_.dtype != AttentionDType::F32) {
    file_.raw_to_floats("attention/values", out.data(), out.size());
  }
  return out;
}

uint64_t LayoutReader::layer_map_start(std::size_t example) const {
  if (layer_map_starts_.empty()) {  // L * cumulative n^2 over every example, read once
    const auto n = file_.read<int64_t>("examples/n_tokens", 0, n_examples_);  // converted from older files' uint32
    layer_map_starts_.assign(n.size() + 1, 0);
    for (std::size_t i = 0; i < n.size(); ++i)
      layer_map_starts_[i + 1] = layer_map_starts_[i] + static_cast<uint64_t>(params_.model_layers * n[i] * n[i]);
  }
  return layer_map_starts_.at(example);
}

uint64_t LayoutReader::attention_count(int64_t n) const {
  const auto u = static_cast<uint64_t>(n);
  return static_cast<uint64_t>(params_.layers.size() * params_.heads.size()) * u * u;
}

LayoutChunk LayoutReader::read(std::size_t a, std::size_t b, std::size_t c, std::size_t d, bool without_attention) const {
  const auto& f = file_;
  LayoutChunk out;
  auto& e = out.examples;
  int64_t t0 = 0, t1 = 0;  // the token range, known once the example columns are read
  for_each_column(out, [&](const char* name, auto& column, std::size_t) {
    if (starts_with(name, "examples/")) return read_column(f, name, a, b, column);
    if (starts_with(name, "rejects/")) return read_column(f, name, c, d, column);
    if (t1 == 0 && b > a) t0 = e.token_offset.front(), t1 = e.token_offset.back() + e.n_tokens.back();
    if (format_version_ < kFirstCharOffsetsVersion && is_char_offset_column(name)) {
      if constexpr (std::is_same_v<typename std::decay_t<decltype(column)>::value_type, int64_t>)
        column.assign(static_cast<std::size_t>(t1 - t0), -1);  // written before offsets were stored
      return;
    }
    read_column(f, name, static_cast<std::size_t>(t0), static_cast<std::size_t>(t1), column);
  });
  for (auto& o : e.token_offset) o -= t0;
  const bool external = external_;
  if (b > a) {
    int64_t v0 = -1, v1 = -1;
    for (std::size_t i = 0; i < e.size(); ++i) {
      if (e.attention_offset[i] < 0) continue;
      if (v0 < 0) v0 = e.attention_offset[i];
      v1 = e.attention_offset[i] + static_cast<int64_t>(attention_count(e.n_tokens[i]));
    }
    if (v0 >= 0 && !external) {
      for (auto& o : e.attention_offset)
        if (o >= 0) o -= v0;
      if (without_attention) {
        out.attention_elsewhere = {file_.path().string(), static_cast<uint64_t>(v0), static_cast<uint64_t>(v1 - v0)};
      } else {
        out.attention.resize(static_cast<std::size_t>(v1 - v0) * attention_value_size(params_.dtype));
        attention_raw(static_cast<uint64_t>(v0), static_cast<uint64_t>(v1), out.attention.data());
      }
    }
  }
  for (const auto& so : params_.scores)
    out.scores[so.key()] = {f.read_rows(score_values(so.key()), a, b),
                            read_baseline_rows(f, so.key(), a, b, static_cast<std::size_t>(params_.model_layers))};
  if (params_.value_norms) out.value_norms = f.read_rows(kValueNorms, t0, t1);
  if (params_.trees) {
    out.dep_head = f.read<int32_t>(kDepHead, static_cast<std::size_t>(t0), static_cast<std::size_t>(t1));
    out.dep_relation = f.read_strings(kDepRelation, static_cast<std::size_t>(t0), static_cast<std::size_t>(t1));
  }
  if (!params_.layer_maps.empty() && b > a) {
    const uint64_t r0 = layer_map_start(a);
    uint64_t r1 = r0;
    for (auto n : e.n_tokens) r1 += static_cast<uint64_t>(params_.model_layers * n * n);
    for (const auto& name : params_.layer_maps)
      out.layer_maps[name] = f.read_rows(find_layer_map(name)->dataset, static_cast<std::size_t>(r0), static_cast<std::size_t>(r1));
  }
  return out;
}

}  // namespace attnscan
