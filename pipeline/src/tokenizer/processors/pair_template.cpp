#include "tokenizer/processors/pair_template.hpp"

namespace attnscan {

PairTemplate PairTemplate::bert(const std::string& cls, int32_t cls_id, const std::string& sep, int32_t sep_id) {
  PairTemplate t;
  t.name = "BERT";
  t.single_prefix = t.prefix = {{cls, cls_id, 0}};
  t.single_suffix = t.middle = {{sep, sep_id, 0}};
  t.suffix = {{sep, sep_id, 1}};
  t.type_a = 0;
  t.type_b = 1;
  return t;
}

PairTemplate PairTemplate::roberta(const std::string& cls, int32_t cls_id, const std::string& sep, int32_t sep_id) {
  PairTemplate t;
  t.name = "RoBERTa";
  t.single_prefix = t.prefix = {{cls, cls_id, 0}};
  t.single_suffix = t.suffix = {{sep, sep_id, 0}};
  t.middle = {{sep, sep_id, 0}, {sep, sep_id, 0}};
  t.type_a = t.type_b = 0;
  return t;
}

}  // namespace attnscan
