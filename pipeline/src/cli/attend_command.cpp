// `attnscan attend`: one pair through tokenizer and encoder; prints tokens, the top attended tokens
// of one head, or (--json) every layer's and head's attention.
#include <algorithm>
#include <boost/program_options.hpp>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "cli/positional.hpp"
#include "encoder/encoder.hpp"
#include "encoder/platform.hpp"
#include "common/error.hpp"
#include "model/model_weights.hpp"
#include "tokenizer/tokenizer.hpp"
#include "cli/commands.hpp"
#include "model/model_location.hpp"
#include "model/model_tokenizer.hpp"

namespace po = boost::program_options;

namespace attnscan::cli {

namespace {

void print_tokens(const Encoding& e) {
  std::cout << std::left << std::setw(5) << "pos" << std::setw(20) << "token" << std::setw(8) << "id"
            << std::setw(5) << "seg" << std::setw(6) << "word" << "special\n";
  for (std::size_t i = 0; i < e.size(); ++i)
    std::cout << std::setw(5) << i << std::setw(20) << e.tokens[i] << std::setw(8) << e.ids[i] << std::setw(5)
              << int(e.segment[i]) << std::setw(6) << e.word_index[i] << (e.special[i] ? "yes" : "") << "\n";
}

void print_top(const Encoding& e, const EncoderOutput& out, int64_t layer, int64_t head, int top) {
  const int64_t n = static_cast<int64_t>(e.size()), S = out.seq_len;
  const float* a = out.attention_at(0, layer, head);
  std::cout << "layer " << layer << " head " << head << " (0-indexed): top " << top << " keys per query\n";
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  for (int64_t q = 0; q < n; ++q) {
    std::iota(order.begin(), order.end(), 0);
    const float* row = a + q * S;
    auto k = std::min<std::size_t>(static_cast<std::size_t>(top), order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](int64_t x, int64_t y) { return row[x] > row[y]; });
    std::cout << std::left << std::setw(4) << q << std::setw(16) << e.tokens[static_cast<std::size_t>(q)] << "->";
    for (std::size_t j = 0; j < k; ++j)
      std::cout << "  " << e.tokens[static_cast<std::size_t>(order[j])] << "@" << order[j] << " " << std::fixed
                << std::setprecision(3) << row[order[j]];
    std::cout << "\n";
  }
}

nlohmann::json to_json(const LoadedModel& model, const Encoding& e, const EncoderOutput& out) {
  nlohmann::json j;
  j["model"] = model.files.dir.string();
  j["tokens"] = e.tokens;
  j["input_ids"] = e.ids;
  j["token_type_ids"] = e.type_ids;
  j["segment"] = e.segment;
  j["word_index"] = e.word_index;
  j["special"] = e.special;
  j["truncated"] = e.truncated;
  j["layers"] = out.layers;
  j["heads"] = out.heads;
  j["layout"] = "attention[layer][head][query][key]";
  const int64_t n = static_cast<int64_t>(e.size()), S = out.seq_len;
  auto& att = j["attention"] = nlohmann::json::array();
  for (int64_t l = 0; l < out.layers; ++l) {
    auto layer = nlohmann::json::array();
    for (int64_t h = 0; h < out.heads; ++h) {
      const float* a = out.attention_at(0, l, h);
      auto rows = nlohmann::json::array();
      for (int64_t q = 0; q < n; ++q) rows.push_back(std::vector<float>(a + q * S, a + q * S + n));
      layer.push_back(std::move(rows));
    }
    att.push_back(std::move(layer));
  }
  return j;
}

}  // namespace

int attend_command(const std::vector<std::string>& args) {
  std::string model_dir, a, b, precision = "fp32", device = "cpu", tokenizer_file = "auto", pair_separator;
  int64_t layer = -1, head = -1;
  int top = 3, threads = 0;
  std::size_t max_length = 0;
  po::options_description opts("attnscan attend: run one sentence pair through the model");
  opts.add_options()("help,h", "show this help")(
      "model", po::value(&model_dir), "Hugging Face model directory of a BERT-family model, docs/models.md (default: $ATTNSCAN_MODEL or the cached all-MiniLM-L6-v2)")(
      "tokenizer", po::value(&tokenizer_file)->default_value("auto"),
      "the model directory's tokenizer file: auto (the slow files when present, else tokenizer.json), slow or tokenizer.json")(
      "a", po::value(&a)->required(), "sentence A")("b", po::value(&b), "sentence B (omit for a single sentence)")(
      "pair-separator", po::value(&pair_separator)->default_value(kDefaultPairSeparator, "newline"),
      "the text between A and B where the model joins a pair into one text (decoders, docs/models.md)")(
      "layer", po::value(&layer), "layer to show (0-indexed); needs --head")(
      "head", po::value(&head), "head to show (0-indexed); needs --layer")(
      "top", po::value(&top)->default_value(3), "keys shown per query with --layer/--head")(
      "json", "print tokens and all attention [layer][head][query][key] as JSON")(
      "max-length", po::value(&max_length)->default_value(0), "truncate to this many tokens (0: the model maximum)")(
      "precision", po::value(&precision)->default_value("fp32"), "fp32 or bf16")(
      "threads", po::value(&threads)->default_value(0), "compute threads (0: all cores)")(
      "device", po::value(&device)->default_value("cpu"), "cpu, cuda or cuda:N");
  const po::variables_map vm = parse_options(args, opts);
  if (vm.count("help")) {
    std::cout << opts << "\nExample:\n  attnscan attend --a \"I went to the store.\" --b \"At the store, I bought "
                         "fresh strawberries.\" --layer 2 --head 0\n";
    return 0;
  }
  if ((layer >= 0) != (head >= 0)) throw Error("--layer and --head go together");
  if (model_dir.empty()) model_dir = default_model_dir().string();
  const Precision chosen = parse_precision(precision);
  require_precision(chosen, "--precision");  // before the model loads
  const TokenizerFile file = tokenizer_file_named(tokenizer_file);

  LoadedModel model = load_model(model_dir);
  auto tokenizer = load_tokenizer(model_dir, model.config, file);
  try {
    tokenizer.set_pair_separator(pair_separator);
  } catch (const Error& e) {
    throw Error(std::string("--pair-separator: ") + e.what());
  }
  Encoding enc = vm.count("b") ? tokenizer.encode_pair(a, b, max_length) : tokenizer.encode_single(a, max_length);
  if (layer >= model.config.num_layers || head >= model.config.num_heads)
    throw Error("--layer/--head out of range: the model has " + std::to_string(model.config.num_layers) +
                " layers and " + std::to_string(model.config.num_heads) + " heads (0-indexed)");
  EncoderOptions eo;
  eo.precision = chosen;
  eo.threads = threads;
  eo.load_threads = threads;
  eo.device = DeviceSpec::parse(device);
  Transformer encoder(model, eo);
  auto out = encoder.forward(TokenBatch::from_encodings({&enc}, tokenizer.pad_id()));

  if (vm.count("json")) {
    std::cout << to_json(model, enc, out).dump() << "\n";
    return 0;
  }
  std::cout << "model: " << model_dir << " (" << describe(model.config) << ")\n";
  if (auto unused = unused_tensors_line(*model.weights); !unused.empty()) std::cout << "model: " << unused << "\n";
  std::cout << enc.size() << " tokens" << (enc.truncated ? " (truncated)" : "") << "\n";
  print_tokens(enc);
  if (layer >= 0) print_top(enc, out, layer, head, top);
  return 0;
}

}  // namespace attnscan::cli
