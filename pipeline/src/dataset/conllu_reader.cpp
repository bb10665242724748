// CoNLL-U dependency treebanks (https://universaldependencies.org/format.html): one example per
// sentence, or with pairing "consecutive" sentences 1+2, 3+4, ... as pairs. Multiword-token ranges
// ("1-2") and empty nodes ("1.1") are not words of the tree and are skipped, as UD specifies. A
// sentence's text is its words joined by single spaces (what the model sees; words are tokenized one
// by one); its id is `# sent_id` (pairs: "A_ID+B_ID"), else the line where it starts.
#include <algorithm>
#include <vector>

#include "dataset/line_source.hpp"
#include "dataset/readers.hpp"

namespace attnscan {

namespace {

struct Sentence {
  uint64_t first_line = 0;
  std::string sent_id;
  std::vector<TreeWord> words;
};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == '\t') out.emplace_back();
    else out.back().push_back(c);
  }
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

class ConlluReader : public PairReader {
 public:
  explicit ConlluReader(const DatasetSpec& spec) : spec_(spec), src_(spec.path) { policy_ = spec.on_bad_row; }

  double fraction() const override { return src_.fraction(); }

  std::optional<PairRecord> next() override {
    for (;;) {
      Sentence a, b;
      std::string why_a, why_b;
      uint64_t bad_line_a = 0, bad_line_b = 0;
      if (!read_sentence(a, why_a, bad_line_a)) return std::nullopt;
      const bool pair = spec_.pairing == ConlluPairing::Consecutive;
      if (pair && !read_sentence(b, why_b, bad_line_b)) {
        ++read_;
        reject(spec_.path, a.first_line,
               "pairing consecutive: the last sentence has no partner (the file has an odd number of sentences)");
        continue;
      }
      ++read_;
      if (!why_a.empty()) {
        reject(spec_.path, bad_line_a, why_a);
        continue;
      }
      if (pair && !why_b.empty()) {
        reject(spec_.path, bad_line_b, why_b);
        continue;
      }
      PairRecord rec;
      rec.source_row = a.first_line;
      rec.a = join(a.words);
      rec.tree_a = std::move(a.words);
      rec.has_b = pair;
      if (pair) {
        rec.b = join(b.words);
        rec.tree_b = std::move(b.words);
        if (!a.sent_id.empty() || !b.sent_id.empty()) rec.id = a.sent_id + "+" + b.sent_id;
      } else {
        rec.id = a.sent_id;
      }
      if (finish(spec_, spec_.path, rec)) return rec;
    }
  }

 private:
  static std::string join(const std::vector<TreeWord>& words) {
    std::string s;
    for (const auto& w : words) s += (s.empty() ? "" : " ") + w.form;
    return s;
  }

  // The next sentence; false at the end of the file. A malformed sentence is read to its end and
  // `why` names the first problem, at `bad_line`.
  bool read_sentence(Sentence& s, std::string& why, uint64_t& bad_line) {
    std::string line;
    bool started = false;
    auto fail = [&](uint64_t at, const std::string& reason) {
      if (why.empty()) why = reason, bad_line = at;
    };
    std::vector<uint64_t> word_lines;
    while (src_.next(line)) {
      const uint64_t at = src_.line_number();
      if (line.find_first_not_of(" \t") == std::string::npos) {
        if (started) break;
        continue;  // blank lines between sentences
      }
      if (!started) started = true, s.first_line = at;
      if (line[0] == '#') {
        const std::string key = "# sent_id =";
        if (line.compare(0, key.size(), key) == 0) {
          s.sent_id = line.substr(key.size());
          s.sent_id.erase(0, s.sent_id.find_first_not_of(' '));
        }
        continue;
      }
      const auto f = split_tabs(line);
      const std::string& id = f[0];
      if (id.find('-') != std::string::npos || id.find('.') != std::string::npos) continue;  // range or empty node
      if (!all_digits(id)) {
        fail(at, "field ID: '" + id + "' is not a word index, a range (1-2) or an empty node (1.1)");
        continue;
      }
      if (std::stoul(id) != s.words.size() + 1)
        fail(at, "field ID: " + id + " where word " + std::to_string(s.words.size() + 1) + " was expected");
      static const char* const kFields[] = {"ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL"};
      if (f.size() < 8) {
        fail(at, "field " + std::string(kFields[f.size()]) + ": missing (a word line has 10 tab-separated fields, this one " +
                     std::to_string(f.size()) + ")");
        s.words.push_back({});
        word_lines.push_back(at);
        continue;
      }
      TreeWord w;
      w.form = f[1];
      if (w.form.empty()) fail(at, "field FORM: empty");
      if (f[6] == "_" || !all_digits(f[6])) {
        fail(at, "field HEAD: '" + f[6] + "' is not a word index" + (f[6] == "_" ? " (no tree for this word)" : ""));
      } else {
        w.head = static_cast<int32_t>(std::stol(f[6])) - 1;
      }
      w.relation = f[7];
      if (w.relation.empty() || w.relation == "_") fail(at, "field DEPREL: missing ('" + w.relation + "')");
      s.words.push_back(std::move(w));
      word_lines.push_back(at);
    }
    if (!started) return false;
    if (s.words.empty()) fail(s.first_line, "sentence without words");
    if (!why.empty()) return true;
    const auto n = static_cast<int32_t>(s.words.size());
    for (int32_t i = 0; i < n; ++i) {
      const int32_t h = s.words[static_cast<std::size_t>(i)].head;
      if (h >= n) {
        fail(word_lines[static_cast<std::size_t>(i)], "field HEAD: " + std::to_string(h + 1) + " is out of range (the sentence has " +
                                                         std::to_string(n) + " words)");
        return true;
      }
      if (h == i) {
        fail(word_lines[static_cast<std::size_t>(i)], "field HEAD: word " + std::to_string(i + 1) + " is its own head");
        return true;
      }
    }
    for (int32_t i = 0; i < n; ++i) {  // every word must reach the root
      int32_t at = i, steps = 0;
      while (at >= 0 && steps <= n) at = s.words[static_cast<std::size_t>(at)].head, ++steps;
      if (at >= 0) {
        fail(word_lines[static_cast<std::size_t>(i)], "field HEAD: word " + std::to_string(i + 1) +
                                                         " is on a cycle (following its heads never reaches the root)");
        return true;
      }
    }
    return true;
  }

  DatasetSpec spec_;
  LineSource src_;
};

}  // namespace

std::unique_ptr<PairReader> make_conllu_reader(const DatasetSpec& spec) { return std::make_unique<ConlluReader>(spec); }

}  // namespace attnscan
