#include "tokenizer/files/tokenizer_json.hpp"

#include <algorithm>

#include <cctype>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "tokenizer/fast_text.hpp"
#include "common/json_file.hpp"
#include "tokenizer/files/recipes.hpp"
#include "tokenizer/normalizers/precompiled_charsmap.hpp"
#include "tokenizer/pre_tokenizers/split_regex.hpp"
#include "tokenizer/unicode_text.hpp"

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
    } else if (type == "Precompiled") {
      s.kind = K::Precompiled;
      const auto blob = get<std::string>(j, "normalizer Precompiled", "precompiled_charsmap", "");
      if (blob.empty()) return;  // tokenizers treats an empty charsmap as no normalization
      try {
        s.charsmap = std::make_shared<PrecompiledCharsmap>(base64_decode(blob));
      } catch (const std::runtime_error& e) {
        fail(std::string("normalizer Precompiled: ") + e.what());
      }
    } else if (type == "Replace") {
      s.kind = K::Replace;
      replace_pattern(j, s);
    } else if (type == "Strip") {
      s.kind = K::Strip;
      s.strip_left = get<bool>(j, "normalizer Strip", "strip_left", true);
      s.strip_right = get<bool>(j, "normalizer Strip", "strip_right", true);
    } else if (type == "Prepend") {
      s.kind = K::Prepend;
      if (!j.contains("prepend") || !j["prepend"].is_string()) fail("normalizer Prepend: needs a string \"prepend\"");
      s.content = unicode::decode(j["prepend"].get<std::string>());
    } else {
      unsupported("normalizer", type,
                  "BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Precompiled, Replace, Strip, Prepend, "
                  "Sequence");
    }
    out.push_back(s);
  }

  // Replace's pattern: {"String": s} or {"Regex": r} where r is a literal or one (escaped) character
  // with a quantifier (+, *, {n}, {n,}, {n,m}); other regexes are refused by name.
  void replace_pattern(const json& j, NormalizerStep& s) const {
    if (!j.contains("pattern") || !j["pattern"].is_object() || !j.contains("content") || !j["content"].is_string())
      fail("normalizer Replace: needs \"pattern\" ({\"String\": ...} or {\"Regex\": ...}) and \"content\"");
    s.content = unicode::decode(j["content"].get<std::string>());
    const auto& p = j["pattern"];
    if (p.contains("String") && p["String"].is_string()) {
      s.find = unicode::decode(p["String"].get<std::string>());
      if (s.find.empty()) s.kind = NormalizerStep::Kind::Strip;  // an empty pattern matches nothing: a no-op
      return;
    }
    if (!p.contains("Regex") || !p["Regex"].is_string()) fail("normalizer Replace: pattern must be String or Regex");
    const std::string regex = p["Regex"].get<std::string>();
    const std::u32string r = unicode::decode(regex);
    const std::u32string meta = U".^$|()[]{}*+?\\";
    auto refuse = [&] {
      fail("normalizer Replace: regex pattern '" + regex + "' is not supported yet (supported: a literal, or one "
           "character with +, *, {n}, {n,} or {n,m})");
    };
    std::size_t i = 0;
    char32_t c = 0;
    if (r.empty()) refuse();
    if (r[0] == U'\\') {
      if (r.size() < 2 || std::isalnum(static_cast<int>(r[1] < 128 ? r[1] : 'a'))) refuse();
      c = r[1];
      i = 2;
    } else {
      if (meta.find(r[0]) != std::u32string::npos) refuse();
      c = r[0];
      i = 1;
    }
    if (i == r.size()) {  // one literal character
      s.find = std::u32string(1, c);
      return;
    }
    const std::u32string q = r.substr(i);
    auto number = [&](const std::u32string& t) -> std::size_t {
      if (t.empty() || t.size() > 6) refuse();
      std::size_t v = 0;
      for (char32_t d : t) {
        if (d < U'0' || d > U'9') refuse();
        v = v * 10 + (d - U'0');
      }
      return v;
    };
    s.repeat_char = c;
    if (q == U"+") {
      s.min_repeat = 1;
    } else if (q == U"*") {
      refuse();  // matches the empty string everywhere: not supported
    } else if (q.size() >= 3 && q.front() == U'{' && q.back() == U'}') {
      const std::u32string body = q.substr(1, q.size() - 2);
      const auto comma = body.find(U',');
      if (comma == std::u32string::npos) {
        s.min_repeat = s.max_repeat = number(body);
      } else {
        s.min_repeat = number(body.substr(0, comma));
        s.max_repeat = comma + 1 == body.size() ? 0 : number(body.substr(comma + 1));
      }
      if (s.min_repeat == 0 || (s.max_repeat != 0 && s.max_repeat < s.min_repeat)) refuse();
    } else {
      bool literal = true;  // no metacharacter at all: a literal string
      for (char32_t d : r) literal = literal && meta.find(d) == std::u32string::npos;
      if (!literal) refuse();
      s.find = r;
      s.repeat_char = 0;
    }
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
    } else if (type == "ByteLevel") {
      PreTokenizerStep s{PreTokenizerStep::Kind::ByteLevel};
      s.add_prefix_space = get<bool>(j, "pre_tokenizer ByteLevel", "add_prefix_space", true);
      s.use_regex = get<bool>(j, "pre_tokenizer ByteLevel", "use_regex", true);
      get<bool>(j, "pre_tokenizer ByteLevel", "trim_offsets", true);  // offsets only: no effect on ids
      out.push_back(s);
    } else if (type == "Metaspace") {
      PreTokenizerStep s{PreTokenizerStep::Kind::Metaspace};
      const std::string part = "pre_tokenizer Metaspace";
      const auto rep = unicode::decode(get<std::string>(j, part, "replacement", "\u2581"));
      if (rep.size() != 1) fail(part + ": replacement must be one character");
      s.replacement = rep[0];
      s.split = get<bool>(j, part, "split", true);
      const std::string scheme = get<std::string>(j, part, "prepend_scheme", "always");
      using P = PreTokenizerStep::Prepend;
      if (scheme == "always") s.prepend = P::Always;
      else if (scheme == "first") s.prepend = P::First;
      else if (scheme == "never") s.prepend = P::Never;
      else fail(part + ": prepend_scheme '" + scheme + "' is not one of always, first, never");
      if (j.contains("add_prefix_space") && !j["add_prefix_space"].is_null() &&
          !get<bool>(j, part, "add_prefix_space", true)) {
        if (s.prepend != P::Never && j.contains("prepend_scheme"))
          fail(part + ": add_prefix_space false does not match prepend_scheme '" + scheme + "'");
        s.prepend = P::Never;
      }
      out.push_back(s);
    } else if (type == "Split") {
      out.push_back(split(j));
    } else if (type == "Digits") {
      PreTokenizerStep s{PreTokenizerStep::Kind::Digits};
      s.individual_digits = get<bool>(j, "pre_tokenizer Digits", "individual_digits", false);
      out.push_back(s);
    } else {
      unsupported("pre_tokenizer", type, "BertPreTokenizer, WhitespaceSplit, ByteLevel, Metaspace, Split, Digits, Sequence");
    }
  }

  // Split: {"pattern": {"Regex": r} | {"String": s}, "behavior", "invert"}.
  PreTokenizerStep split(const json& j) const {
    const std::string part = "pre_tokenizer Split";
    PreTokenizerStep s{PreTokenizerStep::Kind::Split};
    const json pattern = j.value("pattern", json());
    const bool regex = pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string();
    if (!regex && !(pattern.is_object() && pattern.contains("String") && pattern["String"].is_string()))
      fail(part + ": field 'pattern' must be {\"Regex\": ...} or {\"String\": ...}");
    const std::string text = pattern[regex ? "Regex" : "String"].get<std::string>();
    try {
      s.pattern = regex ? SplitRegex::regex(text) : SplitRegex::literal(text);
    } catch (const std::invalid_argument& e) {
      fail(part + ": field 'pattern.Regex' '" + text + "' is not a valid regex: " + e.what());
    }
    const std::string behavior = get<std::string>(j, part, "behavior", "");
    using B = PreTokenizerStep::SplitBehavior;
    const std::pair<const char*, B> behaviors[] = {{"Removed", B::Removed}, {"Isolated", B::Isolated},
                                                   {"MergedWithPrevious", B::MergedWithPrevious},
                                                   {"MergedWithNext", B::MergedWithNext}, {"Contiguous", B::Contiguous}};
    bool known = false;
    for (const auto& [name, b] : behaviors)
      if (behavior == name) s.behavior = b, known = true;
    if (!known)
      fail(part + ": field 'behavior' '" + behavior +
           "' is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
    s.invert = get<bool>(j, part, "invert", false);
    return s;
  }

  void model(const json& j, FastPipeline& p) const;

  // token -> id object of a model.
  Vocab vocab_object(const json& j, const std::string& part) const {
    if (!j.contains("vocab") || !j["vocab"].is_object() || j["vocab"].empty())
      fail(part + ": \"vocab\" must be a non-empty object of token -> id");
    std::vector<std::pair<std::string, int32_t>> entries;
    entries.reserve(j["vocab"].size());
    for (auto it = j["vocab"].begin(); it != j["vocab"].end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0)
        fail(part + ": vocab id of '" + it.key() + "' is not a non-negative integer");
      if (it.value().get<int64_t>() >= kMaxVocabId)
        fail(part + ": vocab id " + std::to_string(it.value().get<int64_t>()) + " of '" + it.key() +
             "' is beyond any vocabulary (at most " + std::to_string(kMaxVocabId) + " ids)");
      entries.emplace_back(it.key(), it.value().get<int32_t>());
    }
    return Vocab(entries);
  }

  void wordpiece(const json& j, FastPipeline& p) const {
    p.unk_token = get<std::string>(j, "model WordPiece", "unk_token", "[UNK]");
    p.continuing_subword_prefix = get<std::string>(j, "model WordPiece", "continuing_subword_prefix", "##");
    const int64_t max_chars = get<int64_t>(j, "model WordPiece", "max_input_chars_per_word", 100);
    if (max_chars <= 0) fail("model WordPiece: max_input_chars_per_word must be positive");
    p.max_input_chars_per_word = static_cast<std::size_t>(max_chars);
    p.vocab = vocab_object(j, "model WordPiece");
    if (p.vocab.find(p.unk_token) < 0) fail("model WordPiece: unk_token '" + p.unk_token + "' is not in the vocab");
  }

  void bpe(const json& j, FastPipeline& p) const {
    const std::string part = "model BPE";
    p.model = SubwordKind::ByteLevelBpe;
    if (j.contains("dropout") && !j["dropout"].is_null() && get<double>(j, part, "dropout", 0.0) != 0.0)
      fail(part + ": dropout " + j["dropout"].dump() + " is not supported (only null: attnscan is deterministic)");
    p.byte_fallback = get<bool>(j, part, "byte_fallback", false);
    if (!get<std::string>(j, part, "continuing_subword_prefix", "").empty())
      fail(part + ": continuing_subword_prefix is not supported yet (only empty)");
    if (!get<std::string>(j, part, "end_of_word_suffix", "").empty())
      fail(part + ": end_of_word_suffix is not supported yet (only empty)");
    if (j.contains("unk_token") && !j["unk_token"].is_null()) p.bpe_unk = get<std::string>(j, part, "unk_token", "");
    p.fuse_unk = get<bool>(j, part, "fuse_unk", false);
    p.ignore_merges = get<bool>(j, part, "ignore_merges", false);
    p.vocab = vocab_object(j, part);
    if (p.bpe_unk && p.vocab.find(*p.bpe_unk) < 0) fail(part + ": unk_token '" + *p.bpe_unk + "' is not in the vocab");
    if (!j.contains("merges") || !j["merges"].is_array()) fail(part + ": \"merges\" must be a list");
    for (const auto& m : j["merges"]) {
      if (m.is_string()) {  // "a b"
        const std::string s = m.get<std::string>();
        const auto space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
          fail(part + ": merge '" + s + "' is not two tokens separated by one space");
        p.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {  // ["a", "b"]
        p.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
      } else {
        fail(part + ": merge " + m.dump() + " is neither \"a b\" nor [\"a\", \"b\"]");
      }
      const auto& [a, b] = p.merges.back();
      if (p.vocab.find(a) < 0 || p.vocab.find(b) < 0 || p.vocab.find(a + b) < 0)
        fail(part + ": merge '" + a + " " + b + "' uses a token the vocab lacks");
    }
  }

  void unigram(const json& j, FastPipeline& p) const {
    const std::string part = "model Unigram";
    p.model = SubwordKind::Unigram;
    if (get<bool>(j, part, "byte_fallback", false)) fail(part + ": byte_fallback is not supported yet");
    if (!j.contains("vocab") || !j["vocab"].is_array() || j["vocab"].empty())
      fail(part + ": \"vocab\" must be a non-empty list of [piece, score]");
    if (j["vocab"].size() >= static_cast<std::size_t>(kMaxVocabId)) fail(part + ": vocab is too large");
    std::vector<std::pair<std::string, int32_t>> entries;
    for (const auto& v : j["vocab"]) {
      if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_number())
        fail(part + ": vocab entry " + v.dump().substr(0, 80) + " is not [piece, score]");
      entries.emplace_back(v[0].get<std::string>(), static_cast<int32_t>(entries.size()));
      p.scores.push_back(v[1].get<double>());
    }
    p.vocab = Vocab(entries);
    if (j.contains("unk_id") && !j["unk_id"].is_null()) {
      const int64_t unk = get<int64_t>(j, part, "unk_id", 0);
      if (unk < 0 || unk >= static_cast<int64_t>(entries.size()))
        fail(part + ": unk_id " + std::to_string(unk) + " is outside the vocab");
      p.unigram_unk = static_cast<int32_t>(unk);
      p.unk_token = entries[static_cast<std::size_t>(unk)].first;
    }
  }

  void word_level(const json& j, FastPipeline& p) const {
    const std::string part = "model WordLevel";
    p.model = SubwordKind::WordLevel;
    p.unk_token = get<std::string>(j, part, "unk_token", "<unk>");
    p.vocab = vocab_object(j, part);
    if (p.vocab.find(p.unk_token) < 0) fail(part + ": unk_token '" + p.unk_token + "' is not in the vocab");
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
      a.single_word = get<bool>(t, part, "single_word", false);
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

  // The template (none: nothing added) and ByteLevel's offset trimming; `templates`: processors so far that
  // set the template (a Sequence may hold one).
  std::string post_processor(const json& j, PairTemplate& t, FastPipeline& p, int& templates) const {
    if (j.is_null()) return "no post-processor";
    const std::string type = type_of(j, "post_processor");
    if (type != "Sequence" && type != "ByteLevel" && templates++ > 0)
      fail("post_processor Sequence: more than one processor adding special tokens is not supported");
    if (type == "Sequence") {
      if (!j.contains("processors") || !j["processors"].is_array() || j["processors"].empty())
        fail("post_processor Sequence: no \"processors\" list");
      std::string names;
      for (const auto& q : j["processors"]) names += (names.empty() ? "" : " + ") + post_processor(q, t, p, templates);
      return names;
    }
    if (type == "ByteLevel") {  // offsets only: no tokens added
      p.trim_offsets = get<bool>(j, "post_processor ByteLevel", "trim_offsets", true);
      p.trim_prefix_space = get<bool>(j, "post_processor ByteLevel", "add_prefix_space", true);
    } else if (type == "BertProcessing" || type == "RobertaProcessing") {
      auto [cls, cls_id] = token_id(j, "cls");
      auto [sep, sep_id] = token_id(j, "sep");
      t = type == "BertProcessing" ? PairTemplate::bert(cls, cls_id, sep, sep_id)
                                   : PairTemplate::roberta(cls, cls_id, sep, sep_id);
      if (type == "RobertaProcessing") {  // offsets only: no effect on ids
        p.trim_offsets = get<bool>(j, "post_processor RobertaProcessing", "trim_offsets", true);
        p.trim_prefix_space = get<bool>(j, "post_processor RobertaProcessing", "add_prefix_space", true);
      }
    } else if (type == "TemplateProcessing") {
      t = PairTemplate{};
      t.name = "TemplateProcessing";
      template_side(j.value("single", json()), j.value("special_tokens", json()), false, t);
      template_side(j.value("pair", json()), j.value("special_tokens", json()), true, t);
    } else {
      unsupported("post_processor", type, "BertProcessing, RobertaProcessing, TemplateProcessing, ByteLevel, Sequence");
    }
    return type;
  }
};

