#include "store/source_identity.hpp"

#include <cstdint>
#include <map>
#include <sstream>
#include <vector>

#include "common/sha256.hpp"
#include "store/attention_checksums.hpp"

namespace attnscan {

namespace {

// The fields in line order, with what each names in a message.
const std::pair<const char*, const char*> kFields[] = {
    {"shard", "its shard of the split"},
    {"model_sha256", "its model"},
    {"dataset_sha256", "its dataset"},
    {"config_sha256", "its content configuration"},
    {"numerics_sha256", "the numerics that computed it"},
    {"attention_values", "its attention's length"},
    {"attention_checksums_sha256", "its attention (the checksums of its values)"},
};

std::map<std::string, std::string> fields_of(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  for (std::string field; in >> field;)
    if (auto eq = field.find('='); eq != std::string::npos) out[field.substr(0, eq)] = field.substr(eq + 1);
  return out;
}

std::string short_value(const std::string& v) { return v.size() > 16 ? v.substr(0, 12) + "..." : v; }

// Little-endian bytes of the per-span CRC-32C list: a digest that changes with any stored value.
std::string checksums_digest(const h5::File& f) {
  if (!f.exists(kAttentionChecksums)) return "none";  // chunked (compressed) attention: HDF5's Fletcher32 per chunk
  const auto crc = f.read<uint32_t>(kAttentionChecksums, 0, f.length(kAttentionChecksums));
  std::string bytes;
  bytes.reserve(crc.size() * 4);
  for (uint32_t c : crc)
    for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<char>((c >> (8 * k)) & 0xFF));
  return sha256_text(bytes);
}

}  // namespace

std::string source_identity(const h5::File& shard) {
  const std::string values[] = {
      std::to_string(shard.attr_int("/", "shard_index")) + "/" + std::to_string(shard.attr_int("/", "shard_count")),
      shard.attr_string("/", "model_sha256"),
      shard.attr_string("/", "dataset_sha256"),
      sha256_text(shard.attr_string("/", "config_identity")),
      sha256_text(shard.has_attr("/", "numerics") ? shard.attr_string("/", "numerics") : ""),
      std::to_string(shard.exists("attention/values") ? shard.length("attention/values") : 0),
      checksums_digest(shard),
  };
  std::string line;
  for (std::size_t k = 0; k < std::size(kFields); ++k) line += (k ? " " : "") + std::string(kFields[k].first) + "=" + values[k];
  return line;
}

std::string source_identity_difference(const std::string& recorded, const std::string& now) {
  const auto a = fields_of(recorded), b = fields_of(now);
  std::string out;
  for (const auto& [key, words] : kFields) {
    const auto x = a.find(key), y = b.find(key);
    const std::string before = x == a.end() ? "?" : x->second, after = y == b.end() ? "?" : y->second;
    if (before != after) out += (out.empty() ? "" : ", ") + std::string(words) + " (" + short_value(before) + " -> " + short_value(after) + ")";
  }
  return out;
}

}  // namespace attnscan
