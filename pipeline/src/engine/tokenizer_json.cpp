#include "engine/tokenizer_json.hpp"

#include <nlohmann/json.hpp>

#include "attnscan/error.hpp"
#include "engine/fast_text.hpp"
#include "engine/json_file.hpp"
#include "engine/unicode_text.hpp"

namespace attnscan::detail {

namespace {

using nlohmann::json;

constexpr int64_t kMaxVocabId = int64_t{1} << 24;  // ids index a table: refuse absurd ones before allocating

struct Reader {
  std::filesystem::path file;

  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError(file.filename().string() + " (" + file.string() + "): " + what);
  }
  [[noreturn]] void unsupported(const std::string& part, const std::string& type, const std::string& supported) const {
    fail(part + " type '" + type + "' is not supported yet (supported: " + supported + ")");
  }
  std::string type_of(const json& j, const std::string& part) const {
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) fail(part + ": no \"type\" field");
    return j["type"].get<std::string>();
  }
  template <typename T>
  T get(const json& j, const std::string& part, const char* key, T fallback) const {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    try {
      return it->get<T>();
    } catch (const json::exception&) {
      fail(part + ": field '" + key + "' has the wrong type");
    }
  }

  void normalizer(const json& j, std::vector<NormalizerStep>& out) const {
    if (j.is_null()) return;
    const std::string type = type_of(j, "normalizer");
    using K = NormalizerStep::Kind;
    if (type == "Sequence") {
      if (!j.contains("normalizers") || !j["normalizers"].is_array()) fail("normalizer Sequence: no \"normalizers\" list");
      for (const auto& n : j["normalizers"]) normalizer(n, out);
      return;
    }
    NormalizerStep s;
    if (type == "BertNormalizer") {
      s.clean_text = get<bool>(j, "BertNormalizer", "clean_text", true);
      s.handle_chinese_chars = get<bool>(j, "BertNormalizer", "handle_chinese_chars", true);
      s.lowercase = get<bool>(j, "BertNormalizer", "lowercase", true);
      if (j.contains("strip_accents") && !j["strip_accents"].is_null())
        s.strip_accents = get<bool>(j, "BertNormalizer", "strip_accents", false);
    } else if (type == "NFC") {
      s.kind = K::NFC;
    } else if (type == "NFD") {
      s.kind = K::NFD;
    } else if (type == "NFKC") {
      s.kind = K::NFKC;
    } else if (type == "NFKD") {
      s.kind = K::NFKD;
    } else if (type == "Lowercase") {
      s.kind = K::Lowercase;
    } else if (type == "StripAccents") {
      s.kind = K::StripAccents;
    } else {
      unsupported("normalizer", type, "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Sequence");
    }
    out.push_back(s);
  }

  void pre_tokenizer(const json& j, std::vector<PreTokenizerStep>& out) const {
    if (j.is_null()) return;
    const std::string type = type_of(j, "pre_tokenizer");
    if (type == "Sequence") {
      if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
        fail("pre_tokenizer Sequence: no \"pretokenizers\" list");
      for (const auto& n : j["pretokenizers"]) pre_tokenizer(n, out);
    } else if (type == "BertPreTokenizer") {
      out.push_back({PreTokenizerStep::Kind::Bert});
    } else if (type == "WhitespaceSplit") {
      out.push_back({PreTokenizerStep::Kind::WhitespaceSplit});
    } else {
      unsupported("pre_tokenizer", type, "BertPreTokenizer, WhitespaceSplit, Sequence");
    }
  }

