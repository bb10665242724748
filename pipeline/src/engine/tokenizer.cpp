#include "attnscan/tokenizer.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>

#include "attnscan/error.hpp"
#include "engine/config_fields.hpp"
#include "engine/json_file.hpp"
#include "engine/subword_model.hpp"
#include "engine/tokenizer_json.hpp"

namespace attnscan {

namespace {

// The added tokens HF's slow tokenizer splits out of text besides the special tokens of
// tokenizer_config.json: its added_tokens_decoder, else tokenizer.json's added_tokens.
std::vector<std::string> slow_added_tokens(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  const auto config = dir / "tokenizer_config.json";
  if (std::filesystem::exists(config)) {
    auto j = read_json_file(config);
    if (j.is_object() && j.contains("added_tokens_decoder") && j["added_tokens_decoder"].is_object()) {
      for (const auto& t : j["added_tokens_decoder"])
        if (t.is_object() && t.contains("content") && t["content"].is_string())
          out.push_back(t["content"].get<std::string>());
      return out;
    }
  }
  if (std::filesystem::exists(dir / "tokenizer.json")) return detail::added_token_contents(dir / "tokenizer.json");
  return out;
}

// The special tokens of a slow BPE / SentencePiece tokenizer: the family's defaults (as the slow class's
// constructor has them), then special_tokens_map.json, then tokenizer_config.json.
struct SlowSpecials {
  std::string cls, sep, pad, unk, mask, bos, eos;
};

SlowSpecials slow_specials(const std::filesystem::path& dir, SlowSpecials s) {
  for (const char* name : {"special_tokens_map.json", "tokenizer_config.json"}) {
    const auto file = dir / name;
    if (!std::filesystem::exists(file)) continue;
    const auto j = read_json_file(file);
    if (!j.is_object()) throw ModelError(file.string() + ": expected a JSON object");
    auto take = [&](const char* key, std::string& dst) {
      auto it = j.find(key);
      if (it == j.end() || it->is_null()) return;
      if (it->is_string()) dst = it->get<std::string>();
      else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) dst = (*it)["content"].get<std::string>();
      else throw ModelError(file.string() + ": field '" + key + "' has the wrong type");
    };
    take("cls_token", s.cls);
    take("sep_token", s.sep);
    take("pad_token", s.pad);
    take("unk_token", s.unk);
    take("mask_token", s.mask);
    take("bos_token", s.bos);
    take("eos_token", s.eos);
  }
  return s;
}

// The added tokens a slow tokenizer splits out of text: tokenizer_config.json's added_tokens_decoder
// (id, lstrip, rstrip), then every special token not among them, with its id from `find` (the mask
// token lstrip, as RobertaTokenizer, XLMRobertaTokenizer and AlbertTokenizer make it).
std::vector<detail::SlowAddedToken> slow_added(const std::filesystem::path& dir, const SlowSpecials& s,
                                               const std::function<int32_t(const std::string&)>& find) {
  std::vector<detail::SlowAddedToken> out;
  const auto config = dir / "tokenizer_config.json";
  if (std::filesystem::exists(config)) {
    const auto j = read_json_file(config);
    if (j.is_object() && j.contains("added_tokens_decoder") && j["added_tokens_decoder"].is_object()) {
      for (auto it = j["added_tokens_decoder"].begin(); it != j["added_tokens_decoder"].end(); ++it) {
        const auto& t = it.value();
        if (!t.is_object() || !t.contains("content") || !t["content"].is_string())
          throw ModelError(config.string() + ": added_tokens_decoder entry " + it.key() + " has no \"content\"");
        const auto flag = [&](const char* key, bool fallback) { return config_fields::field_or<bool>(t, config, key, fallback); };
        if (flag("single_word", false))
          throw ModelError(config.string() + ": added token '" + t["content"].get<std::string>() +
                           "': single_word is not supported yet");
        detail::SlowAddedToken a;
        a.content = t["content"].get<std::string>();
        const std::string& key = it.key();
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), a.id);
        if (ec != std::errc() || end != key.data() + key.size() || a.id < 0)
          throw ModelError(config.string() + ": added_tokens_decoder key '" + key + "' is not a token id");
        a.lstrip = flag("lstrip", false);
        a.rstrip = flag("rstrip", false);
        a.special = flag("special", true);
        out.push_back(std::move(a));
      }
    }
  }
  for (const auto* tok : {&s.bos, &s.eos, &s.unk, &s.sep, &s.pad, &s.cls, &s.mask}) {
    if (tok->empty()) continue;
    bool have = false;
    for (const auto& a : out) have = have || a.content == *tok;
    const int32_t id = find(*tok);
    if (have || id < 0) continue;
    detail::SlowAddedToken a;
    a.content = *tok;
    a.id = id;
    a.lstrip = tok == &s.mask;
    out.push_back(std::move(a));
  }
  return out;
}

