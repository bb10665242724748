#include "plugin_host/example_wire.hpp"

#include <cstring>
#include <string>

namespace attnscan::worker {

namespace {

// Writes (or, with data == nullptr, only measures) the batch's examples: ids, tokens, word
// annotations, attention.
class Encoder {
 public:
  explicit Encoder(uint8_t* data) : data_(data) {}
  template <typename T>
  void put(const T& v) {
    if (data_) std::memcpy(data_ + size_, &v, sizeof v);
    size_ += sizeof v;
  }
  void put_text(const std::string& s) {
    put(static_cast<uint32_t>(s.size()));
    if (data_) std::memcpy(data_ + size_, s.data(), s.size());
    size_ += s.size();
  }
  void put_floats(const float* v, std::size_t n) {
    size_ = align8(size_);
    if (data_) std::memcpy(data_ + size_, v, n * sizeof(float));
    size_ += n * sizeof(float);
  }
  // `blocks` n x n blocks, each the top left of a stride x stride one, as put_floats of them end to end.
  void put_blocks(const float* v, std::size_t blocks, std::size_t n, std::size_t stride) {
    size_ = align8(size_);
    if (data_)
      for (std::size_t b = 0; b < blocks; ++b)
        for (std::size_t r = 0; r < n; ++r)
          std::memcpy(data_ + size_ + (b * n + r) * n * sizeof(float), v + (b * stride + r) * stride, n * sizeof(float));
    size_ += blocks * n * n * sizeof(float);
  }
  std::size_t size() const { return size_; }

 private:
  uint8_t* data_;
  std::size_t size_ = 0;
};

void encode_into(Encoder& w, const std::vector<sdk::Example>& batch, const std::vector<MixingMaps>& mixing,
                 const std::vector<int64_t>& strides) {
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const sdk::Example& e = batch[k];
    w.put_text(e.id);
    w.put(e.layers);
    w.put(e.heads);
    w.put(static_cast<uint64_t>(e.key_ranges.size()));
    for (const sdk::KeyRange& r : e.key_ranges) w.put(r.before), w.put(r.after);
    w.put(static_cast<uint64_t>(e.tokens.size()));
    for (const auto& t : e.tokens) {
      w.put_text(t.text);
      w.put(t.id);
      w.put(t.role);
      w.put(t.sentence);
      w.put(t.type_id);
      w.put(t.word_index);
      w.put_text(t.word);
    }
    w.put(static_cast<uint64_t>(e.word_annotations.size()));
    for (const auto& sentence : e.word_annotations) {
      w.put(static_cast<uint64_t>(sentence.size()));
      for (const auto& a : sentence) {
        w.put(a.head);
        w.put_text(a.relation);
      }
    }
    const std::size_t n = e.size(), blocks = static_cast<std::size_t>(e.layers * e.heads);
    const std::size_t stride = k < strides.size() && strides[k] > 0 ? static_cast<std::size_t>(strides[k]) : n;
    if (stride == n) w.put_floats(e.attention, blocks * n * n);
    else w.put_blocks(e.attention, blocks, n, stride);
    w.put(static_cast<uint8_t>(e.value_norms != nullptr));
    if (e.value_norms) w.put_floats(e.value_norms, static_cast<std::size_t>(e.layers * e.heads) * n);
    const MixingMaps none, &m = k < mixing.size() ? mixing[k] : none;
    for (const float* map : {m.value_zeroing, m.alti, m.alti_rollout}) {
      w.put(static_cast<uint8_t>(map != nullptr));
      if (map) w.put_floats(map, static_cast<std::size_t>(e.layers) * n * n);
    }
  }
}

class Decoder {
 public:
  explicit Decoder(const uint8_t* data) : data_(data) {}
  template <typename T>
  T get() {
    T v;
    std::memcpy(&v, data_ + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string get_text() {
    const auto n = get<uint32_t>();
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  const float* get_floats(std::size_t n) {
    pos_ = align8(pos_);
    const float* p = reinterpret_cast<const float*>(data_ + pos_);
    pos_ += n * sizeof(float);
    return p;
  }

 private:
  const uint8_t* data_;
  std::size_t pos_ = 0;
};

}  // namespace

std::size_t encoded_size(const std::vector<sdk::Example>& batch, const std::vector<MixingMaps>& mixing) {
  Encoder measure(nullptr);
  encode_into(measure, batch, mixing, {});
  return measure.size();
}

void encode_batch(uint8_t* data, const std::vector<sdk::Example>& batch, const std::vector<MixingMaps>& mixing,
                  const std::vector<int64_t>& strides) {
  Encoder write(data);
  encode_into(write, batch, mixing, strides);
}

std::vector<DecodedExample> decode_batch(const uint8_t* data, std::size_t examples) {
  Decoder r(data);
  std::vector<DecodedExample> out(examples, DecodedExample{std::vector<sdk::Example>(1), std::vector<MixingMaps>(1)});
  for (auto& one : out) {
    sdk::Example& e = one.example[0];
    e.id = r.get_text();
    e.layers = r.get<int64_t>();
    e.heads = r.get<int64_t>();
    e.key_ranges.resize(r.get<uint64_t>());
    for (auto& range : e.key_ranges) range.before = r.get<int32_t>(), range.after = r.get<int32_t>();
    e.tokens.resize(r.get<uint64_t>());
    for (auto& t : e.tokens) {
      t.text = r.get_text();
      t.id = r.get<int32_t>();
      t.role = r.get<sdk::TokenRole>();
      t.sentence = r.get<uint8_t>();
      t.type_id = r.get<uint8_t>();
      t.word_index = r.get<int32_t>();
      t.word = r.get_text();
    }
    e.word_annotations.resize(r.get<uint64_t>());
    for (auto& sentence : e.word_annotations) {
      sentence.resize(r.get<uint64_t>());
      for (auto& a : sentence) {
        a.head = r.get<int32_t>();
        a.relation = r.get_text();
      }
    }
    const std::size_t n = e.size();
    e.attention = r.get_floats(static_cast<std::size_t>(e.layers * e.heads) * n * n);
    if (r.get<uint8_t>()) e.value_norms = r.get_floats(static_cast<std::size_t>(e.layers * e.heads) * n);
    MixingMaps& m = one.mixing[0];
    for (const float** map : {&m.value_zeroing, &m.alti, &m.alti_rollout})
      if (r.get<uint8_t>()) *map = r.get_floats(static_cast<std::size_t>(e.layers) * n * n);
  }
  return out;
}

std::size_t result_floats(const LoadedDetector& d, const sdk::Example& e) {
  return d.info.outputs.size() * static_cast<std::size_t>(e.layers * e.heads + e.layers);
}

}  // namespace attnscan::worker
