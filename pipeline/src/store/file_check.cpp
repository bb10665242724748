#include "store/file_check.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>

#include "common/error.hpp"
#include "store/attention_checksums.hpp"
#include "store/layout_file.hpp"
#include "store/output_file.hpp"

namespace attnscan {

namespace {

constexpr std::size_t kPiece = 1u << 16;  // rows read at a time
constexpr std::size_t kMaxListed = 10;    // problems of one kind listed before a count

// Collects problems of one kind: the first few in full, then how many more.
class Findings {
 public:
  Findings(CheckReport& report, std::string kind) : report_(report), kind_(std::move(kind)) {}
  ~Findings() {
    if (count_ > kMaxListed)
      report_.problems.push_back("... and " + std::to_string(count_ - kMaxListed) + " more " + kind_);
  }
  void add(const std::string& what) {
    if (count_++ < kMaxListed) report_.problems.push_back(what);
  }

 private:
  CheckReport& report_;
  std::string kind_;
  std::size_t count_ = 0;
};

template <typename T>
bool read_all(const h5::File& f, const std::string& name, std::vector<T>& out, CheckReport& report) {
  const std::size_t n = f.length(name);
  out.clear();
  out.reserve(n);
  for (std::size_t a = 0; a < n; a += kPiece) {
    try {
      std::vector<T> piece;
      if constexpr (std::is_same_v<T, std::string>) piece = f.read_strings(name, a, std::min(n, a + kPiece));
      else piece = f.read<T>(name, a, std::min(n, a + kPiece));
      out.insert(out.end(), piece.begin(), piece.end());
    } catch (const Error& e) {
      report.problems.push_back(e.what());
      return false;
    }
  }
  return true;
}

// Code points of UTF-8 text (what Python's len() gives for the str h5py decodes).
int64_t code_points(const std::string& utf8) {
  int64_t n = 0;
  for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;
  return n;
}

std::string range(uint64_t a, uint64_t b) { return std::to_string(a) + ".." + std::to_string(b); }

}  // namespace

RowSumRange row_sum_range(const std::string& dtype, uint64_t n) {
  // Each of the n stored values is off by at most half a step of its dtype: 0.5/255 for uint8; for
  // float16 2^-11 of itself (2^-11 of the row in all) plus 2^-25 where it is subnormal. Below that, the
  // float32 softmax's own rounding (2^-24 a value, and the float32 sum) and a fixed margin.
  const double dn = static_cast<double>(n), f32 = 1e-3 + dn * std::ldexp(1.0, -23);
  double width = f32;
  if (dtype == "uint8") width += dn * 0.5 / 255.0;
  if (dtype == "float16") width += 4e-3 + std::ldexp(1.0, -11) + dn * std::ldexp(1.0, -25);
  return {1 - width, 1 + width};
}

namespace {

// What every section of the check reads: the file, its parameters and the report it adds to.
struct Checked {
  const std::filesystem::path& path;
  const LayoutReader& reader;
  const h5::File& f;
  const LayoutParams& params;
  CheckReport& report;
  std::string where() const { return path.string(); }
};

// The per-example and per-token columns the later sections need, read through their checksums.
struct Columns {
  bool ok = true;  // every column read and of its table's length
  std::size_t token_rows = 0;
  std::vector<int64_t> n_tokens, token_offset, attention_offset, char_start, char_end;
  std::vector<std::string> sentence_a, sentence_b;
  std::vector<uint8_t> segment;
};

// A final file's root attributes agree with its examples (block parts carry none).
void check_root(const Checked& c) {
  if (c.f.has_attr("/", "block")) return;
  try {
    const RootInfo root = read_root(c.f);
    if (root.examples_written != c.report.examples)
      c.report.problems.push_back(c.where() + ": root attribute examples_written is " +
                                  std::to_string(root.examples_written) + ", examples/index holds " +
                                  std::to_string(c.report.examples));
  } catch (const Error& e) {
    c.report.problems.push_back(e.what());
  }
}

// Every column, read through its Fletcher32 checksums; the lengths within each table agree.
Columns read_columns(const Checked& c) {
  Columns cols;
  const bool char_offsets = c.report.format_version >= kFirstCharOffsetsVersion;
  LayoutChunk none;
  for_each_column(none, [&](const char* name, auto& column, std::size_t) {
    using T = typename std::decay_t<decltype(column)>::value_type;
    if (!char_offsets && is_char_offset_column(name)) return;  // older files have none
    std::vector<T> values;
    if constexpr (std::is_same_v<T, std::string>)
      if (c.report.text_checksums && !c.f.exists(h5::text_checksum_column(name)))
        c.report.problems.push_back(c.where() + ": dataset " + h5::text_checksum_column(name) + " (the checksums of " +
                                    name + ") is missing");
    if (!read_all(c.f, name, values, c.report)) return void(cols.ok = false);
    const std::string n(name);
    const std::size_t expect = n.rfind("examples/", 0) == 0 ? c.report.examples
                               : n.rfind("rejects/", 0) == 0 ? c.report.rejects
                               : cols.token_rows;
    if (n.rfind("tokens/", 0) == 0 && n == "tokens/id") cols.token_rows = values.size();
    else if (values.size() != expect) {
      c.report.problems.push_back(c.where() + ": dataset " + n + " holds " + std::to_string(values.size()) +
                                  " rows, its table " + std::to_string(expect));
      cols.ok = false;
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (n == "examples/sentence_a") cols.sentence_a = values;
      if (n == "examples/sentence_b") cols.sentence_b = values;
    }
    if constexpr (std::is_same_v<T, uint8_t>) {
      if (n == "tokens/segment") cols.segment = values;
    }
    if constexpr (std::is_same_v<T, int64_t>) {
      if (n == "tokens/char_start") cols.char_start = values;
      if (n == "tokens/char_end") cols.char_end = values;
      if (n == "examples/n_tokens") cols.n_tokens = values;
      if (n == "examples/token_offset") cols.token_offset = values;
      if (n == "examples/attention_offset") cols.attention_offset = values;
    }
  });
  return cols;
}

uint64_t values_per_token_pair(const LayoutParams& p) { return static_cast<uint64_t>(p.layers.size() * p.heads.size()); }

// Offsets: tokens back to back in example order; attention ranges in order, within the values.
void check_offsets(const Checked& c, const Columns& cols, const AttentionChecks& checks) {
  Findings bad(c.report, "offset problems");
  const uint64_t per_token2 = values_per_token_pair(c.params);
  const bool external = c.reader.external_attention();
  int64_t next_token = 0;
  uint64_t attention_end = 0;
  for (std::size_t i = 0; i < c.report.examples; ++i) {
    const std::string example = c.where() + ": example " + std::to_string(i);
    if (cols.n_tokens[i] < 0) {
      bad.add(example + ": examples/n_tokens is " + std::to_string(cols.n_tokens[i]));
      continue;
    }
    if (cols.token_offset[i] != next_token)
      bad.add(example + ": examples/token_offset is " + std::to_string(cols.token_offset[i]) + ", expected " +
              std::to_string(next_token));
    next_token = cols.token_offset[i] + cols.n_tokens[i];
    const int64_t o = cols.attention_offset[i];
    if (o < -1) bad.add(example + ": examples/attention_offset is " + std::to_string(o));
    if (o < 0) continue;
    ++c.report.stored_examples;
    const auto n = static_cast<uint64_t>(cols.n_tokens[i]);
    const uint64_t end = static_cast<uint64_t>(o) + per_token2 * n * n;
    if (static_cast<uint64_t>(o) < attention_end || (!external && end > checks.values()))
      bad.add(example + ": attention values " + range(static_cast<uint64_t>(o), end) +
              " overlap the previous example or lie beyond attention/values (" + std::to_string(checks.values()) + ")");
    attention_end = end;
  }
  if (next_token != static_cast<int64_t>(cols.token_rows))
    bad.add(c.where() + ": the examples' tokens end at " + std::to_string(next_token) + ", tokens/id holds " +
            std::to_string(cols.token_rows));
}

// Character offsets: -1/-1, or 0 <= start <= end <= the length (code points) of the token's sentence.
void check_char_offsets(const Checked& c, const Columns& cols) {
  Findings bad(c.report, "tokens with character offsets outside their sentence");
  for (std::size_t i = 0; i < c.report.examples; ++i) {
    const int64_t lengths[2] = {code_points(cols.sentence_a[i]), code_points(cols.sentence_b[i])};
    for (int64_t t = std::max<int64_t>(cols.token_offset[i], 0); t < cols.token_offset[i] + cols.n_tokens[i]; ++t) {
      const auto k = static_cast<std::size_t>(t);
      if (k >= cols.char_start.size()) break;  // reported by check_offsets
      const int64_t s = cols.char_start[k], e = cols.char_end[k], len = lengths[cols.segment[k] ? 1 : 0];
      if ((s == -1 && e == -1) || (s >= 0 && s <= e && e <= len)) continue;
      bad.add(c.where() + ": example " + std::to_string(i) + ", token " + std::to_string(t - cols.token_offset[i]) +
              ": tokens/char_start, char_end (" + std::to_string(s) + ", " + std::to_string(e) +
              ") outside its sentence (" + std::to_string(len) + " characters)");
    }
  }
}

// Attention: every checksum span (format_version 1: every value readable). True when nothing failed.
bool check_attention_bytes(const Checked& c, const AttentionChecks& checks) {
  const std::size_t problems_before = c.report.problems.size();
  if (c.reader.external_attention() || checks.values() == 0) return true;
  // Contiguous (uncompressed) attention needs its own checksums; chunked attention has Fletcher32.
  if (c.report.checksums && !checks.present() && !c.f.has_checksum_filter("attention/values"))
    c.report.problems.push_back(c.where() + " is damaged: dataset " + kAttentionChecksums + " is missing");
  c.report.checksum_spans = checks.present() ? (checks.values() + kChecksumSpan - 1) / kChecksumSpan : 0;
  c.report.attention_sources = checks.source_files();
  Findings bad(c.report, "damaged attention ranges");
  for (const auto& [a, b] : checks.bad_spans(c.f))
    bad.add(c.where() + " is damaged: dataset attention/values, values " + range(a, b) + checks.why_bad(a, b));
  if (!checks.present()) {
    std::vector<uint8_t> buf;
    for (uint64_t a = 0; a < checks.values(); a += kPiece * 64) {
      const uint64_t b = std::min(checks.values(), a + kPiece * 64);
      buf.resize(static_cast<std::size_t>(b - a) * checks.value_size());
      try {
        c.f.read_raw("attention/values", a, b, buf.data());
      } catch (const Error& e) {
        bad.add(e.what());
      }
    }
  }
  return c.report.problems.size() == problems_before;
}

// Every stored attention row sums to 1 within what the dtype's rounding allows.
void check_row_sums(const Checked& c, const Columns& cols) {
  const uint64_t per_token2 = values_per_token_pair(c.params);
  Findings bad(c.report, "examples with attention rows not summing to 1");
  for (std::size_t i = 0; i < c.report.examples; ++i) {
    if (cols.attention_offset[i] < 0 || cols.n_tokens[i] < 0) continue;
    const auto n = static_cast<uint64_t>(cols.n_tokens[i]), o = static_cast<uint64_t>(cols.attention_offset[i]);
    const RowSumRange limits = row_sum_range(dtype_name(c.params.dtype), n);
    std::vector<float> v;
    try {
      v = c.reader.attention_floats(o, o + per_token2 * n * n);
    } catch (const Error& e) {
      bad.add(e.what());
      continue;
    }
    std::size_t wrong = 0;
    double worst = 1;
    for (std::size_t r = 0; r < per_token2 * n; ++r) {
      double s = 0;
      for (std::size_t k = 0; k < n; ++k) s += v[r * n + k];
      if (c.params.dtype == AttentionDType::U8) s /= 255.0;
      if (!(s >= limits.low && s <= limits.high)) {
        if (wrong++ == 0 || std::fabs(s - 1) > std::fabs(worst - 1) || std::isnan(s)) worst = s;
      }
      ++c.report.rows_checked;
    }
    if (wrong > 0)
      bad.add(c.where() + ": example " + std::to_string(i) + ": " + std::to_string(wrong) + " of " +
              std::to_string(per_token2 * n) + " attention rows do not sum to 1 (e.g. " + std::to_string(worst) + "; " +
              dtype_name(c.params.dtype) + " rows of " + std::to_string(n) + " values allow " + std::to_string(limits.low) +
              ".." + std::to_string(limits.high) + ")");
  }
}

// Value norms and the layer maps (when stored): their lengths follow the tokens and examples; every
// value read through its checksums.
void check_maps(const Checked& c, const Columns& cols) {
  uint64_t map_values = 0;
  for (auto n : cols.n_tokens) map_values += static_cast<uint64_t>(c.params.model_layers * n * n);
  std::vector<std::pair<const char*, uint64_t>> stored;
  if (c.params.value_norms) stored.emplace_back(kValueNorms, cols.token_rows);
  for (const auto& name : c.params.layer_maps) stored.emplace_back(find_layer_map(name)->dataset, map_values);
  for (const auto& [name, rows] : stored) {
    Findings bad(c.report, std::string("problems in ") + name);
    try {
      const auto dims = c.f.dims(name);
      if (dims.empty() || dims[0] != rows) {
        bad.add(c.where() + ": dataset " + name + " holds " + std::to_string(dims.empty() ? 0 : dims[0]) +
                " rows, expected " + std::to_string(rows));
        continue;
      }
      for (uint64_t a = 0; a < rows; a += kPiece * 16) c.f.read_rows(name, a, std::min(rows, a + kPiece * 16));
    } catch (const Error& e) {
      bad.add(e.what());
    }
  }
}

// Gold trees (annotated datasets): one row per token, read through their checksums; heads >= -2.
void check_trees(const Checked& c, const Columns& cols) {
  Findings bad(c.report, std::string("problems in ") + kDepHead + " / " + kDepRelation);
  std::vector<int32_t> head;
  std::vector<std::string> relation;
  if (!read_all(c.f, kDepHead, head, c.report) || !read_all(c.f, kDepRelation, relation, c.report)) return;
  for (const auto& [name, rows] : {std::make_pair(kDepHead, head.size()), std::make_pair(kDepRelation, relation.size())})
    if (rows != cols.token_rows)
      bad.add(c.where() + ": dataset " + name + " holds " + std::to_string(rows) + " rows, tokens/id " +
              std::to_string(cols.token_rows));
  for (std::size_t t = 0; t < head.size(); ++t)
    if (head[t] < -2) {
      bad.add(c.where() + ": dataset " + kDepHead + " row " + std::to_string(t) + " is " + std::to_string(head[t]) +
              " (expected a word index, -1 root or -2 special)");
      break;
    }
}

// Scores: one row per example, read through their checksums; finite or NaN (undefined).
void check_scores(const Checked& c) {
  for (const auto& so : c.params.scores) {
    for (const char* part_name : {"values", "baseline"}) {
      const std::string name = score_group(so.key()) + "/" + part_name;
      Findings bad(c.report, "problems in " + name);
      try {
        const auto dims = c.f.dims(name);
        if (dims.empty() || dims[0] != c.report.examples) {
          bad.add(c.where() + ": dataset " + name + " holds " + std::to_string(dims.empty() ? 0 : dims[0]) +
                  " rows for " + std::to_string(c.report.examples) + " examples");
          continue;
        }
        for (std::size_t a = 0; a < c.report.examples; a += 4096) {
          const std::size_t b = std::min(c.report.examples, a + 4096);
          const auto v = c.f.read_rows(name, a, b);
          const std::size_t per = v.size() / (b - a);
          for (std::size_t k = 0; k < v.size(); ++k)
            if (std::isinf(v[k]))
              bad.add(c.where() + ": dataset " + name + ", example " + std::to_string(a + k / per) + ": score " +
                      std::to_string(v[k]) + " (scores are finite, or NaN where undefined)");
        }
      } catch (const Error& e) {
        bad.add(e.what());
      }
    }
  }
}

}  // namespace

CheckReport check_layout_file(const std::filesystem::path& path, const CheckOptions& options) {
  CheckReport report;
  std::unique_ptr<LayoutReader> reader;
  try {
    reader = std::make_unique<LayoutReader>(path);
  } catch (const Error& e) {
    report.problems.push_back(e.what());
    return report;
  }
  report.format_version = reader->format_version();
  report.examples = reader->examples();
  report.rejects = reader->rejects();
  const Checked c{path, *reader, reader->file(), reader->params(), report};
  report.checksums = report.format_version >= kFirstChecksummedVersion;
  report.text_checksums = report.format_version >= kFirstTextChecksumVersion;  // read_columns needs it
  check_root(c);
  const Columns cols = read_columns(c);
  const AttentionChecks checks(c.f);
  report.attention_values = checks.values();
  if (cols.ok) check_offsets(c, cols, checks);
  if (cols.ok && report.format_version >= kFirstCharOffsetsVersion) check_char_offsets(c, cols);
  const bool attention_readable = check_attention_bytes(c, checks);
  if (!reader->external_attention() && options.row_sums && cols.ok && attention_readable) check_row_sums(c, cols);
  if (cols.ok) check_maps(c, cols);
  if (cols.ok && c.params.trees) check_trees(c, cols);
  check_scores(c);
  return report;
}

}  // namespace attnscan
