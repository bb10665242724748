// NFC, NFD, NFKC, NFKD and Lowercase, with each character's alignment (the crate's
// unicode_normalization_alignments: a decomposition's first character replaces, the others are inserted).
#include <utf8proc.h>

#include "tokenizer/normalizers/normalizers.hpp"
#include "tokenizer/unicode_text.hpp"

namespace attnscan::detail {

namespace {

std::u32string in_form(UnicodeForm form, std::u32string_view s) {
  switch (form) {
    case UnicodeForm::NFC: return unicode::nfc(s);
    case UnicodeForm::NFD: return unicode::nfd(s);
    case UnicodeForm::NFKC: return unicode::nfkc(s);
    case UnicodeForm::NFKD: return unicode::nfkd(s);
  }
  return std::u32string(s);
}

bool starter(char32_t c) { return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class == 0; }

// `k` old characters became `out`: the first min(k, m) replace, extra ones are inserted, and the last
// replacing one removes the old ones left over.
void push_group(std::size_t k, const std::u32string& out, std::vector<CharChange>& changes, std::size_t& removed_first) {
  const std::size_t m = out.size();
  for (std::size_t i = 0; i < m; ++i) changes.push_back({out[i], i < k ? 0 : 1});
  if (m == 0) {
    if (changes.empty()) removed_first += k;
    else changes.back().change -= static_cast<int>(k);
  } else if (m < k) {
    changes[changes.size() - 1].change = -static_cast<int>(k - m);
  }
}

// The text cut before every starter (combining class 0), each part normalized alone; nothing when
// that does not give the whole text's normal form (a composition across starters, e.g. Hangul jamo).
bool by_clusters(UnicodeForm form, const std::u32string& t, const std::u32string& whole, std::vector<CharChange>& changes,
                 std::size_t& removed_first) {
  std::u32string joined;
  for (std::size_t b = 0; b < t.size();) {
    std::size_t e = b + 1;
    while (e < t.size() && !starter(t[e])) ++e;
    const std::u32string out = in_form(form, std::u32string_view(t.data() + b, e - b));
    joined += out;
    push_group(e - b, out, changes, removed_first);
    b = e;
  }
  return joined == whole;
}

bool all_ascii(const std::u32string& t) {
  for (char32_t c : t)
    if (c >= 0x80) return false;
  return true;
}

// The same characters, each replaced by one: the alignment stays.
void replace_each(NormalizedText& text, const std::u32string& by) {
  std::size_t i = 0;
  text.map([&](char32_t) { return by[i++]; });
}

}  // namespace

void unicode_form(UnicodeForm form, NormalizedText& text) {
  const std::u32string& t = text.text();
  if (all_ascii(t)) return;  // every normal form of ASCII is itself
  const std::u32string whole = in_form(form, t);
  if (whole == t) return;
  std::vector<CharChange> changes;
  std::size_t removed_first = 0;
  if (form == UnicodeForm::NFD || form == UnicodeForm::NFKD) {  // each character decomposed alone
    std::u32string joined;
    for (char32_t c : t) {
      const std::u32string out = in_form(form, std::u32string_view(&c, 1));
      joined += out;
      push_group(1, out, changes, removed_first);
    }
    if (joined == whole) return text.transform(changes, removed_first);
    changes.clear();  // marks reordered across characters: by clusters
    removed_first = 0;
  }
  if (by_clusters(form, t, whole, changes, removed_first)) return text.transform(changes, removed_first);
  changes.clear();  // the whole text as one group: its first character's span for all
  removed_first = 0;
  push_group(t.size(), whole, changes, removed_first);
  text.transform(changes, removed_first);
}

void lowercase(NormalizedText& text) {
  if (all_ascii(text.text())) return text.map([](char32_t c) { return c >= U'A' && c <= U'Z' ? c + 32 : c; });
  const std::u32string lowered = unicode::lower_each_char(text.text());
  if (lowered == text.text()) return;
  if (lowered.size() == text.size()) return replace_each(text, lowered);  // one character each
  text.expand([](char32_t c) { return unicode::lower_each_char(std::u32string_view(&c, 1)); });
}

void python_lowercase(NormalizedText& text) {
  if (all_ascii(text.text())) return text.map([](char32_t c) { return c >= U'A' && c <= U'Z' ? c + 32 : c; });
  const std::u32string lowered = unicode::python_lower(text.text());
  if (lowered == text.text()) return;
  if (lowered.size() == text.size()) return replace_each(text, lowered);
  std::vector<CharChange> changes;
  changes.reserve(lowered.size());
  std::size_t at = 0;  // only U+0130 lowercases to more than one character ("i\u0307")
  for (char32_t c : text.text()) {
    changes.push_back({lowered[at++], 0});
    if (c == 0x130) changes.push_back({lowered[at++], 1});
  }
  text.transform(changes);
}

}  // namespace attnscan::detail
