#pragma once
// What makes a shard file the one a virtual merge mapped (merge --virtual): its place in the split, the
// run that wrote it (model, dataset, content configuration, numerics) and its attention (value count and
// a digest of its per-span checksums). Recorded per source at merge time in /attention:source_identities
// and compared by every reader when it opens a source, so a shard rerun, replaced or truncated after the
// merge is refused by name instead of read. python/attnscan/attention.py computes the same line.
#include <string>

#include "store/h5_file.hpp"

namespace attnscan {

inline constexpr const char* kSourceIdentitiesAttr = "source_identities";  // on /attention, one per source_files

// One line of "key=value" fields, separated by spaces.
std::string source_identity(const h5::File& shard);

// Empty when equal, else what differs in words, e.g. "its model (sha256 ab12... -> cd34...)".
std::string source_identity_difference(const std::string& recorded, const std::string& now);

}  // namespace attnscan
