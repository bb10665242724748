#pragma once
// Where the encoder runs. Parsed once here; encoder.cpp is the only place that maps it onto LibTorch.
#include <string>

namespace attnscan {

struct DeviceSpec {
  enum class Kind { Cpu, Cuda } kind = Kind::Cpu;
  int index = 0;

  // "cpu", "cuda" or "cuda:N"; throws Error otherwise.
  static DeviceSpec parse(const std::string& text);
  std::string str() const;
};

}  // namespace attnscan
