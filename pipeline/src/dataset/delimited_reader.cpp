// TSV/CSV rows with a configurable delimiter, quoting none or RFC 4180, optional header.
#include <algorithm>
#include <vector>

#include "dataset/line_source.hpp"
#include "dataset/readers.hpp"

namespace attnscan {

namespace {

std::vector<std::string> split_plain(const std::string& line, char delim) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == delim) out.emplace_back();
    else out.back().push_back(c);
  }
  return out;
}

enum class Rfc { Done, NeedMore, Bad };

// Splits one RFC 4180 record; NeedMore when a quoted field is still open at the end of `text`.
Rfc split_rfc4180(const std::string& text, char delim, std::vector<std::string>& out, std::string& why) {
  out.assign(1, std::string());
  std::size_t i = 0;
  bool field_start = true;
  while (i < text.size()) {
    char c = text[i];
    if (field_start && c == '"') {
      ++i;
      for (;;) {
        if (i >= text.size()) return Rfc::NeedMore;
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            out.back().push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        out.back().push_back(text[i++]);
      }
      if (i < text.size() && text[i] != delim) {
        why = "field " + std::to_string(out.size()) + ": unexpected character after a closing quote";
        return Rfc::Bad;
      }
      field_start = false;
      continue;
    }
    if (c == delim) {
      out.emplace_back();
      field_start = true;
    } else {
      out.back().push_back(c);
      field_start = false;
    }
    ++i;
  }
  return Rfc::Done;
}

class DelimitedReader : public PairReader {
 public:
  explicit DelimitedReader(const DatasetSpec& spec) : spec_(spec), src_(spec.path) {
    policy_ = spec.on_bad_row;
    const std::string file = spec.path.string();
    if (!spec.sentence_a.set()) throw DatasetError(file + ": the sentence_a column must be given");
    if (spec.header) {
      std::vector<std::string> fields;
      std::string why;
      if (!read_record(fields, why)) throw DatasetError(file + ": empty file, expected a header line");
      if (!why.empty()) throw DatasetError(file + ":1: header: " + why);
      header_ = fields;
    }
    a_ = resolve(spec.sentence_a, "sentence_a");
    b_ = spec.sentence_b.set() ? resolve(spec.sentence_b, "sentence_b") : -1;  // unset: single sentences
    id_ = spec.id.set() ? resolve(spec.id, "id") : -1;
    label_ = spec.label.set() ? resolve(spec.label, "label") : -1;
    needed_ = 1 + std::max({a_, b_, id_, label_});
  }

  double fraction() const override { return src_.fraction(); }

  std::optional<PairRecord> next() override {
    std::vector<std::string> fields;
    std::string why;
    for (;;) {
      if (!read_record(fields, why)) return std::nullopt;
      ++read_;
      PairRecord rec;
      rec.source_row = start_line_;
      if (!why.empty()) {
        reject(spec_.path, start_line_, why);
        continue;
      }
      if (spec_.header && fields.size() != header_.size()) {
        reject(spec_.path, start_line_, "expected " + std::to_string(header_.size()) + " fields as in the header, found " +
                                            std::to_string(fields.size()));
        continue;
      }
      if (static_cast<int>(fields.size()) < needed_) {
        reject(spec_.path, start_line_, "expected at least " + std::to_string(needed_) + " fields, found " +
                                            std::to_string(fields.size()));
        continue;
      }
      rec.a = std::move(fields[static_cast<std::size_t>(a_)]);
      if (b_ >= 0) rec.b = std::move(fields[static_cast<std::size_t>(b_)]);
      rec.has_b = b_ >= 0;
      if (id_ >= 0) rec.id = fields[static_cast<std::size_t>(id_)];
      if (label_ >= 0) rec.label = fields[static_cast<std::size_t>(label_)];
      if (finish(spec_, spec_.path, rec)) return rec;
    }
  }

 private:
  // One record (several physical lines when a quoted field holds newlines). `why` is set for a
  // malformed record; false at the end of the file.
  bool read_record(std::vector<std::string>& fields, std::string& why) {
    why.clear();
    std::string line;
    if (!src_.next(line)) return false;
    start_line_ = src_.line_number();
    if (spec_.quoting == Quoting::None) {
      fields = split_plain(line, spec_.delimiter);
      return true;
    }
    for (;;) {
      switch (split_rfc4180(line, spec_.delimiter, fields, why)) {
        case Rfc::Done:
        case Rfc::Bad:
          return true;
        case Rfc::NeedMore: {
          std::string more;
          if (!src_.next(more)) {
            why = "quoted field opened here is never closed";
            return true;
          }
          line += "\n" + more;
        }
      }
    }
  }

  int resolve(const ColumnRef& ref, const char* role) {
    const std::string file = spec_.path.string();
    if (!ref.name.empty()) {
      if (!spec_.header)
        throw DatasetError(file + ": " + role + " column " + ref.describe() + " is chosen by name but the file has no header");
      auto it = std::find(header_.begin(), header_.end(), ref.name);
      if (it == header_.end()) {
        std::string cols;
        for (const auto& h : header_) cols += (cols.empty() ? "" : ", ") + h;
        throw DatasetError(file + ":1: " + role + ": no column " + ref.describe() + " in the header (columns: " + cols + ")");
      }
      return static_cast<int>(it - header_.begin());
    }
    if (spec_.header && ref.index >= static_cast<int>(header_.size()))
      throw DatasetError(file + ":1: " + role + ": column " + std::to_string(ref.index) + " but the header has " +
                         std::to_string(header_.size()) + " columns");
    return ref.index;
  }

  DatasetSpec spec_;
  LineSource src_;
  std::vector<std::string> header_;
  int a_ = 0, b_ = -1, id_ = -1, label_ = -1, needed_ = 0;
  uint64_t start_line_ = 0;
};

}  // namespace

std::unique_ptr<PairReader> make_delimited_reader(const DatasetSpec& spec) {
  return std::make_unique<DelimitedReader>(spec);
}

}  // namespace attnscan
