#include "attnscan/device.hpp"

#include "attnscan/error.hpp"

namespace attnscan {

DeviceSpec DeviceSpec::parse(const std::string& text) {
  DeviceSpec d;
  if (text == "cpu") return d;
  if (text == "cuda" || text.rfind("cuda:", 0) == 0) {
    d.kind = Kind::Cuda;
    if (text.size() > 5) {
      try {
        std::size_t used = 0;
        d.index = std::stoi(text.substr(5), &used);
        if (used != text.size() - 5 || d.index < 0) throw std::invalid_argument(text);
      } catch (const std::exception&) {
        throw Error("device '" + text + "': expected cuda:N with N a non-negative integer");
      }
    }
    return d;
  }
  throw Error("device '" + text + "': expected cpu, cuda or cuda:N");
}

std::string DeviceSpec::str() const {
  return kind == Kind::Cpu ? "cpu" : "cuda:" + std::to_string(index);
}

}  // namespace attnscan
