#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pre_tokenizers/split_regex.hpp"

#include <pcre2.h>

#include <stdexcept>

#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

// Unicode White_Space, what Oniguruma's \s matches (PCRE2's UCP \s adds U+180E).
constexpr const char* kWhiteSpace = "\\t-\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
                                    "\\x{205F}\\x{3000}";

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

struct SplitRegex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

SplitRegex::SplitRegex(std::unique_ptr<Compiled> c) : c_(std::move(c)) {}
SplitRegex::~SplitRegex() = default;

std::string SplitRegex::with_oniguruma_spaces(const std::string& p) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char d = p[++i];
      if (d == 's') out += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      else if (d == 'S' && !in_class) out += "[^" + std::string(kWhiteSpace) + "]";
      else out += {c, d};
      continue;
    }
    out += c;
    if (!in_class && c == '[') {  // a leading '^' and a leading ']' belong to the class
      in_class = true;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
    } else if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:] inside a class
      const auto close = p.find(":]", i + 2);
      if (close != std::string::npos) {
        out.append(p, i + 1, close + 2 - (i + 1));
        i = close + 1;
      }
    } else if (in_class && c == ']') {
      in_class = false;
    }
  }
  return out;
}

namespace {

std::unique_ptr<pcre2_code, void (*)(pcre2_code*)> compile(const std::string& pattern, uint32_t options) {
  int error = 0;
  PCRE2_SIZE at = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options | PCRE2_UTF, &error, &at, nullptr);
  if (!code) throw std::invalid_argument(pcre2_message(error) + " at byte " + std::to_string(at));
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // where the JIT is missing, the interpreter matches alike
  return {code, pcre2_code_free};
}

}  // namespace

std::shared_ptr<const SplitRegex> SplitRegex::regex(const std::string& pattern) {
  auto c = std::make_unique<Compiled>();
  c->code = compile(with_oniguruma_spaces(pattern), PCRE2_UCP | PCRE2_MULTILINE).release();
  return std::shared_ptr<const SplitRegex>(new SplitRegex(std::move(c)));
}

std::shared_ptr<const SplitRegex> SplitRegex::literal(const std::string& text) {
  auto c = std::make_unique<Compiled>();
  c->code = compile(text, PCRE2_LITERAL).release();  // PCRE2 allows no UCP with LITERAL (nor needs it)
  return std::shared_ptr<const SplitRegex>(new SplitRegex(std::move(c)));
}

std::vector<std::pair<std::size_t, std::size_t>> SplitRegex::find(const std::u32string& text) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  const std::string subject = unicode::encode(text);
  const std::vector<std::size_t> char_at = unicode::chars_before_bytes(subject);
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> data(
      pcre2_match_data_create_from_pattern(c_->code, nullptr), pcre2_match_data_free);
  const auto* s = reinterpret_cast<PCRE2_SPTR>(subject.data());
  std::size_t from = 0;           // where the next search starts (onig's last_end)
  std::size_t last_end = SIZE_MAX;  // where the last match ended
  while (from <= subject.size()) {
    const int rc = pcre2_match(c_->code, s, subject.size(), from, PCRE2_NO_UTF_CHECK, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw std::runtime_error("regex match failed: " + pcre2_message(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data.get());
    const std::size_t begin = ov[0], end = ov[1];
    if (begin == end && end == last_end) {  // no empty match where the last one ended: one character on
      if (from == subject.size()) break;
      ++from;
      while (from < subject.size() && (static_cast<unsigned char>(subject[from]) & 0xC0) == 0x80) ++from;
      continue;
    }
    from = end;
    last_end = end;
    out.emplace_back(char_at[begin], char_at[end]);
  }
  return out;
}

}  // namespace attnscan::detail
