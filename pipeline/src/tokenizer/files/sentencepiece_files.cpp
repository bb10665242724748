// A SentencePiece *.model: the slow XLMRobertaTokenizer or AlbertTokenizer of transformers.
#include "common/error.hpp"
#include "tokenizer/files/recipes.hpp"

namespace attnscan::detail {

namespace {

using Slow = SentencePieceSlow;

// The slow class: the family's, else tokenizer_config.json's tokenizer_class (for families that do not
// name one); ModelError when neither is XLMRobertaTokenizer or AlbertTokenizer.
Slow::Flavour flavour_of(const std::filesystem::path& model_file, const TokenizerFacts& facts,
                         const TokenizerConfigFiles& files) {
  using F = SentencePieceFlavour;
  if (facts.sentencepiece == F::XlmRoberta || (facts.sentencepiece != F::Albert && files.tokenizer_class == "XLMRobertaTokenizer"))
    return Slow::Flavour::XlmRoberta;
  if (facts.sentencepiece == F::Albert || files.tokenizer_class == "AlbertTokenizer") return Slow::Flavour::Albert;
  throw ModelError(model_file.string() + ": the slow SentencePiece tokenizer of model_type '" + facts.model_type +
                   "' is not supported yet (supported: xlm-roberta as XLMRobertaTokenizer, albert as "
                   "AlbertTokenizer); set tokenizer: tokenizer.json to read that file instead");
}

}  // namespace

TokenizerParts sentencepiece_recipe(const std::filesystem::path& model_file, const TokenizerFacts& facts,
                                    const TokenizerConfigFiles& files) {
  Slow::Options o;
  o.flavour = flavour_of(model_file, facts, files);
  const bool albert = o.flavour == Slow::Flavour::Albert;
  if (albert) {
    o.do_lower_case = files.do_lower_case.value_or(true);
    o.remove_space = files.remove_space.value_or(true);
    o.keep_accents = files.keep_accents.value_or(false);
  }
  const auto s = albert ? slow_specials(files, {"[CLS]", "[SEP]", "<pad>", "<unk>", "[MASK]", "[CLS]", "[SEP]"})
                        : slow_specials(files, {"<s>", "</s>", "<pad>", "<unk>", "<mask>", "<s>", "</s>"});
  if (albert) o.lowercase_skip = {s.bos, s.eos, s.unk, s.sep, s.pad, s.cls, s.mask};
  auto sp = load_sentencepiece_slow(model_file, o);
  TokenizerParts t;
  t.kind = SubwordKind::Unigram;
  t.vocab = sp->vocab();
  auto ids = slow_special_ids(files, model_file, s, t.vocab, facts);
  t.config = tokenizer_config(files, facts);
  t.config.do_lower_case = albert && o.do_lower_case;
  set_special_strings(t.config, s);
  t.cls_id = ids.cls;
  t.sep_id = ids.sep;
  t.pad_id = ids.pad;
  t.pair_template = albert ? PairTemplate::bert(s.cls, t.cls_id, s.sep, t.sep_id)
                           : PairTemplate::roberta(s.cls, t.cls_id, s.sep, t.sep_id);
  t.source = model_file.filename().string() + " (Unigram, SentencePiece, " +
             (albert ? "AlbertTokenizer, BERT" : "XLMRobertaTokenizer, RoBERTa") + " template)";
  sp->set_added(std::move(ids.added));
  t.model = std::move(sp);
  return t;
}

}  // namespace attnscan::detail
