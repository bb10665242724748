#include "model/model_config.hpp"

#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "model/families/config_fields.hpp"
#include "model/families/family.hpp"
#include "common/json_file.hpp"

namespace attnscan {

ModelConfig load_model_config(const std::filesystem::path& file) {
  auto j = read_json_file(file);
  if (!j.is_object()) throw ModelError(file.string() + ": expected a JSON object");
  const auto& family = find_family(config_fields::field<std::string>(j, file, "model_type"), file);
  ModelConfig c = family.read_config(j, file);
  c.model_type = family.model_type;
  return c;
}

std::string describe(const ModelConfig& c) {
  std::ostringstream s;
  s << c.model_type << " " << c.num_layers << " layers x " << c.num_heads << " heads, hidden " << c.hidden_size
    << ", intermediate " << c.intermediate_size << ", vocab " << c.vocab_size << ", " << c.activation_name;
  return s.str();
}

}  // namespace attnscan
