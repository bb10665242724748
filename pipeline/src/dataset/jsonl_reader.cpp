// JSON lines: one object per line, sentences and optional id/label by field name.
#include <nlohmann/json.hpp>

#include "dataset/line_source.hpp"
#include "dataset/readers.hpp"

namespace attnscan {

namespace {

class JsonlReader : public PairReader {
 public:
  explicit JsonlReader(const DatasetSpec& spec) : spec_(spec), src_(spec.path) {
    policy_ = spec.on_bad_row;
    for (const ColumnRef* c : {&spec.sentence_a, &spec.sentence_b, &spec.id, &spec.label})
      if (c->index >= 0) throw DatasetError(spec.path.string() + ": JSON lines fields are chosen by name, not index");
    if (spec.sentence_a.name.empty()) throw DatasetError(spec.path.string() + ": the sentence_a field name must be given");
  }

  double fraction() const override { return src_.fraction(); }

  std::optional<PairRecord> next() override {
    std::string line;
    while (src_.next(line)) {
      ++read_;
      PairRecord rec;
      rec.source_row = src_.line_number();
      if (parse(line, rec) && finish(spec_, spec_.path, rec)) return rec;
    }
    return std::nullopt;
  }

 private:
  bool parse(const std::string& line, PairRecord& rec) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      return reject(spec_.path, rec.source_row, std::string("invalid JSON: ") + e.what());
    }
    if (!j.is_object()) return reject(spec_.path, rec.source_row, "expected a JSON object");
    auto text = [&](const std::string& field, bool required, std::optional<std::string>& out) {
      auto it = j.find(field);
      if (it == j.end() || it->is_null()) {
        if (required) return reject(spec_.path, rec.source_row, "missing field '" + field + "'");
        return true;
      }
      if (it->is_string()) out = it->get<std::string>();
      else if (it->is_number() || it->is_boolean()) out = it->dump();
      else return reject(spec_.path, rec.source_row, "field '" + field + "' is a " + it->type_name() + ", expected text");
      return true;
    };
    std::optional<std::string> a, b, id;
    const bool has_b = !spec_.sentence_b.name.empty();  // no sentence_b field: single sentences
    for (const auto* field : {&spec_.sentence_a.name, &spec_.sentence_b.name}) {
      if (field->empty()) continue;
      auto it = j.find(*field);
      if (it != j.end() && !it->is_string())
        return reject(spec_.path, rec.source_row, "field '" + *field + "' is a " + it->type_name() + ", expected text");
    }
    if (!text(spec_.sentence_a.name, true, a) || (has_b && !text(spec_.sentence_b.name, true, b))) return false;
    if (!spec_.id.name.empty() && !text(spec_.id.name, false, id)) return false;
    if (!spec_.label.name.empty() && !text(spec_.label.name, false, rec.label)) return false;
    rec.a = std::move(*a);
    rec.has_b = has_b;
    if (has_b) rec.b = std::move(*b);
    if (id) rec.id = std::move(*id);
    return true;
  }

  DatasetSpec spec_;
  LineSource src_;
};

}  // namespace

std::unique_ptr<PairReader> make_jsonl_reader(const DatasetSpec& spec) { return std::make_unique<JsonlReader>(spec); }

}  // namespace attnscan
