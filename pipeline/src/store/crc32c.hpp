#pragma once
// CRC-32C (Castagnoli), the checksum of stored attention bytes: per span of the final file
// (store/attention_checksums.hpp) and per committed block of a run (store/output_session.cpp).
#include <cstddef>
#include <cstdint>

namespace attnscan {

// The CRC-32C of [data, data + n), continuing from `crc` (0 for a fresh start). Chaining gives the
// same result as one call over the concatenated bytes. Runs the fastest body the CPU has.
uint32_t crc32c(const void* data, std::size_t n, uint32_t crc = 0);
// The same by table lookups on any CPU (what crc32c() falls back to; tests compare the bodies).
uint32_t crc32c_portable(const void* data, std::size_t n, uint32_t crc = 0);

// The ways crc32c() can compute it, all giving the same checksum: table lookups; SSE4.2's crc32
// instruction, three chains at once; carry-less products (VPCLMULQDQ) folding 256 bytes at a time in
// AVX2's or AVX-512's registers, the crc32 instruction taking what is left. Tests run each body the CPU has.
enum class Crc32cBody { Portable, Crc32Instruction, FoldingAvx2, FoldingAvx512 };
// Every body, slowest first.
inline constexpr Crc32cBody kCrc32cBodies[] = {Crc32cBody::Portable, Crc32cBody::Crc32Instruction,
                                               Crc32cBody::FoldingAvx2, Crc32cBody::FoldingAvx512};
bool crc32c_has(Crc32cBody body);
// crc32c() through one body; only one that crc32c_has() says this CPU has.
uint32_t crc32c_with(Crc32cBody body, const void* data, std::size_t n, uint32_t crc = 0);

// The CRC-32C of bytes A followed by bytes B, from crc32c(A), crc32c(B) and B's length alone:
// pieces checksummed apart (blocks of a run, in any order) give the checksum of their concatenation.
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t bytes_b);

}  // namespace attnscan