// The models of tokenizer.json, one line each: the "type" and the reader of its fields (a new kind:
// its reader here, its per-word model in tokenizer/models/).
struct ModelKind {
  const char* type;
  void (Reader::*read)(const json&, FastPipeline&) const;
};
constexpr ModelKind kModelKinds[] = {
    {"WordPiece", &Reader::wordpiece},
    {"BPE", &Reader::bpe},
    {"Unigram", &Reader::unigram},
    {"WordLevel", &Reader::word_level},
};

std::string model_kinds_supported() {
  std::string out;
  for (const auto& k : kModelKinds) out += (out.empty() ? "" : ", ") + std::string(k.type);
  return out;
}

void Reader::model(const json& j, FastPipeline& p) const {
  if (!j.is_object()) fail("no \"model\" object");
  if (!j.contains("type"))
    fail("model has no \"type\" field (an old-format file?); supported: " + model_kinds_supported());
  const std::string type = type_of(j, "model");
  p.model_type = type;
  for (const auto& k : kModelKinds)
    if (type == k.type) return (this->*k.read)(j, p);
  fail("model type '" + type + "' is not supported yet (supported: " + model_kinds_supported() + ")");
}

// The special tokens' roles (tokenizer.hpp, SpecialTokens): the template's tokens first, then the names
// tokenizer_config.json gives; `find` gives a token's id, -1 when the tokenizer lacks it.
template <typename Find>
SpecialTokens roles_of(const PairTemplate& tpl, const TokenizerConfig& config, Find find) {
  auto id_of = [&](const std::optional<std::string>& name) -> std::optional<int32_t> {
    const int32_t id = name ? find(*name) : -1;
    return id < 0 ? std::nullopt : std::optional<int32_t>(id);
  };
  SpecialTokens s;
  if (!tpl.single_prefix.empty()) s.begin = tpl.single_prefix.front().id;
  else if (!tpl.prefix.empty()) s.begin = tpl.prefix.front().id;
  else s.begin = config.bos_token ? id_of(config.bos_token) : id_of(config.cls_token);
  if (!tpl.single_suffix.empty()) s.end = tpl.single_suffix.back().id;
  else if (!tpl.suffix.empty()) s.end = tpl.suffix.back().id;
  else s.end = config.eos_token ? id_of(config.eos_token) : id_of(config.sep_token);
  if (!tpl.middle.empty() && tpl.middle.front().id != s.begin) s.separator = tpl.middle.front().id;
  s.pad = id_of(config.pad_token);
  return s;
}

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
  int templates = 0;
  p.pair_template.name = "no template";
  const std::string post = r.post_processor(j.value("post_processor", json()), p.pair_template, p, templates);
  // truncation/padding: transformers replaces both with the caller's settings, and so does attnscan.
  if (j.contains("padding") && j["padding"].is_object() && j["padding"].contains("pad_token") &&
      j["padding"]["pad_token"].is_string())
    p.pad_token = j["padding"]["pad_token"].get<std::string>();
  for (const auto& step : p.pre_tokenizers) p.byte_level = p.byte_level || step.kind == PreTokenizerStep::Kind::ByteLevel;
  if (p.model == SubwordKind::ByteLevelBpe && !p.byte_level) p.model = SubwordKind::Bpe;  // over characters (Llama 2, Gemma)
  if (p.model != SubwordKind::ByteLevelBpe && p.byte_level)
    r.fail("pre_tokenizer ByteLevel with model " + p.model_type + " is not supported (supported: with BPE)");
  p.description = "tokenizer.json (" + (p.model == SubwordKind::ByteLevelBpe ? std::string("byte-level BPE") : p.model_type) +
                  (p.byte_fallback ? " with byte_fallback" : "") + ", " + post + ")";
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

