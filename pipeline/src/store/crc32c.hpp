#pragma once
// CRC-32C (Castagnoli), the checksum of stored attention bytes: per span of the final file
// (store/attention_checksums.hpp) and per committed block of a run (store/output_session.cpp).
#include <cstddef>
#include <cstdint>

namespace attnscan {

// The CRC-32C of [data, data + n), continuing from `crc` (0 for a fresh start). Chaining gives the
// same result as one call over the concatenated bytes.
uint32_t crc32c(const void* data, std::size_t n, uint32_t crc = 0);

}  // namespace attnscan
