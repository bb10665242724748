#include "store/attention_checksums.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "store/crc32c.hpp"
#include "store/source_identity.hpp"

namespace attnscan {

namespace {

constexpr const char* kValues = "attention/values";
constexpr uint64_t kSpansPerRead = 64;  // 8 MiB of float16 per read while computing or checking all

std::string range_text(uint64_t a, uint64_t b) { return std::to_string(a) + ".." + std::to_string(b); }

}  // namespace

std::vector<SpanChecksums::Cut> SpanChecksums::cut(uint64_t first, const void* bytes, uint64_t count,
                                                   std::size_t value_size) {
  const auto* p = static_cast<const uint8_t*>(bytes);
  std::vector<Cut> cuts;
  for (uint64_t at = first, end = first + count; at < end;) {
    const uint64_t n = std::min(end, (at / kChecksumSpan + 1) * kChecksumSpan) - at;
    cuts.push_back({at, n, crc32c(p + (at - first) * value_size, static_cast<std::size_t>(n) * value_size)});
    at += n;
  }
  return cuts;
}

// New values for part of a span end what a whole one had given it, and a whole span ends its parts.
void SpanChecksums::put(const std::vector<Cut>& cuts) {
  for (const Cut& c : cuts) {
    const std::size_t s = static_cast<std::size_t>(c.first / kChecksumSpan);
    if (whole_.size() <= s) {
      whole_.resize(s + 1);
      have_whole_.resize(s + 1);
    }
    if (c.count == kChecksumSpan) {
      whole_[s] = c.crc;
      have_whole_[s] = true;
      pieces_.erase(pieces_.lower_bound(c.first), pieces_.lower_bound(c.first + kChecksumSpan));
    } else {
      pieces_[c.first] = {c.count, c.crc};
      have_whole_[s] = false;
    }
  }
}

uint32_t SpanChecksums::add(uint64_t first, const void* bytes, uint64_t count, std::size_t value_size) {
  const std::vector<Cut> cuts = cut(first, bytes, count, value_size);
  put(cuts);
  uint32_t all = 0;
  for (const Cut& c : cuts) all = crc32c_combine(all, c.crc, c.count * value_size);
  return all;
}

bool SpanChecksums::range(uint64_t first, uint64_t count, std::size_t value_size, uint32_t& crc) const {
  crc = 0;
  uint64_t at = first;
  const uint64_t end = first + count;
  while (at < end) {
    const std::size_t s = static_cast<std::size_t>(at / kChecksumSpan);
    uint64_t n = 0;
    uint32_t piece = 0;
    if (at % kChecksumSpan == 0 && end - at >= kChecksumSpan && s < whole_.size() && have_whole_[s]) {
      n = kChecksumSpan, piece = whole_[s];
    } else if (auto it = pieces_.find(at); it != pieces_.end()) {
      n = it->second.count, piece = it->second.crc;
    } else {
      return false;
    }
    crc = crc32c_combine(crc, piece, n * value_size);
    at += n;
  }
  return at == end;
}

bool SpanChecksums::span(uint64_t span, uint64_t values, std::size_t value_size, uint32_t& crc) const {
  const uint64_t a = span * kChecksumSpan, b = std::min(values, a + kChecksumSpan);
  if (b - a == kChecksumSpan && span < whole_.size() && have_whole_[span]) {
    crc = whole_[span];
    return true;
  }
  crc = 0;
  uint64_t at = a;  // pieces that tile [a, b) one after another
  for (auto it = pieces_.find(a); it != pieces_.end() && it->first == at && at < b; ++it) {
    crc = crc32c_combine(crc, it->second.crc, it->second.count * value_size);
    at += it->second.count;
  }
  return at == b;
}

void write_attention_checksums(h5::File& f, const SpanChecksums& known) {
  if (f.exists(kAttentionChecksums)) f.remove(kAttentionChecksums);
  const uint64_t values = f.length(kValues);
  const std::size_t vs = f.value_size(kValues);
  std::vector<uint32_t> crc(static_cast<std::size_t>((values + kChecksumSpan - 1) / kChecksumSpan));
  std::vector<uint8_t> buf;
  for (std::size_t s = 0; s < crc.size();) {
    if (known.span(s, values, vs, crc[s])) {
      ++s;
      continue;
    }
    std::size_t e = s + 1;  // the spans not known from here on, read together
    for (uint32_t unused = 0; e < crc.size() && e - s < kSpansPerRead && !known.span(e, values, vs, unused);) ++e;
    const uint64_t at = s * kChecksumSpan, n = std::min(values, e * kChecksumSpan) - at;
    buf.resize(static_cast<std::size_t>(n) * vs);
    f.read_raw(kValues, at, at + n, buf.data());
    for (; s < e; ++s) {
      const uint64_t a = s * kChecksumSpan - at, m = std::min(kChecksumSpan, n - a);
      crc[s] = crc32c(buf.data() + a * vs, static_cast<std::size_t>(m) * vs);
    }
  }
  f.create_dataset(kAttentionChecksums, H5T_STD_U32LE, 4096);
  f.append(kAttentionChecksums, crc);
  f.set_attr("/" + std::string(kAttentionChecksums), "span_values", static_cast<int64_t>(kChecksumSpan));
  f.set_attr("/" + std::string(kAttentionChecksums), "algorithm",
             std::string("crc32c of the little-endian bytes of each span of span_values values"));
}

struct AttentionChecks::Source {
  h5::File file;
  AttentionChecks checks;
  explicit Source(const std::filesystem::path& path) : file(h5::File::open_read(path)), checks(file) {}
};

AttentionChecks::~AttentionChecks() = default;

AttentionChecks::AttentionChecks(const h5::File& f) {
  if (!f.exists(kValues)) return;
  values_ = f.length(kValues);
  value_size_ = f.value_size(kValues);
  if (f.exists(kAttentionSourceCount)) {  // virtual: checked piece by piece against the sources' own checksums
    present_ = true;
    files_ = f.attr_strings("/attention", "source_files");
    merged_ = f.path();
    if (f.has_attr("/attention", kSourceIdentitiesAttr)) {  // merges that recorded them: every one since they exist
      identities_ = f.attr_strings("/attention", kSourceIdentitiesAttr);
      if (identities_.size() != files_.size())
        throw Error(f.path().string() + " is damaged: /attention holds " + std::to_string(identities_.size()) + " " +
                    kSourceIdentitiesAttr + " for " + std::to_string(files_.size()) + " source_files");
    }
    const std::size_t n = f.length(kAttentionSourceCount);
    const auto begin = f.read<uint64_t>(kAttentionSourceBegin, 0, n), count = f.read<uint64_t>(kAttentionSourceCount, 0, n),
               file = f.read<uint64_t>(kAttentionSourceFile, 0, n), offset = f.read<uint64_t>(kAttentionSourceOffset, 0, n);
    virtual_ = true;
    uint64_t at = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (begin[k] != at || file[k] >= files_.size())
        throw Error(f.path().string() + " is damaged: the table attention/source_* (row " + std::to_string(k) +
                    ") does not map attention/values piece after piece onto the source_files");
      pieces_.push_back({begin[k], count[k], file[k], offset[k]});
      at += count[k];
    }
    if (at != values_)
      throw Error(f.path().string() + " is damaged: attention/source_count maps " + std::to_string(at) + " values, attention/values holds " +
                  std::to_string(values_));
    sources_.resize(files_.size());
    return;
  }
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

std::vector<std::string> AttentionChecks::source_files() const {
  std::vector<std::string> out;
  for (const auto& name : files_) out.push_back((merged_.parent_path() / name).string());
  return out;
}

std::string AttentionChecks::why_bad(uint64_t a, uint64_t b) const {
  if (!virtual_ || pieces_.empty()) return " (checksum mismatch)";
  auto p = std::upper_bound(pieces_.begin(), pieces_.end(), a, [](uint64_t v, const Piece& q) { return v < q.begin; });
  if (p != pieces_.begin()) --p;
  const std::filesystem::path path = merged_.parent_path() / files_[static_cast<std::size_t>(p->file)];
  if (!std::filesystem::exists(path)) return " (" + path.string() + " is missing)";
  try {
    source(static_cast<std::size_t>(p->file));
  } catch (const Error& e) {
    return " (" + std::string(e.what()) + ")";
  }
  const uint64_t x = p->source_begin + (a - p->begin), y = x + (std::min(b, p->begin + p->count) - a);
  return " = " + path.string() + " values " + range_text(x, y) + " (checksum mismatch)";
}

const AttentionChecks::Source& AttentionChecks::source(std::size_t file) const {
  std::lock_guard<std::mutex> lock(sources_mutex_);
  if (!sources_[file]) {
    const std::filesystem::path path = merged_.parent_path() / files_[file];
    if (!std::filesystem::exists(path))
      throw Error("attention values are in " + path.string() + ", which is missing (a virtual merge reads its shards " +
                  "where they were, relative to the merged file: move them together)");
    const std::string again = "merge again from the shards as they are now (`attnscan merge --virtual`, or a plain "
                              "`attnscan merge` to copy the attention into " + merged_.string() + ")";
    std::unique_ptr<Source> opened;
    std::string now;
    try {
      opened = std::make_unique<Source>(path);
      if (!identities_.empty()) now = source_identity(opened->file);
    } catch (const Error& e) {
      throw Error("attention values are in " + path.string() + ", which cannot be read: " + e.what() +
                  ". Restore it, or rerun that shard and " + again);
    }
    if (!identities_.empty()) {
      const std::string diff = source_identity_difference(identities_[file], now);
      if (!diff.empty())
        throw Error("attention values are in " + path.string() + ", which is not the shard merged into " + merged_.string() +
                    ": " + diff + ". It was rerun, replaced or changed after the merge: " + again);
    }
    sources_[file] = std::move(opened);
  }
  return *sources_[file];
}

void AttentionChecks::read_virtual(uint64_t begin, uint64_t end, void* out) const {
  auto p = std::upper_bound(pieces_.begin(), pieces_.end(), begin, [](uint64_t v, const Piece& q) { return v < q.begin; });
  if (p != pieces_.begin()) --p;
  for (; p != pieces_.end() && p->begin < end; ++p) {
    const uint64_t a = std::max(begin, p->begin), b = std::min(end, p->begin + p->count);
    if (a >= b) continue;
    const Source& s = source(static_cast<std::size_t>(p->file));
    s.checks.read(s.file, p->source_begin + (a - p->begin), p->source_begin + (b - p->begin),
                  static_cast<uint8_t*>(out) + (a - begin) * value_size_);
  }
}

void AttentionChecks::read(const h5::File& f, uint64_t begin, uint64_t end, void* out) const {
  if (end <= begin) return;
  if (virtual_) {
    if (end > values_)
      throw Error(f.path().string() + " is damaged: attention values " + range_text(begin, end) + " asked for, " + kValues +
                  " holds " + std::to_string(values_));
    return read_virtual(begin, end, out);
  }
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

std::vector<std::pair<uint64_t, uint64_t>> AttentionChecks::bad_virtual_spans() const {
  std::vector<std::pair<uint64_t, uint64_t>> bad;
  for (std::size_t file = 0; file < files_.size(); ++file) {
    std::vector<std::pair<uint64_t, uint64_t>> in_source;  // source value ranges
    bool whole = false;
    try {
      const Source& s = source(file);
      if (s.checks.present()) {
        in_source = s.checks.bad_spans(s.file);
      } else {  // no checksums of its own (chunked, under Fletcher32): every piece read through HDF5's
        std::vector<uint8_t> buf;
        for (const auto& p : pieces_)
          for (uint64_t at = p.source_begin; p.file == file && at < p.source_begin + p.count;) {
            const uint64_t n = std::min(p.source_begin + p.count - at, kChecksumSpan * kSpansPerRead);
            buf.resize(static_cast<std::size_t>(n) * value_size_);
            try {
              s.checks.read(s.file, at, at + n, buf.data());
            } catch (const Error&) {
              in_source.emplace_back(at, at + n);
            }
            at += n;
          }
      }
    } catch (const Error&) {
      whole = true;  // missing or unreadable: every value it holds
    }
    for (const auto& p : pieces_) {
      if (p.file != file) continue;
      if (whole) bad.emplace_back(p.begin, p.begin + p.count);
      for (const auto& [a, b] : in_source) {
        const uint64_t lo = std::max(a, p.source_begin), hi = std::min(b, p.source_begin + p.count);
        if (lo < hi) bad.emplace_back(p.begin + (lo - p.source_begin), p.begin + (hi - p.source_begin));
      }
    }
  }
  std::sort(bad.begin(), bad.end());
  return bad;
}

std::vector<std::pair<uint64_t, uint64_t>> AttentionChecks::bad_spans(const h5::File& f) const {
  std::vector<std::pair<uint64_t, uint64_t>> bad;
  if (virtual_) return bad_virtual_spans();
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
