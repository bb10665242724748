#include "tokenizer/normalized_text.hpp"

#include <limits>

#include "common/error.hpp"

namespace attnscan::detail {

NormalizedText::NormalizedText(std::u32string text, int64_t first) : text_(std::move(text)), origin_(first) {
  if (first < 0 || first + static_cast<int64_t>(text_.size()) >= std::numeric_limits<int32_t>::max())
    throw Error("a text of " + std::to_string(text_.size()) + " characters: longer than the tokenizer takes (2^31 - 1)");
  align_.resize(text_.size());
  for (std::size_t i = 0; i < align_.size(); ++i) {
    const auto at = static_cast<int32_t>(first + static_cast<int64_t>(i));
    align_[i] = {at, at + 1};
  }
}

CharSpan NormalizedText::original(std::size_t begin, std::size_t end) const {
  if (begin >= end || end > align_.size())
    return {origin_ + static_cast<int64_t>(begin), origin_ + static_cast<int64_t>(begin)};
  return {align_[begin].start, align_[end - 1].end};
}

NormalizedText NormalizedText::slice(std::size_t begin, std::size_t end) const& {
  NormalizedText out;
  out.text_ = text_.substr(begin, end - begin);
  out.align_.assign(align_.begin() + static_cast<std::ptrdiff_t>(begin), align_.begin() + static_cast<std::ptrdiff_t>(end));
  out.origin_ = original(begin, end).start;
  return out;
}

NormalizedText NormalizedText::slice(std::size_t begin, std::size_t end) && {
  if (begin != 0 || end != text_.size()) return static_cast<const NormalizedText&>(*this).slice(begin, end);
  origin_ = original(begin, end).start;
  return std::move(*this);
}

void NormalizedText::transform(const std::vector<CharChange>& changes, std::size_t removed_first) {
  std::u32string text;
  std::vector<Span> align;
  text.reserve(changes.size());
  align.reserve(changes.size());
  std::size_t used = removed_first;  // old characters consumed
  const Span none{static_cast<int32_t>(origin_), static_cast<int32_t>(origin_)};
  auto old = [&](std::size_t i) { return i < align_.size() ? align_[i] : (align_.empty() ? none : align_.back()); };
  for (const auto& [c, change, skip] : changes) {
    used += skip;
    if (change > 0) {
      align.push_back(used >= 1 ? old(used - 1) : none);
    } else {
      align.push_back(old(used));
      used += 1 + static_cast<std::size_t>(-change);
    }
    text.push_back(c);
  }
  text_.swap(text);
  align_.swap(align);
}

void NormalizedText::append(const NormalizedText& tail) {
  if (text_.empty()) origin_ = tail.origin_;
  text_ += tail.text_;
  align_.insert(align_.end(), tail.align_.begin(), tail.align_.end());
}

void NormalizedText::prepend(std::u32string_view s) {
  if (text_.empty() || s.empty()) return;
  text_.insert(0, s);
  align_.insert(align_.begin(), s.size(), align_.front());
}

}  // namespace attnscan::detail