  void model(const json& j, FastPipeline& p) const {
    if (!j.is_object()) fail("no \"model\" object");
    if (!j.contains("type")) fail("model has no \"type\" field (an old-format BPE file?); supported: WordPiece");
    const std::string type = type_of(j, "model");
    if (type != "WordPiece") fail("model type '" + type + "' is not supported yet (supported: WordPiece)");
    p.unk_token = get<std::string>(j, "model WordPiece", "unk_token", "[UNK]");
    p.continuing_subword_prefix = get<std::string>(j, "model WordPiece", "continuing_subword_prefix", "##");
    const int64_t max_chars = get<int64_t>(j, "model WordPiece", "max_input_chars_per_word", 100);
    if (max_chars <= 0) fail("model WordPiece: max_input_chars_per_word must be positive");
    p.max_input_chars_per_word = static_cast<std::size_t>(max_chars);
    if (!j.contains("vocab") || !j["vocab"].is_object() || j["vocab"].empty())
      fail("model WordPiece: \"vocab\" must be a non-empty object of token -> id");
    std::vector<std::pair<std::string, int32_t>> entries;
    entries.reserve(j["vocab"].size());
    for (auto it = j["vocab"].begin(); it != j["vocab"].end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0)
        fail("model WordPiece: vocab id of '" + it.key() + "' is not a non-negative integer");
      if (it.value().get<int64_t>() >= kMaxVocabId)
        fail("model WordPiece: vocab id " + std::to_string(it.value().get<int64_t>()) + " of '" + it.key() +
             "' is beyond any vocabulary (at most " + std::to_string(kMaxVocabId) + " ids)");
      entries.emplace_back(it.key(), it.value().get<int32_t>());
    }
    p.vocab = Vocab(entries);
    if (p.vocab.find(p.unk_token) < 0) fail("model WordPiece: unk_token '" + p.unk_token + "' is not in the vocab");
  }

  void added_tokens(const json& j, FastPipeline& p) const {
    if (j.is_null()) return;
    if (!j.is_array()) fail("\"added_tokens\" must be a list");
    for (const auto& t : j) {
      if (!t.is_object() || !t.contains("content") || !t["content"].is_string() || !t.contains("id") ||
          !t["id"].is_number_integer())
        fail("added_tokens: every entry needs \"id\" and \"content\"");
      AddedToken a;
      a.content = t["content"].get<std::string>();
      if (t["id"].get<int64_t>() < 0 || t["id"].get<int64_t>() >= kMaxVocabId)
        fail("added_tokens: id " + t["id"].dump() + " is out of range");
      a.id = t["id"].get<int32_t>();
      const std::string part = "added token '" + a.content + "'";
      if (get<bool>(t, part, "single_word", false)) fail(part + ": single_word is not supported yet");
      a.special = get<bool>(t, part, "special", false);
      a.lstrip = get<bool>(t, part, "lstrip", false);
      a.rstrip = get<bool>(t, part, "rstrip", false);
      a.normalized = get<bool>(t, part, "normalized", !a.special);
      a.pattern = unicode::decode(a.content);
      if (a.normalized) a.pattern = normalize(p.normalizers, a.pattern);
      if (p.vocab.find(a.content) != a.id) p.added_outside_vocab.emplace_back(a.id, a.content);
      p.added.push_back(std::move(a));
    }
  }

  std::pair<std::string, int32_t> token_id(const json& j, const char* key) const {
    const std::string part = std::string("post_processor: \"") + key + "\"";
    if (!j.contains(key) || !j[key].is_array() || j[key].size() != 2 || !j[key][0].is_string() ||
        !j[key][1].is_number_integer())
      fail(part + " must be [token, id]");
    return {j[key][0].get<std::string>(), j[key][1].get<int32_t>()};
  }

  // TemplateProcessing: special tokens, A (and B) each once and in that order.
  void template_side(const json& j, const json& specials, bool pair, PairTemplate& t) const {
    const std::string part = std::string("post_processor TemplateProcessing \"") + (pair ? "pair" : "single") + "\"";
    if (!j.is_array()) fail(part + " must be a list");
    int seen = 0;  // sequences seen so far
    for (const auto& piece : j) {
      if (piece.contains("Sequence")) {
        const auto& s = piece["Sequence"];
        const std::string id = get<std::string>(s, part, "id", "");
        if (id != (seen == 0 ? "A" : "B") || seen == (pair ? 2 : 1))
          fail(part + ": sequences other than A" + (pair ? " then B" : "") + " are not supported");
        const auto type = static_cast<uint8_t>(get<int>(s, part, "type_id", 0));
        if (!pair) t.single_type_a = type;
        else (seen == 0 ? t.type_a : t.type_b) = type;
        ++seen;
      } else if (piece.contains("SpecialToken")) {
        const auto& s = piece["SpecialToken"];
        const std::string id = get<std::string>(s, part, "id", "");
        const auto type = static_cast<uint8_t>(get<int>(s, part, "type_id", 0));
        if (!specials.is_object() || !specials.contains(id)) fail(part + ": special token '" + id + "' is not in special_tokens");
        const auto& sp = specials[id];
        if (!sp.contains("ids") || !sp.contains("tokens") || !sp["ids"].is_array() || !sp["tokens"].is_array() ||
            sp["ids"].size() != sp["tokens"].size())
          fail("post_processor TemplateProcessing special_tokens '" + id + "': needs \"ids\" and \"tokens\" of equal length");
        auto& dst = pair ? (seen == 0 ? t.prefix : seen == 1 ? t.middle : t.suffix)
                         : (seen == 0 ? t.single_prefix : t.single_suffix);
        for (std::size_t k = 0; k < sp["ids"].size(); ++k)
          dst.push_back({sp["tokens"][k].get<std::string>(), sp["ids"][k].get<int32_t>(), type});
      } else {
        fail(part + ": unknown template piece " + piece.dump());
      }
    }
    if (seen != (pair ? 2 : 1)) fail(part + ": must contain sequence A" + std::string(pair ? " and B" : ""));
  }

  std::string post_processor(const json& j, PairTemplate& t) const {
    if (j.is_null())
      fail("post_processor is null: attnscan needs the special tokens around the sentences "
           "(supported: BertProcessing, RobertaProcessing, TemplateProcessing)");
    const std::string type = type_of(j, "post_processor");
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      auto [cls, cls_id] = token_id(j, "cls");
      auto [sep, sep_id] = token_id(j, "sep");
      t = type == "BertProcessing" ? PairTemplate::bert(cls, cls_id, sep, sep_id)
                                   : PairTemplate::roberta(cls, cls_id, sep, sep_id);
    } else if (type == "TemplateProcessing") {
      t = PairTemplate{};
      t.name = "TemplateProcessing";
      template_side(j.value("single", json()), j.value("special_tokens", json()), false, t);
      template_side(j.value("pair", json()), j.value("special_tokens", json()), true, t);
    } else {
      unsupported("post_processor", type, "BertProcessing, RobertaProcessing, TemplateProcessing");
    }
    return type;
  }
};

}  // namespace

