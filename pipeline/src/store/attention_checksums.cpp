#include "store/attention_checksums.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "store/crc32c.hpp"

namespace attnscan {

namespace {

constexpr const char* kValues = "attention/values";
constexpr uint64_t kSpansPerRead = 64;  // 8 MiB of float16 per read while computing or checking all

std::string range_text(uint64_t a, uint64_t b) { return std::to_string(a) + ".." + std::to_string(b); }

}  // namespace

void write_attention_checksums(h5::File& f) {
  if (f.exists(kAttentionChecksums)) f.remove(kAttentionChecksums);
  const uint64_t values = f.length(kValues);
  const std::size_t vs = f.value_size(kValues);
  std::vector<uint32_t> crc;
  crc.reserve(static_cast<std::size_t>((values + kChecksumSpan - 1) / kChecksumSpan));
  std::vector<uint8_t> buf;
  for (uint64_t at = 0; at < values;) {
    const uint64_t n = std::min(values - at, kChecksumSpan * kSpansPerRead);
    buf.resize(static_cast<std::size_t>(n) * vs);
    f.read_raw(kValues, at, at + n, buf.data());
    for (uint64_t s = 0; s < n; s += kChecksumSpan)
      crc.push_back(crc32c(buf.data() + s * vs, static_cast<std::size_t>(std::min(kChecksumSpan, n - s)) * vs));
    at += n;
  }
  f.create_dataset(kAttentionChecksums, H5T_STD_U32LE, 4096);
  f.append(kAttentionChecksums, crc);
  f.set_attr("/" + std::string(kAttentionChecksums), "span_values", static_cast<int64_t>(kChecksumSpan));
  f.set_attr("/" + std::string(kAttentionChecksums), "algorithm",
             std::string("crc32c of the little-endian bytes of each span of span_values values"));
}

AttentionChecks::AttentionChecks(const h5::File& f) {
  if (!f.exists(kValues)) return;
  values_ = f.length(kValues);
  value_size_ = f.value_size(kValues);
  if (!f.exists(kAttentionChecksums)) return;
  present_ = true;
  span_ = static_cast<uint64_t>(f.attr_int("/" + std::string(kAttentionChecksums), "span_values"));
  crc_ = f.read<uint32_t>(kAttentionChecksums, 0, f.length(kAttentionChecksums));
  if (span_ == 0 || crc_.size() != (values_ + span_ - 1) / span_)
    throw Error(f.path().string() + " is damaged: dataset " + kAttentionChecksums + " holds " +
                std::to_string(crc_.size()) + " checksums for " + std::to_string(values_) + " attention values");
}

bool AttentionChecks::span_ok(std::size_t span, const uint8_t* bytes, uint64_t count) const {
  return crc32c(bytes, static_cast<std::size_t>(count) * value_size_) == crc_[span];
}

void AttentionChecks::read(const h5::File& f, uint64_t begin, uint64_t end, void* out) const {
  if (end <= begin) return;
  if (!present_) return f.read_raw(kValues, begin, end, out);
  if (end > values_)
    throw Error(f.path().string() + " is damaged: attention values " + range_text(begin, end) + " asked for, " +
                kValues + " holds " + std::to_string(values_));
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (begin < cache_begin_ || end > cache_end_) {
    const uint64_t a = begin / span_ * span_, b = std::min(values_, (end + span_ - 1) / span_ * span_);
    cache_end_ = cache_begin_ = 0;  // invalid until verified
    cache_.resize(static_cast<std::size_t>(b - a) * value_size_);
    f.read_raw(kValues, a, b, cache_.data());
    for (uint64_t s = a; s < b; s += span_) {
      const uint64_t n = std::min(span_, b - s);
      if (!span_ok(static_cast<std::size_t>(s / span_), cache_.data() + (s - a) * value_size_, n))
        throw Error(f.path().string() + " is damaged: dataset " + kValues + ", values " + range_text(s, s + n) +
                    " (checksum mismatch). Run `attnscan verify " + f.path().string() +
                    "` for a full check; restore the file or rerun the run that wrote it");
    }
    cache_begin_ = a;
    cache_end_ = b;
  }
  std::memcpy(out, cache_.data() + (begin - cache_begin_) * value_size_, static_cast<std::size_t>(end - begin) * value_size_);
}

std::vector<std::pair<uint64_t, uint64_t>> AttentionChecks::bad_spans(const h5::File& f) const {
  std::vector<std::pair<uint64_t, uint64_t>> bad;
  if (!present_) return bad;
  std::vector<uint8_t> buf;
  for (uint64_t at = 0; at < values_;) {
    const uint64_t n = std::min(values_ - at, span_ * kSpansPerRead);
    buf.resize(static_cast<std::size_t>(n) * value_size_);
    bool readable = true;
    try {
      f.read_raw(kValues, at, at + n, buf.data());
    } catch (const Error&) {
      readable = false;
    }
    for (uint64_t s = 0; s < n; s += span_) {
      const uint64_t m = std::min(span_, n - s);
      if (!readable || !span_ok(static_cast<std::size_t>((at + s) / span_), buf.data() + s * value_size_, m)) {
        if (!bad.empty() && bad.back().second == at + s) bad.back().second = at + s + m;
        else bad.emplace_back(at + s, at + s + m);
      }
    }
    at += n;
  }
  return bad;
}

}  // namespace attnscan