// The slow tokenizer's file of each kind in `dir`, "" when absent.
constexpr const char* kSentencePieceFiles[] = {"sentencepiece.bpe.model", "spiece.model", "sentencepiece.model",
                                               "tokenizer.model"};

std::filesystem::path sentencepiece_file(const std::filesystem::path& dir) {
  for (const char* name : kSentencePieceFiles)
    if (std::filesystem::exists(dir / name)) return dir / name;
  return {};
}

constexpr const char* kFilesWanted =
    "vocab.txt (WordPiece, the slow BertTokenizer), vocab.json + merges.txt (byte-level BPE, the slow "
    "RobertaTokenizer), a SentencePiece model: sentencepiece.bpe.model, spiece.model, sentencepiece.model or "
    "tokenizer.model (Unigram, the slow XLMRobertaTokenizer / AlbertTokenizer), or tokenizer.json (the fast "
    "tokenizer: WordPiece, BPE or Unigram)";

// What the slow BPE and SentencePiece loaders share: the added tokens, checked against config.json's
// vocab_size, and the ids of the template's specials (an added token's, else the vocabulary's);
// ModelError naming `file` when one has neither.
struct SlowSpecialIds {
  std::vector<detail::SlowAddedToken> added;
  int32_t cls = 0, sep = 0, pad = 0, unk = 0;
};

SlowSpecialIds slow_special_ids(const std::filesystem::path& dir, const std::filesystem::path& file,
                                const SlowSpecials& s, const Vocab& vocab, const BertConfig& model) {
  SlowSpecialIds out;
  out.added = slow_added(dir, s, [&](const std::string& tok) { return vocab.find(tok); });
  int64_t max_id = static_cast<int64_t>(vocab.size()) - 1;
  for (const auto& a : out.added) max_id = std::max<int64_t>(max_id, a.id);
  if (max_id >= model.vocab_size)
    throw ModelError(file.string() + ": token id " + std::to_string(max_id) + " but config.json says vocab_size " +
                     std::to_string(model.vocab_size));
  auto id_of = [&](const std::string& tok, const char* what) {
    for (const auto& a : out.added)
      if (a.content == tok) return a.id;
    const int32_t id = vocab.find(tok);
    if (id < 0) throw ModelError(file.string() + ": " + what + " '" + tok + "' is not in the vocabulary");
    return id;
  };
  out.cls = id_of(s.cls, "cls_token");
  out.sep = id_of(s.sep, "sep_token");
  out.pad = id_of(s.pad, "pad_token");
  out.unk = id_of(s.unk, "unk_token");
  return out;
}

// The special-token strings of a slow tokenizer in its TokenizerConfig.
void set_special_strings(TokenizerConfig& c, const SlowSpecials& s) {
  c.cls_token = s.cls;
  c.sep_token = s.sep;
  c.pad_token = s.pad;
  c.unk_token = s.unk;
  c.mask_token = s.mask;
}

}  // namespace

