#pragma once
// The pattern of tokenizer.json's Split pre-tokenizer, matched with PCRE2 (UTF, UCP) as the `tokenizers`
// crate matches it with Oniguruma: its find_iter's matches, `\s` as Oniguruma's (Unicode White_Space,
// rewritten into a class because PCRE2's \s also takes U+180E), `^`/`$` at line breaks (Oniguruma's Ruby
// syntax). `\S` inside a character class and Ruby-only escapes (`\h` as a hex digit) keep PCRE2's meaning.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnscan::detail {

class SplitRegex {
 public:
  // A regex (tokenizers' Regex) or a literal string (tokenizers' String pattern). Throws
  // std::invalid_argument with PCRE2's message and the character it stopped at.
  static std::shared_ptr<const SplitRegex> regex(const std::string& pattern);
  static std::shared_ptr<const SplitRegex> literal(const std::string& text);
  ~SplitRegex();
  SplitRegex(const SplitRegex&) = delete;
  SplitRegex& operator=(const SplitRegex&) = delete;

  // The matches in `text`, [begin, end) in characters, left to right, as the onig crate's find_iter gives
  // them: an empty match is kept unless it is where the previous match ended. Throws std::runtime_error
  // when PCRE2 gives up (its match limit).
  std::vector<std::pair<std::size_t, std::size_t>> find(const std::u32string& text) const;

  // `\s` and `\S` of an Oniguruma pattern as classes of Unicode White_Space (what regex() compiles).
  static std::string with_oniguruma_spaces(const std::string& pattern);

 private:
  struct Compiled;
  explicit SplitRegex(std::unique_ptr<Compiled> c);
  std::unique_ptr<Compiled> c_;
};

}  // namespace attnscan::detail
