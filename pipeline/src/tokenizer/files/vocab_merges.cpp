// vocab.json + merges.txt: the slow byte-level BPE tokenizer (transformers' RobertaTokenizer).
#include <fstream>

#include "common/error.hpp"
#include "common/json_file.hpp"
#include "tokenizer/files/recipes.hpp"

namespace attnscan::detail {

namespace {

std::vector<std::pair<std::string, int32_t>> vocab_entries(const std::filesystem::path& vocab_json,
                                                           const TokenizerFacts& facts) {
  const auto j = read_json_file(vocab_json);
  if (!j.is_object() || j.empty()) throw ModelError(vocab_json.string() + ": expected a non-empty object of token -> id");
  std::vector<std::pair<std::string, int32_t>> entries;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() >= facts.vocab_size)
      throw ModelError(vocab_json.string() + ": id of '" + it.key() + "' is not an integer in 0.." +
                       std::to_string(facts.vocab_size - 1) + " (config.json's vocab_size " +
                       std::to_string(facts.vocab_size) + ")");
    entries.emplace_back(it.key(), it.value().get<int32_t>());
  }
  return entries;
}

// merges.txt as RobertaTokenizer reads it: the first line (#version) and the last (empty after the
// final newline) are skipped; a line that is not two tokens never matches a pair.
std::vector<std::pair<std::string, std::string>> merges_of(const std::filesystem::path& merges_txt) {
  std::ifstream in(merges_txt, std::ios::binary);
  if (!in) throw ModelError(merges_txt.string() + ": cannot open");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  for (std::size_t pos = 0;;) {
    const auto nl = all.find('\n', pos);
    lines.push_back(all.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  std::vector<std::pair<std::string, std::string>> merges;
  for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
    const auto parts = python_split_utf8(lines[i]);
    if (parts.size() == 2) merges.emplace_back(parts[0], parts[1]);
    else merges.emplace_back("\x01" + lines[i], "\x01");  // keeps the ranks of the lines after it
  }
  return merges;
}

}  // namespace

TokenizerParts vocab_merges_recipe(const std::filesystem::path& dir, const TokenizerFacts& facts,
                                   const TokenizerConfigFiles& files) {
  const auto vocab_json = dir / "vocab.json", merges_txt = dir / "merges.txt";
  for (const auto& f : {vocab_json, merges_txt})
    if (!std::filesystem::exists(f))
      throw ModelError(f.string() + ": missing from the model directory (the slow byte-level BPE tokenizer "
                       "reads vocab.json and merges.txt)");
  TokenizerParts t;
  t.kind = SubwordKind::ByteLevelBpe;
  t.vocab = Vocab(vocab_entries(vocab_json, facts));
  const auto merges = merges_of(merges_txt);
  const auto s = slow_specials(files, {"<s>", "</s>", "<pad>", "<unk>", "<mask>", "<s>", "</s>"});
  auto ids = slow_special_ids(files, vocab_json, s, t.vocab, facts);
  const bool add_prefix_space = files.add_prefix_space.value_or(false);
  t.config = tokenizer_config(files, facts);
  t.config.do_lower_case = false;
  set_special_strings(t.config, s);
  t.specials = encoder_specials(ids.cls, ids.sep, ids.pad);
  // RobertaTokenizer.build_inputs_with_special_tokens: `<s> A </s></s> B </s>` whatever the family
  t.pair_template = PairTemplate::roberta(s.cls, ids.cls, s.sep, ids.sep);
  t.source = std::string("vocab.json + merges.txt (byte-level BPE, RobertaTokenizer") +
             (add_prefix_space ? ", add_prefix_space" : "") + ", RoBERTa template)";
  t.model = std::make_shared<RobertaSlowModel>(t.vocab, BpeMerges(merges), std::move(ids.added), ids.unk,
                                               add_prefix_space);
  return t;
}

}  // namespace attnscan::detail
