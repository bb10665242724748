#pragma once
// How attention is stored in HDF5 output.
namespace attnscan {
enum class AttentionDType { F16, F32, U8 };
enum class Compression { None, Lz4, Deflate };
}  // namespace attnscan
