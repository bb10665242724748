// vocab.txt: the slow WordPiece tokenizer (transformers' BertTokenizer / MPNetTokenizer).
#include <algorithm>

#include "common/error.hpp"
#include "tokenizer/files/recipes.hpp"
#include "tokenizer/files/tokenizer_json.hpp"

namespace attnscan::detail {

namespace {

// The added tokens HF's slow tokenizer splits out of text besides the special tokens of
// tokenizer_config.json: its added_tokens_decoder (with their ids and single_word; the basic tokenizer
// drops the whitespace lstrip/rstrip would), else tokenizer.json's added_tokens found in vocab.txt.
std::vector<SlowAddedToken> slow_added_tokens(const std::filesystem::path& dir, const TokenizerConfigFiles& files,
                                              const Vocab& vocab) {
  std::vector<SlowAddedToken> out;
  if (files.added_tokens_decoder) {
    for (const auto& e : *files.added_tokens_decoder) {
      SlowAddedToken a{e.content, e.id};
      a.single_word = e.single_word;
      out.push_back(std::move(a));
    }
    return out;
  }
  if (std::filesystem::exists(dir / "tokenizer.json"))
    for (const auto& t : added_token_contents(dir / "tokenizer.json")) out.push_back({t});
  return out;
}

}  // namespace

TokenizerParts wordpiece_slow_parts(Vocab vocab, TokenizerConfig config, TemplateKind kind,
                                    const std::vector<SlowAddedToken>& added) {
  TokenizerParts p;
  auto need = [&](const std::string& tok) {
    const int32_t id = vocab.find(tok);
    if (id < 0) throw ModelError("vocabulary has no special token '" + tok + "'");
    return id;
  };
  p.specials = encoder_specials(need(config.cls_token), need(config.sep_token), need(config.pad_token));
  need(config.unk_token);
  std::vector<SlowAddedToken> candidates;
  for (const auto* t : {&config.unk_token, &config.sep_token, &config.pad_token, &config.cls_token, &config.mask_token})
    candidates.push_back({*t});
  candidates.insert(candidates.end(), added.begin(), added.end());
  std::vector<SlowAddedToken> specials;
  for (auto& t : candidates) {  // a special without an id (not in the vocabulary) is not split out
    if (t.id < 0) t.id = vocab.find(t.content);
    const bool seen = std::any_of(specials.begin(), specials.end(), [&](const SlowAddedToken& s) { return s.content == t.content; });
    if (t.content.empty() || t.id < 0 || seen) continue;
    specials.push_back(t);
  }
  const bool roberta = kind == TemplateKind::Roberta;
  p.pair_template = roberta ? PairTemplate::roberta(config.cls_token, *p.specials.begin, config.sep_token, *p.specials.separator)
                            : PairTemplate::bert(config.cls_token, *p.specials.begin, config.sep_token, *p.specials.separator);
  p.source = std::string("vocab.txt (WordPiece, ") + (roberta ? "RoBERTa" : "BERT") + " template)";
  p.model = std::make_shared<WordPieceModel>(vocab, config, std::move(specials));
  p.kind = SubwordKind::WordPiece;
  p.cjk_isolated = config.tokenize_chinese_chars;
  p.vocab = std::move(vocab);
  p.config = std::move(config);
  return p;
}

TokenizerParts vocab_txt_recipe(const std::filesystem::path& dir, const TokenizerFacts& facts,
                                const TokenizerConfigFiles& files) {
  const auto vocab_txt = dir / "vocab.txt";
  if (!std::filesystem::exists(vocab_txt)) throw ModelError(vocab_txt.string() + ": missing from the model directory");
  auto vocab = Vocab::load(vocab_txt);
  if (static_cast<int64_t>(vocab.size()) > facts.vocab_size)
    throw ModelError(vocab_txt.string() + ": " + std::to_string(vocab.size()) +
                     " tokens but config.json says vocab_size " + std::to_string(facts.vocab_size));
  const auto added = slow_added_tokens(dir, files, vocab);
  for (const auto& a : added) check_vocab_size(a.id, facts, files.config_file);
  return wordpiece_slow_parts(std::move(vocab), tokenizer_config(files, facts), facts.slow_template, added);
}

}  // namespace attnscan::detail
