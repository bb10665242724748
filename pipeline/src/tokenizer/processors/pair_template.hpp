#pragma once
// Where the special tokens go around one or two sentences, and the token type ids the model gets:
// BERT `[CLS] A [SEP] B [SEP]` (types 0..0 1..1), RoBERTa/MPNet `<s> A </s></s> B </s>` (all 0).
// Single sentence: single_prefix A single_suffix. Pair: prefix A middle B suffix.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnscan {

struct TemplateToken {
  std::string token;  // e.g. "[CLS]"
  int32_t id = 0;
  uint8_t type_id = 0;
};

struct PairTemplate {
  std::string name;  // "BERT", "RoBERTa", "TemplateProcessing": for descriptions
  std::vector<TemplateToken> single_prefix, single_suffix;
  uint8_t single_type_a = 0;
  std::vector<TemplateToken> prefix, middle, suffix;
  uint8_t type_a = 0, type_b = 1;

  // Special tokens the template adds: 3 for BERT pairs, 4 for RoBERTa pairs.
  std::size_t added(bool pair) const {
    return pair ? prefix.size() + middle.size() + suffix.size() : single_prefix.size() + single_suffix.size();
  }

  static PairTemplate bert(const std::string& cls, int32_t cls_id, const std::string& sep, int32_t sep_id);
  static PairTemplate roberta(const std::string& cls, int32_t cls_id, const std::string& sep, int32_t sep_id);
};

}  // namespace attnscan
