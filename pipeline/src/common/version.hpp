#pragma once
namespace attnscan {
// Tool version, stored in every output file and printed by `attnscan --version`.
inline constexpr const char* kToolVersion = "0.1.0";
}  // namespace attnscan
