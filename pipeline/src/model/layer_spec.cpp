#include "model/layer_spec.hpp"

namespace attnscan {

bool activation_named(const std::string& name, Activation& out) {
  if (name == "gelu" || name == "gelu_python") out = Activation::GeluErf;
  else if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") out = Activation::GeluTanh;
  else if (name == "relu") out = Activation::Relu;
  else if (name == "silu" || name == "swish") out = Activation::Silu;
  else return false;
  return true;
}

}  // namespace attnscan
