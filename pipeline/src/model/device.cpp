#include "model/device.hpp"
#include "encoder/encoder.hpp"

#include "common/error.hpp"

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

// Encoder options parsed without LibTorch (the configuration needs them too).
Precision parse_precision(const std::string& text) {
  if (text == "fp32") return Precision::F32;
  if (text == "bf16") return Precision::BF16;
  throw Error("precision '" + text + "': expected fp32 or bf16");
}

const char* precision_name(Precision p) { return p == Precision::F32 ? "fp32" : "bf16"; }

LinearBackend parse_linear_backend(const std::string& text) {
  if (text == "auto") return LinearBackend::Auto;
  if (text == "openblas") return LinearBackend::OpenBlas;
  if (text == "onednn") return LinearBackend::OneDnn;
  throw Error("linear backend '" + text + "': expected auto, openblas or onednn");
}

const char* linear_backend_name(LinearBackend b) {
  return b == LinearBackend::OpenBlas ? "openblas" : b == LinearBackend::OneDnn ? "onednn" : "auto";
}

}  // namespace attnscan
