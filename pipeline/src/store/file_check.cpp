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

RowSumRange row_sum_range(const std::string& dtype) {
  if (dtype == "uint8") return {0.965, 1.024};  // each of n values rounded to 1/255
  if (dtype == "float16") return {1 - 5e-3, 1 + 5e-3};
  return {1 - 1e-3, 1 + 1e-3};
}

CheckReport check_layout_file(const std::filesystem::path& path, const CheckOptions& options) {
  CheckReport report;
  std::unique_ptr<LayoutReader> reader;
  try {
    reader = std::make_unique<LayoutReader>(path);
  } catch (const Error& e) {
    report.problems.push_back(e.what());
    return report;
  }
  const h5::File& f = reader->file();
  const LayoutParams& params = reader->params();
  report.format_version = reader->format_version();
  report.examples = reader->examples();
  report.rejects = reader->rejects();
  const bool external = reader->external_attention();
  const bool part = f.has_attr("/", "block");
  if (!part) {
    try {
      const RootInfo root = read_root(f);
      if (root.examples_written != report.examples)
        report.problems.push_back(path.string() + ": root attribute examples_written is " +
                                  std::to_string(root.examples_written) + ", examples/index holds " +
                                  std::to_string(report.examples));
    } catch (const Error& e) {
      report.problems.push_back(e.what());
    }
  }

  // Every column, read through its Fletcher32 checksums; the lengths within each table agree.
  std::vector<int64_t> n_tokens, token_offset;
  std::vector<int64_t> attention_offset;
  std::size_t token_rows = 0;
  bool columns_ok = true;
  std::vector<std::string> sentence_a, sentence_b;
  std::vector<uint8_t> segment;
  std::vector<int64_t> char_start, char_end;
  const bool char_offsets = report.format_version >= kFirstCharOffsetsVersion;
  LayoutChunk none;
  for_each_column(none, [&](const char* name, auto& column, std::size_t) {
    using T = typename std::decay_t<decltype(column)>::value_type;
    if (!char_offsets && is_char_offset_column(name)) return;  // older files have none
    std::vector<T> values;
    if (!read_all(f, name, values, report)) return void(columns_ok = false);
    const std::string n(name);
    const std::size_t expect = n.rfind("examples/", 0) == 0 ? report.examples
                               : n.rfind("rejects/", 0) == 0 ? report.rejects
                               : token_rows;
    if (n.rfind("tokens/", 0) == 0 && n == "tokens/id") token_rows = values.size();
    else if (values.size() != expect) {
      report.problems.push_back(path.string() + ": dataset " + n + " holds " + std::to_string(values.size()) +
                                " rows, its table " + std::to_string(expect));
      columns_ok = false;
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (n == "examples/sentence_a") sentence_a = values;
      if (n == "examples/sentence_b") sentence_b = values;
    }
    if constexpr (std::is_same_v<T, uint8_t>) {
      if (n == "tokens/segment") segment = values;
    }
    if constexpr (std::is_same_v<T, int64_t>) {
      if (n == "tokens/char_start") char_start = values;
      if (n == "tokens/char_end") char_end = values;
      if (n == "examples/n_tokens") n_tokens = values;
      if (n == "examples/token_offset") token_offset = values;
      if (n == "examples/attention_offset") attention_offset = values;
    }
  });

  // Offsets: tokens back to back in example order; attention ranges in order, within the values.
  AttentionChecks checks(f);
  report.attention_values = checks.values();
  report.checksums = report.format_version >= kFirstChecksummedVersion;
  const uint64_t per_token2 = static_cast<uint64_t>(params.layers.size() * params.heads.size());
  if (columns_ok) {
    Findings bad(report, "offset problems");
    int64_t next_token = 0;
    uint64_t attention_end = 0;
    for (std::size_t i = 0; i < report.examples; ++i) {
      if (n_tokens[i] < 0) {
        bad.add(path.string() + ": example " + std::to_string(i) + ": examples/n_tokens is " + std::to_string(n_tokens[i]));
        continue;
      }
      if (token_offset[i] != next_token)
        bad.add(path.string() + ": example " + std::to_string(i) + ": examples/token_offset is " +
                std::to_string(token_offset[i]) + ", expected " + std::to_string(next_token));
      next_token = token_offset[i] + n_tokens[i];
      const int64_t o = attention_offset[i];
      if (o < -1) bad.add(path.string() + ": example " + std::to_string(i) + ": examples/attention_offset is " + std::to_string(o));
      if (o < 0) continue;
      ++report.stored_examples;
      const auto n = static_cast<uint64_t>(n_tokens[i]);
      const uint64_t end = static_cast<uint64_t>(o) + per_token2 * n * n;
      if (static_cast<uint64_t>(o) < attention_end || (!external && end > checks.values()))
        bad.add(path.string() + ": example " + std::to_string(i) + ": attention values " + range(static_cast<uint64_t>(o), end) +
                " overlap the previous example or lie beyond attention/values (" + std::to_string(checks.values()) + ")");
      attention_end = end;
    }
    if (next_token != static_cast<int64_t>(token_rows))
      bad.add(path.string() + ": the examples' tokens end at " + std::to_string(next_token) + ", tokens/id holds " +
              std::to_string(token_rows));
  }
  // Character offsets: -1/-1, or 0 <= start <= end <= the length (code points) of the token's sentence.
  if (columns_ok && char_offsets) {
    Findings bad(report, "tokens with character offsets outside their sentence");
    for (std::size_t i = 0; i < report.examples; ++i) {
      const int64_t lengths[2] = {code_points(sentence_a[i]), code_points(sentence_b[i])};
      for (int64_t t = std::max<int64_t>(token_offset[i], 0); t < token_offset[i] + n_tokens[i]; ++t) {
        const auto k = static_cast<std::size_t>(t);
        if (k >= char_start.size()) break;  // reported above (the tokens' offsets)
        const int64_t s = char_start[k], e = char_end[k], len = lengths[segment[k] ? 1 : 0];
        if ((s == -1 && e == -1) || (s >= 0 && s <= e && e <= len)) continue;
        bad.add(path.string() + ": example " + std::to_string(i) + ", token " + std::to_string(t - token_offset[i]) +
                ": tokens/char_start, char_end (" + std::to_string(s) + ", " + std::to_string(e) +
                ") outside its sentence (" + std::to_string(len) + " characters)");
      }
    }
  }

  // Attention: every checksum span, then every row's sum.
  const std::size_t problems_before_attention = report.problems.size();
  if (!external && checks.values() > 0) {
    // Contiguous (uncompressed) attention needs its own checksums; chunked attention has Fletcher32.
    if (report.checksums && !checks.present() && !f.has_checksum_filter("attention/values"))
      report.problems.push_back(path.string() + " is damaged: dataset " + kAttentionChecksums + " is missing");
    report.checksum_spans = checks.present() ? (checks.values() + kChecksumSpan - 1) / kChecksumSpan : 0;
    Findings bad(report, "damaged attention ranges");
    for (const auto& [a, b] : checks.bad_spans(f))
      bad.add(path.string() + " is damaged: dataset attention/values, values " + range(a, b) + " (checksum mismatch)");
    if (!checks.present()) {  // format_version 1: at least every value must be readable
      std::vector<uint8_t> buf;
      for (uint64_t a = 0; a < checks.values(); a += kPiece * 64) {
        const uint64_t b = std::min(checks.values(), a + kPiece * 64);
        buf.resize(static_cast<std::size_t>(b - a) * checks.value_size());
        try {
          f.read_raw("attention/values", a, b, buf.data());
        } catch (const Error& e) {
          bad.add(e.what());
        }
      }
    }
  }
  const bool attention_readable = report.problems.size() == problems_before_attention;
  if (!external && options.row_sums && columns_ok && attention_readable) {
    const RowSumRange limits = row_sum_range(dtype_name(params.dtype));
    Findings bad(report, "examples with attention rows not summing to 1");
    for (std::size_t i = 0; i < report.examples; ++i) {
      if (attention_offset[i] < 0 || n_tokens[i] < 0) continue;
      const auto n = static_cast<uint64_t>(n_tokens[i]), o = static_cast<uint64_t>(attention_offset[i]);
      std::vector<float> v;
      try {
        v = reader->attention_floats(o, o + per_token2 * n * n);
      } catch (const Error& e) {
        bad.add(e.what());
        continue;
      }
      std::size_t wrong = 0;
      double worst = 1;
      for (std::size_t r = 0; r < per_token2 * n; ++r) {
        double s = 0;
        for (std::size_t k = 0; k < n; ++k) s += v[r * n + k];
        if (params.dtype == AttentionDType::U8) s /= 255.0;
        if (!(s >= limits.low && s <= limits.high)) {
          if (wrong++ == 0 || std::fabs(s - 1) > std::fabs(worst - 1) || std::isnan(s)) worst = s;
        }
        ++report.rows_checked;
      }
      if (wrong > 0)
        bad.add(path.string() + ": example " + std::to_string(i) + ": " + std::to_string(wrong) + " of " +
                std::to_string(per_token2 * n) + " attention rows do not sum to 1 (e.g. " + std::to_string(worst) +
                "; " + dtype_name(params.dtype) + " allows " + std::to_string(limits.low) + ".." +
                std::to_string(limits.high) + ")");
    }
  }

  // Value norms and rollout (when stored): their lengths follow the tokens and examples; every value
  // read through its checksums.
  if (columns_ok) {
    uint64_t rollout_values = 0;
    for (auto n : n_tokens) rollout_values += static_cast<uint64_t>(params.model_layers * n * n);
    const std::pair<bool, std::pair<const char*, uint64_t>> optional[] = {
        {params.value_norms, {kValueNorms, token_rows}}, {params.rollout, {kRollout, rollout_values}}};
    for (const auto& [stored, what] : optional) {
      if (!stored) continue;
      const auto& [name, rows] = what;
      Findings bad(report, std::string("problems in ") + name);
      try {
        const auto dims = f.dims(name);
        if (dims.empty() || dims[0] != rows) {
          bad.add(path.string() + ": dataset " + name + " holds " + std::to_string(dims.empty() ? 0 : dims[0]) +
                  " rows, expected " + std::to_string(rows));
          continue;
        }
        for (uint64_t a = 0; a < rows; a += kPiece * 16) f.read_rows(name, a, std::min(rows, a + kPiece * 16));
      } catch (const Error& e) {
        bad.add(e.what());
      }
    }
  }

  // Gold trees (annotated datasets): one row per token, read through their checksums; heads >= -2.
  if (columns_ok && params.trees) {
    Findings bad(report, std::string("problems in ") + kDepHead + " / " + kDepRelation);
    std::vector<int32_t> head;
    std::vector<std::string> relation;
    if (read_all(f, kDepHead, head, report) && read_all(f, kDepRelation, relation, report)) {
      for (const auto& [name, rows] : {std::make_pair(kDepHead, head.size()), std::make_pair(kDepRelation, relation.size())})
        if (rows != token_rows)
          bad.add(path.string() + ": dataset " + name + " holds " + std::to_string(rows) + " rows, tokens/id " +
                  std::to_string(token_rows));
      for (std::size_t t = 0; t < head.size(); ++t)
        if (head[t] < -2) {
          bad.add(path.string() + ": dataset " + kDepHead + " row " + std::to_string(t) + " is " +
                  std::to_string(head[t]) + " (expected a word index, -1 root or -2 special)");
          break;
        }
    }
  }

  // Scores: one row per example, read through their checksums; finite or NaN (undefined).
  for (const auto& so : params.scores) {
    for (const char* part_name : {"values", "baseline"}) {
      const std::string name = score_group(so.key()) + "/" + part_name;
      Findings bad(report, "problems in " + name);
      try {
        const auto dims = f.dims(name);
        if (dims.empty() || dims[0] != report.examples) {
          bad.add(path.string() + ": dataset " + name + " holds " + std::to_string(dims.empty() ? 0 : dims[0]) +
                  " rows for " + std::to_string(report.examples) + " examples");
          continue;
        }
        for (std::size_t a = 0; a < report.examples; a += 4096) {
          const std::size_t b = std::min(report.examples, a + 4096);
          const auto v = f.read_rows(name, a, b);
          const std::size_t per = v.size() / (b - a);
          for (std::size_t k = 0; k < v.size(); ++k)
            if (std::isinf(v[k]))
              bad.add(path.string() + ": dataset " + name + ", example " + std::to_string(a + k / per) + ": score " +
                      std::to_string(v[k]) + " (scores are finite, or NaN where undefined)");
        }
      } catch (const Error& e) {
        bad.add(e.what());
      }
    }
  }
  return report;
}

}  // namespace attnscan