FastPipeline read_tokenizer_json(const std::filesystem::path& file) {
  Reader r{file};
  const json j = read_json_file(file);
  if (!j.is_object()) r.fail("expected a JSON object");
  FastPipeline p;
  r.normalizer(j.value("normalizer", json()), p.normalizers);
  r.pre_tokenizer(j.value("pre_tokenizer", json()), p.pre_tokenizers);
  r.model(j.value("model", json()), p);
  r.added_tokens(j.value("added_tokens", json()), p);
  const std::string post = r.post_processor(j.value("post_processor", json()), p.pair_template);
  // truncation/padding: transformers replaces both with the caller's settings, and so does attnscan.
  if (j.contains("padding") && j["padding"].is_object() && j["padding"].contains("pad_token") &&
      j["padding"]["pad_token"].is_string())
    p.pad_token = j["padding"]["pad_token"].get<std::string>();
  p.description = "tokenizer.json (WordPiece, " + post + ")";
  return p;
}

std::vector<std::string> added_token_contents(const std::filesystem::path& tokenizer_json) {
  const json j = read_json_file(tokenizer_json);
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains("added_tokens") || !j["added_tokens"].is_array()) return out;
  for (const auto& t : j["added_tokens"])
    if (t.is_object() && t.contains("content") && t["content"].is_string()) out.push_back(t["content"].get<std::string>());
  return out;
}

}  // namespace attnscan::detail
