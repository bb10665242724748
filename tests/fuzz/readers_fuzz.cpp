// Any bytes as a dataset file, read as TSV, RFC 4180 CSV and JSONL, both failing on a bad row and
// skipping it: every outcome is records or attnscan::Error, never a crash or a hang.
#include "dataset/dataset.hpp"
#include "fuzz_input.hpp"

using namespace attnscan;

namespace {

void read_all(DatasetSpec spec) {
  for (BadRowPolicy policy : {BadRowPolicy::Error, BadRowPolicy::Skip}) {
    spec.on_bad_row = policy;
    try {
      auto reader = open_dataset(spec);
      while (reader->next()) {
      }
    } catch (const Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto path = fuzz::as_file(data, size, ".data");
  DatasetSpec tsv;
  tsv.path = path;
  tsv.sentence_a.index = 0;
  tsv.sentence_b.index = 1;
  tsv.label.index = 2;
  tsv.header = false;
  tsv.label_type = LabelType::Number;
  read_all(tsv);
  DatasetSpec csv;
  csv.path = path;
  csv.delimiter = ',';
  csv.quoting = Quoting::Rfc4180;
  csv.sentence_a.name = "a";
  csv.sentence_b.name = "b";
  csv.id.name = "id";
  read_all(csv);
  DatasetSpec jsonl;
  jsonl.format = DatasetFormat::Jsonl;
  jsonl.path = path;
  jsonl.sentence_a.name = "a";
  jsonl.sentence_b.name = "b";
  jsonl.label.name = "label";
  read_all(jsonl);
  return 0;
}