TokenizerParts tokenizer_json_recipe(const std::filesystem::path& tokenizer_json, const TokenizerFacts& facts,
                                     TokenizerConfig config, bool has_config) {
  auto p = std::make_shared<FastPipeline>(read_tokenizer_json(tokenizer_json));
  const std::string where = tokenizer_json.string();
  int64_t max_id = static_cast<int64_t>(p->vocab.size()) - 1;
  for (const auto& a : p->added) max_id = std::max<int64_t>(max_id, a.id);
  check_vocab_size(max_id, facts, tokenizer_json);
  auto find = [&](const std::string& tok) -> int32_t {
    for (const auto& a : p->added)
      if (a.content == tok) return a.id;
    return p->vocab.find(tok);
  };
  if (!has_config && p->pad_token) config.pad_token = *p->pad_token;
  if (p->model == SubwordKind::WordPiece) config.unk_token = p->unk_token;
  else if (p->model == SubwordKind::Unigram && p->unigram_unk) config.unk_token = p->unk_token;
  else if (p->bpe_unk) config.unk_token = *p->bpe_unk;
  const auto& tpl = p->pair_template;
  if (!tpl.prefix.empty()) config.cls_token = tpl.prefix.front().token;
  if (!tpl.suffix.empty()) config.sep_token = tpl.suffix.back().token;
  TokenizerParts t;
  t.specials = roles_of(tpl, config, find);
  if (!t.specials.pad && (config.pad_named || (!has_config && p->pad_token)))
    throw ModelError(where + ": pad token '" + config.pad_token + "' (from tokenizer_config.json) is not in the vocab");
  t.pair_template = tpl;
  t.truncation = LongestFirst::Tokenizers;
  t.source = p->description;
  t.kind = p->model;
  t.cjk_isolated = std::any_of(p->normalizers.begin(), p->normalizers.end(), [](const NormalizerStep& s) {
    return s.kind == NormalizerStep::Kind::Bert && s.handle_chinese_chars;
  });
  t.vocab = p->vocab;
  if (p->model != SubwordKind::WordPiece && !p->added_outside_vocab.empty()) {  // added ids the model vocab lacks
    std::vector<std::pair<std::string, int32_t>> entries;
    for (int32_t id = 0; id < static_cast<int32_t>(p->vocab.size()); ++id) entries.emplace_back(p->vocab.token(id), id);
    for (const auto& [id, content] : p->added_outside_vocab) entries.emplace_back(content, id);
    t.vocab = Vocab(entries);
  }
  t.config = std::move(config);
  if (p->model == SubwordKind::WordPiece) t.model = std::make_shared<WordPieceModel>(std::move(p));
  else t.model = std::make_shared<FastSubwordModel>(std::move(p));
  return t;
}

}  // namespace attnscan::detail