bool has_tokenizer_file(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  return fs::exists(dir / "vocab.txt") || fs::exists(dir / "tokenizer.json") || !sentencepiece_file(dir).empty() ||
         (fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt"));
}

std::string tokenizer_files_wanted() { return kFilesWanted; }

TokenizerFile tokenizer_file_named(const std::string& choice) {
  if (choice == "auto") return TokenizerFile::Auto;
  if (choice == "slow") return TokenizerFile::Slow;
  if (choice == "tokenizer.json") return TokenizerFile::TokenizerJson;
  throw Error("tokenizer '" + choice + "': expected auto, slow or tokenizer.json");
}

const char* to_string(SubwordKind kind) {
  switch (kind) {
    case SubwordKind::WordPiece: return "WordPiece";
    case SubwordKind::ByteLevelBpe: return "byte-level BPE";
    case SubwordKind::Unigram: return "Unigram";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
Vocab::Vocab(const std::vector<std::pair<std::string, int32_t>>& entries) {
  int32_t max_id = -1;
  for (const auto& e : entries) max_id = std::max(max_id, e.second);
  tokens_.resize(static_cast<std::size_t>(max_id + 1));
  ids_.reserve(entries.size());
  for (const auto& e : entries) {
    tokens_[static_cast<std::size_t>(e.second)] = e.first;
    ids_[e.first] = e.second;
  }
}

Vocab::Vocab(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  ids_.reserve(tokens_.size());
  for (std::size_t i = 0; i < tokens_.size(); ++i) ids_[tokens_[i]] = static_cast<int32_t>(i);
}

Vocab Vocab::load(const std::filesystem::path& vocab_txt) {
  std::ifstream in(vocab_txt, std::ios::binary);
  if (!in) throw ModelError(vocab_txt.string() + ": cannot open vocabulary file");
  std::vector<std::string> tokens;
  std::string line;
  while (std::getline(in, line)) tokens.push_back(line);  // HF strips only "\n"
  if (tokens.empty()) throw ModelError(vocab_txt.string() + ": vocabulary file is empty");
  return Vocab(std::move(tokens));
}

int32_t Vocab::find(std::string_view token) const {
  auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

// ---------------------------------------------------------------------------------------------
Tokenizer::Tokenizer(Vocab vocab, TokenizerConfig config) : Tokenizer(std::move(vocab), std::move(config), "bert") {}

Tokenizer::Tokenizer(Vocab vocab, TokenizerConfig config, const std::string& model_type,
                     std::vector<std::string> extra_specials)
    : vocab_(std::move(vocab)), config_(std::move(config)) {
  auto need = [&](const std::string& tok) {
    int32_t id = vocab_.find(tok);
    if (id < 0) throw ModelError("vocabulary has no special token '" + tok + "'");
    return id;
  };
  cls_id_ = need(config_.cls_token);
  sep_id_ = need(config_.sep_token);
  pad_id_ = need(config_.pad_token);
  need(config_.unk_token);
  std::vector<std::string> candidates = {config_.unk_token, config_.sep_token, config_.pad_token,
                                         config_.cls_token, config_.mask_token};
  candidates.insert(candidates.end(), extra_specials.begin(), extra_specials.end());
  std::vector<std::string> specials;
  for (const auto& t : candidates) {  // a special the vocabulary lacks cannot be given an id: not split out
    const int32_t id = vocab_.find(t);
    if (id < 0 || t.empty() || std::find(specials.begin(), specials.end(), t) != specials.end()) continue;
    specials.push_back(t);
  }
  const bool roberta = uses_roberta_template(model_type);
  template_ = roberta ? PairTemplate::roberta(config_.cls_token, cls_id_, config_.sep_token, sep_id_)
                      : PairTemplate::bert(config_.cls_token, cls_id_, config_.sep_token, sep_id_);
  source_ = std::string("vocab.txt (WordPiece, ") + (roberta ? "RoBERTa" : "BERT") + " template)";
  model_ = std::make_shared<detail::WordPieceModel>(vocab_, config_, std::move(specials));
}

Tokenizer Tokenizer::from_model_dir(const std::filesystem::path& dir, const BertConfig& model, TokenizerFile file) {
  const auto vocab_txt = dir / "vocab.txt", tokenizer_json = dir / "tokenizer.json";
  const auto vocab_json = dir / "vocab.json", merges_txt = dir / "merges.txt";
  const auto spm = sentencepiece_file(dir);
  const bool has_merges = std::filesystem::exists(vocab_json) && std::filesystem::exists(merges_txt);
  if (file == TokenizerFile::Auto || file == TokenizerFile::Slow) {
    if (std::filesystem::exists(vocab_txt)) file = TokenizerFile::VocabTxt;
    else if (has_merges) file = TokenizerFile::VocabMerges;
    else if (!spm.empty()) file = TokenizerFile::SentencePiece;
    else if (file == TokenizerFile::Auto && std::filesystem::exists(tokenizer_json)) file = TokenizerFile::TokenizerJson;
    else
      throw ModelError(dir.string() + ": no " + (file == TokenizerFile::Slow ? "slow " : "") +
                       "tokenizer file: attnscan reads " + kFilesWanted + "; none is there");
  }
  switch (file) {
    case TokenizerFile::TokenizerJson:
      if (!std::filesystem::exists(tokenizer_json))
        throw ModelError(tokenizer_json.string() + ": missing from the model directory");
      return from_tokenizer_json(tokenizer_json, model, load_tokenizer_config(dir, model));
    case TokenizerFile::VocabMerges:
      for (const auto& f : {vocab_json, merges_txt})
        if (!std::filesystem::exists(f))
          throw ModelError(f.string() + ": missing from the model directory (the slow byte-level BPE tokenizer "
                           "reads vocab.json and merges.txt)");
      return from_vocab_merges(dir, model);
    case TokenizerFile::SentencePiece:
      if (spm.empty())
        throw ModelError(dir.string() + ": no SentencePiece model (sentencepiece.bpe.model, spiece.model, "
                         "sentencepiece.model or tokenizer.model) in the model directory");
      return from_sentencepiece(dir, spm, model);
    default: break;
  }
  if (!std::filesystem::exists(vocab_txt)) throw ModelError(vocab_txt.string() + ": missing from the model directory");
  auto vocab = Vocab::load(vocab_txt);
  if (static_cast<int64_t>(vocab.size()) > model.vocab_size)
    throw ModelError(vocab_txt.string() + ": " + std::to_string(vocab.size()) +
                     " tokens but config.json says vocab_size " + std::to_string(model.vocab_size));
  return Tokenizer(std::move(vocab), load_tokenizer_config(dir, model), model.model_type, slow_added_tokens(dir));
}

Tokenizer Tokenizer::from_tokenizer_json(const std::filesystem::path& tokenizer_json, const BertConfig& model,
                                         TokenizerConfig config) {
  auto p = std::make_shared<detail::FastPipeline>(detail::read_tokenizer_json(tokenizer_json));
  const std::string where = tokenizer_json.string();
  int64_t max_id = static_cast<int64_t>(p->vocab.size()) - 1;
  for (const auto& a : p->added) max_id = std::max<int64_t>(max_id, a.id);
  if (max_id >= model.vocab_size)
    throw ModelError(where + ": token id " + std::to_string(max_id) + " but config.json says vocab_size " +
                     std::to_string(model.vocab_size));
  Tokenizer t;
  auto find = [&](const std::string& tok) -> int32_t {
    for (const auto& a : p->added)
      if (a.content == tok) return a.id;
    return p->vocab.find(tok);
  };
  if (!std::filesystem::exists(tokenizer_json.parent_path() / "tokenizer_config.json") && p->pad_token)
    config.pad_token = *p->pad_token;
  if (p->model == SubwordKind::WordPiece) config.unk_token = p->unk_token;
  else if (p->model == SubwordKind::Unigram && p->unigram_unk) config.unk_token = p->unk_token;
  else if (p->bpe_unk) config.unk_token = *p->bpe_unk;
  const auto& tpl = p->pair_template;
  if (!tpl.prefix.empty()) config.cls_token = tpl.prefix.front().token;
  if (!tpl.suffix.empty()) config.sep_token = tpl.suffix.back().token;
  t.cls_id_ = tpl.prefix.empty() ? find(config.cls_token) : tpl.prefix.front().id;
  t.sep_id_ = tpl.suffix.empty() ? find(config.sep_token) : tpl.suffix.back().id;
  t.pad_id_ = find(config.pad_token);
  if (t.pad_id_ < 0)
    throw ModelError(where + ": pad token '" + config.pad_token + "' (from tokenizer_config.json) is not in the vocab");
  t.template_ = tpl;
  t.truncation_ = LongestFirst::Tokenizers;
  t.source_ = p->description;
  t.kind_ = p->model;
  t.vocab_ = p->vocab;
  if (p->model != SubwordKind::WordPiece && !p->added_outside_vocab.empty()) {  // added ids the model vocab lacks
    std::vector<std::pair<std::string, int32_t>> entries;
    for (int32_t id = 0; id < static_cast<int32_t>(p->vocab.size()); ++id) entries.emplace_back(p->vocab.token(id), id);
    for (const auto& [id, content] : p->added_outside_vocab) entries.emplace_back(content, id);
    t.vocab_ = Vocab(entries);
  }
  t.config_ = std::move(config);
  if (p->model == SubwordKind::WordPiece) t.model_ = std::make_shared<detail::WordPieceModel>(std::move(p));
  else t.model_ = std::make_shared<detail::FastSubwordModel>(std::move(p));
  return t;
}

Tokenizer Tokenizer::from_vocab_merges(const std::filesystem::path& dir, const BertConfig& model) {
  const auto vocab_json = dir / "vocab.json", merges_txt = dir / "merges.txt";
  const auto j = read_json_file(vocab_json);
  if (!j.is_object() || j.empty()) throw ModelError(vocab_json.string() + ": expected a non-empty object of token -> id");
  std::vector<std::pair<std::string, int32_t>> entries;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() >= model.vocab_size)
      throw ModelError(vocab_json.string() + ": id of '" + it.key() + "' is not an integer in 0.." +
                       std::to_string(model.vocab_size - 1) + " (config.json's vocab_size " +
                       std::to_string(model.vocab_size) + ")");
    entries.emplace_back(it.key(), it.value().get<int32_t>());
  }
  // merges.txt as RobertaTokenizer reads it: the first line (#version) and the last (empty after the
  // final newline) are skipped; a line that is not two tokens never matches a pair.
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
    std::vector<std::string> parts;
    for (const auto& w : detail::python_split_utf8(lines[i])) parts.push_back(w);
    if (parts.size() == 2) merges.emplace_back(parts[0], parts[1]);
    else merges.emplace_back("\x01" + lines[i], "\x01");  // keeps the ranks of the lines after it
  }
  Tokenizer t;
  t.kind_ = SubwordKind::ByteLevelBpe;
  t.vocab_ = Vocab(entries);
  const auto s = slow_specials(dir, {"<s>", "</s>", "<pad>", "<unk>", "<mask>", "<s>", "</s>"});
  auto ids = slow_special_ids(dir, vocab_json, s, t.vocab_, model);
  bool add_prefix_space = false;
  if (std::filesystem::exists(dir / "tokenizer_config.json")) {
    const auto c = read_json_file(dir / "tokenizer_config.json");
    if (c.is_object() && c.contains("add_prefix_space") && c["add_prefix_space"].is_boolean())
      add_prefix_space = c["add_prefix_space"].get<bool>();
  }
  t.config_ = load_tokenizer_config(dir, model);
  t.config_.do_lower_case = false;
  set_special_strings(t.config_, s);
  t.cls_id_ = ids.cls;
  t.sep_id_ = ids.sep;
  t.pad_id_ = ids.pad;
  const int32_t unk_id = ids.unk;
  // RobertaTokenizer.build_inputs_with_special_tokens: `<s> A </s></s> B </s>` whatever the family
  t.template_ = PairTemplate::roberta(s.cls, t.cls_id_, s.sep, t.sep_id_);
  t.source_ = std::string("vocab.json + merges.txt (byte-level BPE, RobertaTokenizer") +
              (add_prefix_space ? ", add_prefix_space" : "") + ", RoBERTa template)";
  t.model_ = std::make_shared<detail::RobertaSlowModel>(t.vocab_, detail::BpeMerges(merges), std::move(ids.added), unk_id,
                                                        add_prefix_space);
  return t;
}

Tokenizer Tokenizer::from_sentencepiece(const std::filesystem::path& dir, const std::filesystem::path& model_file,
                                        const BertConfig& model) {
  using Slow = detail::SentencePieceSlow;
  Slow::Options o;
  std::string tokenizer_class;  // tokenizer_config.json's, for families the model_type does not name
  if (std::filesystem::exists(dir / "tokenizer_config.json")) {
    const auto c = read_json_file(dir / "tokenizer_config.json");
    if (c.is_object() && c.contains("tokenizer_class") && c["tokenizer_class"].is_string())
      tokenizer_class = c["tokenizer_class"].get<std::string>();
  }
  if (model.model_type == "xlm-roberta" || (model.model_type != "albert" && tokenizer_class == "XLMRobertaTokenizer")) {
    o.flavour = Slow::Flavour::XlmRoberta;
  } else if (model.model_type == "albert" || tokenizer_class == "AlbertTokenizer") {
    o.flavour = Slow::Flavour::Albert;
    o.do_lower_case = true;
    if (std::filesystem::exists(dir / "tokenizer_config.json")) {
      const auto c = read_json_file(dir / "tokenizer_config.json");
      const auto file = dir / "tokenizer_config.json";
      if (c.is_object()) {
        o.do_lower_case = config_fields::field_or<bool>(c, file, "do_lower_case", true);
        o.remove_space = config_fields::field_or<bool>(c, file, "remove_space", true);
        o.keep_accents = config_fields::field_or<bool>(c, file, "keep_accents", false);
      }
    }
  } else {
    throw ModelError(model_file.string() + ": the slow SentencePiece tokenizer of model_type '" + model.model_type +
                     "' is not supported yet (supported: xlm-roberta as XLMRobertaTokenizer, albert as "
                     "AlbertTokenizer); set tokenizer: tokenizer.json to read that file instead");
  }
  const bool albert = o.flavour == Slow::Flavour::Albert;
  const auto s = albert ? slow_specials(dir, {"[CLS]", "[SEP]", "<pad>", "<unk>", "[MASK]", "[CLS]", "[SEP]"})
                        : slow_specials(dir, {"<s>", "</s>", "<pad>", "<unk>", "<mask>", "<s>", "</s>"});
  if (albert) o.lowercase_skip = {s.bos, s.eos, s.unk, s.sep, s.pad, s.cls, s.mask};
  auto sp = detail::load_sentencepiece_slow(model_file, o);
  Tokenizer t;
  t.kind_ = SubwordKind::Unigram;
  t.vocab_ = sp->vocab();
  auto ids = slow_special_ids(dir, model_file, s, t.vocab_, model);
  t.config_ = load_tokenizer_config(dir, model);
  t.config_.do_lower_case = albert && o.do_lower_case;
  set_special_strings(t.config_, s);
  t.cls_id_ = ids.cls;
  t.sep_id_ = ids.sep;
  t.pad_id_ = ids.pad;
  t.template_ = albert ? PairTemplate::bert(s.cls, t.cls_id_, s.sep, t.sep_id_)
                       : PairTemplate::roberta(s.cls, t.cls_id_, s.sep, t.sep_id_);
  t.source_ = model_file.filename().string() + " (Unigram, SentencePiece, " +
              (albert ? "AlbertTokenizer, BERT" : "XLMRobertaTokenizer, RoBERTa") + " template)";
  sp->set_added(std::move(ids.added));
  t.model_ = std::move(sp);
  return t;
}

SentenceTokens Tokenizer::tokenize(std::string_view text) const { return model_->tokenize(text); }

Encoding Tokenizer::assemble(const SentenceTokens& a, const SentenceTokens* b,
                                      std::size_t max_length) const {
  if (max_length == 0) max_length = static_cast<std::size_t>(config_.model_max_length);
  const std::size_t n_special = template_.added(b != nullptr);
  if (max_length < n_special + (b ? 0 : 1))
    throw Error("max_length " + std::to_string(max_length) + " leaves no room for any token");
  std::size_t len_a = a.ids.size(), len_b = b ? b->ids.size() : 0;
  Encoding e;
  const std::size_t total = len_a + len_b + n_special;
  if (total > max_length) {
    const std::size_t remove = total - max_length;
    e.truncated = true;
    if (!b) {
      if (len_a <= remove) throw Error("max_length too small to keep any token of the sentence");
      e.removed_a = remove;
    } else if (truncation_ == LongestFirst::Transformers) {  // transformers' truncate_sequences
      std::size_t diff = len_a > len_b ? len_a - len_b : len_b - len_a;
      std::size_t first = std::min(diff, remove), second = remove - first;
      if (len_a > len_b) {
        e.removed_a = first + second / 2;
        e.removed_b = second - second / 2;
      } else {
        e.removed_a = second / 2;
        e.removed_b = first + second - second / 2;
      }
    } else {  // tokenizers' truncate_encodings, LongestFirst
      const std::size_t budget = max_length - n_special;
      std::size_t n1 = std::min(len_a, len_b), n2 = std::max(len_a, len_b);
      n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
      if (n1 + n2 > budget) {
        n1 = budget / 2;
        n2 = n1 + budget % 2;
      }
      const std::size_t keep_a = std::min(len_a, len_a > len_b ? n2 : n1);
      const std::size_t keep_b = std::min(len_b, len_a > len_b ? n1 : n2);
      e.removed_a = len_a - keep_a;
      e.removed_b = len_b - keep_b;
    }
    len_a -= e.removed_a;
    len_b -= e.removed_b;
  }
  e.tokens_a = len_a;
  e.tokens_b = len_b;
  auto add_specials = [&](const std::vector<TemplateToken>& tokens, uint8_t seg) {
    for (const auto& t : tokens) {
      e.ids.push_back(t.id);
      e.tokens.push_back(t.token);
      e.segment.push_back(seg);
      e.type_ids.push_back(t.type_id);
      e.word_index.push_back(-1);
      e.special.push_back(1);
    }
  };
  auto add_sentence = [&](const SentenceTokens& s, std::size_t n, uint8_t seg, uint8_t type) {
    for (std::size_t i = 0; i < n; ++i) {
      e.ids.push_back(s.ids[i]);
      e.tokens.push_back(s.pieces[i]);
      e.segment.push_back(seg);
      e.type_ids.push_back(type);
      e.word_index.push_back(s.word_index[i]);
      e.special.push_back(s.special[i]);
    }
  };
  e.ids.reserve(len_a + len_b + n_special);
  e.words_a = a.words;
  if (b) {
    add_specials(template_.prefix, 0);
    add_sentence(a, len_a, 0, template_.type_a);
    add_specials(template_.middle, 0);
    add_sentence(*b, len_b, 1, template_.type_b);
    add_specials(template_.suffix, 1);
    e.words_b = b->words;
  } else {
    add_specials(template_.single_prefix, 0);
    add_sentence(a, len_a, 0, template_.single_type_a);
    add_specials(template_.single_suffix, 0);
  }
  return e;
}

Encoding Tokenizer::encode_pair(std::string_view a, std::string_view b,
                                         std::size_t max_length) const {
  SentenceTokens ta = tokenize(a), tb = tokenize(b);
  return assemble(ta, &tb, max_length);
}

Encoding Tokenizer::encode_single(std::string_view a, std::size_t max_length) const {
  SentenceTokens ta = tokenize(a);
  return assemble(ta, nullptr, max_length);
}

SentenceTokens Tokenizer::tokenize_words(const std::vector<std::string>& words) const {
  SentenceTokens out;
  for (std::size_t w = 0; w < words.size(); ++w) {
    const bool space = w > 0 && kind_ == SubwordKind::ByteLevelBpe;
    SentenceTokens t = tokenize(space ? " " + words[w] : words[w]);
    std::string normalised;
    for (const auto& part : t.words) normalised += part;
    out.words.push_back(normalised.empty() ? words[w] : normalised);
    for (std::size_t i = 0; i < t.ids.size(); ++i) {
      out.ids.push_back(t.ids[i]);
      out.pieces.push_back(std::move(t.pieces[i]));
      out.word_index.push_back(static_cast<int32_t>(w));
      out.special.push_back(t.special[i]);
    }
  }
  return out;
}

Encoding Tokenizer::encode_words(const std::vector<std::string>& a, const std::vector<std::string>* b,
                                 std::size_t max_length) const {
  SentenceTokens ta = tokenize_words(a);
  if (!b) return assemble(ta, nullptr, max_length);
  SentenceTokens tb = tokenize_words(*b);
  return assemble(ta, &tb, max_length);
}

}  // namespace attnscan
