// A SentencePiece *.model: the slow XLMRobertaTokenizer, AlbertTokenizer or DebertaV2Tokenizer of
// transformers.
#include "common/error.hpp"
#include "tokenizer/files/recipes.hpp"

namespace attnscan::detail {

namespace {

using Slow = SentencePieceSlow;

// The slow class: the family's, else tokenizer_config.json's tokenizer_class (for families that do not
// name one); ModelError when it is none of XLMRobertaTokenizer, AlbertTokenizer, DebertaV2Tokenizer.
Slow::Flavour flavour_of(const std::filesystem::path& model_file, const TokenizerFacts& facts,
                         const TokenizerConfigFiles& files) {
  using F = SentencePieceFlavour;
  if (facts.sentencepiece == F::XlmRoberta || (facts.sentencepiece != F::Albert && files.tokenizer_class == "XLMRobertaTokenizer"))
    return Slow::Flavour::XlmRoberta;
  if (facts.sentencepiece == F::Albert || (facts.sentencepiece != F::Deberta && files.tokenizer_class == "AlbertTokenizer"))
    return Slow::Flavour::Albert;
  if (facts.sentencepiece == F::Deberta || files.tokenizer_class == "DebertaV2Tokenizer") return Slow::Flavour::Deberta;
  throw ModelError(model_file.string() + ": the slow SentencePiece tokenizer of model_type '" + facts.model_type +
                   "' is not supported yet (supported: xlm-roberta as XLMRobertaTokenizer, albert as "
                   "AlbertTokenizer, deberta-v2 as DebertaV2Tokenizer); set tokenizer: tokenizer.json to read that "
                   "file instead");
}

}  // namespace

TokenizerParts sentencepiece_recipe(const std::filesystem::path& model_file, const TokenizerFacts& facts,
                                    const TokenizerConfigFiles& files) {
  Slow::Options o;
  o.flavour = flavour_of(model_file, facts, files);
  const bool albert = o.flavour == Slow::Flavour::Albert, deberta = o.flavour == Slow::Flavour::Deberta;
  if (albert) {
    o.do_lower_case = files.do_lower_case.value_or(true);
    o.remove_space = files.remove_space.value_or(true);
    o.keep_accents = files.keep_accents.value_or(false);
  }
  if (deberta) {
    o.do_lower_case = files.do_lower_case.value_or(false);
    if (files.split_by_punct.value_or(false))
      throw ModelError(files.config_file.string() + ": split_by_punct true is not supported yet (DebertaV2Tokenizer's "
                       "punctuation split); set tokenizer: tokenizer.json to read that file instead");
  }
  const auto s = albert    ? slow_specials(files, {"[CLS]", "[SEP]", "<pad>", "<unk>", "[MASK]", "[CLS]", "[SEP]"})
                 : deberta ? slow_specials(files, {"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]", "[CLS]", "[SEP]"})
                           : slow_specials(files, {"<s>", "</s>", "<pad>", "<unk>", "<mask>", "<s>", "</s>"});
  if (albert || deberta) o.lowercase_skip = {s.bos, s.eos, s.unk, s.sep, s.pad, s.cls, s.mask};
  auto sp = load_sentencepiece_slow(model_file, o);
  TokenizerParts t;
  t.kind = SubwordKind::Unigram;
  t.vocab = sp->vocab();
  auto ids = slow_special_ids(files, model_file, s, t.vocab, facts);
  t.config = tokenizer_config(files, facts);
  t.config.do_lower_case = (albert || deberta) && o.do_lower_case;
  set_special_strings(t.config, s);
  t.specials = encoder_specials(ids.cls, ids.sep, ids.pad);
  t.pair_template = albert || deberta ? PairTemplate::bert(s.cls, ids.cls, s.sep, ids.sep)
                                      : PairTemplate::roberta(s.cls, ids.cls, s.sep, ids.sep);
  t.source = model_file.filename().string() + " (Unigram, SentencePiece, " +
             (albert ? "AlbertTokenizer, BERT" : deberta ? "DebertaV2Tokenizer, BERT" : "XLMRobertaTokenizer, RoBERTa") +
             " template)";
  sp->set_added(std::move(ids.added));
  t.model = std::move(sp);
  return t;
}

}  // namespace attnscan::detail
