#include <utf8proc.h>

#include <cstdlib>

#include "dataset/dataset.hpp"
#include "dataset/readers.hpp"

namespace attnscan {

namespace {

// Byte offset of the first invalid UTF-8 sequence, or -1.
long invalid_utf8_at(const std::string& s) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t pos = 0, n = static_cast<utf8proc_ssize_t>(s.size());
  while (pos < n) {
    utf8proc_int32_t cp;
    auto len = utf8proc_iterate(p + pos, n - pos, &cp);
    if (len <= 0) return static_cast<long>(pos);
    pos += len;
  }
  return -1;
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n\v\f") == std::string::npos; }

}  // namespace

bool PairReader::reject(const std::filesystem::path& file, uint64_t line, const std::string& reason) {
  RejectedRow row{file, line, reason};
  if (policy_ == BadRowPolicy::Error) throw BadRowError(row.message(), true);
  ++skipped_;
  if (reject_) reject_(row);
  return false;
}

bool PairReader::finish(const DatasetSpec& spec, const std::filesystem::path& file, PairRecord& rec) {
  const std::pair<const char*, const std::string*> fields[] = {{"sentence_a", &rec.a}, {"sentence_b", &rec.b}};
  // A NUL byte cannot be stored (the output's strings end at the first NUL) while its tokens could:
  // the row is refused rather than stored half.
  for (const auto& [name, text] : fields)
    if (const auto nul = text->find('\0'); nul != std::string::npos)
      return reject(file, rec.source_row, std::string(name) + ": NUL byte at byte " + std::to_string(nul) +
                                              " (text with NUL bytes cannot be stored)");
  for (const std::string* other : {&rec.id, rec.label ? &*rec.label : nullptr})
    if (other && other->find('\0') != std::string::npos)
      return reject(file, rec.source_row, std::string(other == &rec.id ? "id" : "label") +
                                              ": NUL byte (text with NUL bytes cannot be stored)");
  for (const auto& [name, text] : fields) {
    if (text == &rec.b && !rec.has_b) continue;
    long bad = invalid_utf8_at(*text);
    if (bad >= 0) return reject(file, rec.source_row, std::string(name) + ": invalid UTF-8 at byte " + std::to_string(bad));
    if (blank(*text)) return reject(file, rec.source_row, std::string(name) + ": empty sentence");
  }
  for (const std::string* other : {&rec.id, rec.label ? &*rec.label : nullptr}) {
    if (other && invalid_utf8_at(*other) >= 0)
      return reject(file, rec.source_row, std::string(other == &rec.id ? "id" : "label") + ": invalid UTF-8");
  }
  if (rec.label && spec.label_type == LabelType::Number) {
    const char* begin = rec.label->c_str();
    char* end = nullptr;
    double v = std::strtod(begin, &end);
    while (end && (*end == ' ' || *end == '\t')) ++end;
    if (rec.label->empty() || end == begin || *end != '\0')
      return reject(file, rec.source_row, "label: cannot parse '" + *rec.label + "' as a number");
    rec.label_value = v;
  }
  if (rec.id.empty()) rec.id = std::to_string(rec.source_row);
  return true;
}

std::unique_ptr<PairReader> open_dataset(const DatasetSpec& spec) {
  switch (spec.format) {
    case DatasetFormat::Delimited: return make_delimited_reader(spec);
    case DatasetFormat::Jsonl: return make_jsonl_reader(spec);
    case DatasetFormat::Parallel: return make_parallel_reader(spec);
    case DatasetFormat::Conllu: return make_conllu_reader(spec);
  }
  throw DatasetError("unknown dataset format");
}

}  // namespace attnscan
