// prev_token: attention from each token to the token before it.
#include "../common/adjacent.hpp"

namespace {
struct PrevToken : attnscan_plugins::Adjacent {
  explicit PrevToken(const attnscan::sdk::Params& p) : Adjacent(p, -1) {}
};
attnscan::sdk::DetectorInfo info() {
  return {"prev_token", "1.0", "attention mass on the previous token: T(i) = {i-1}", {"prev_token"},
          {attnscan_plugins::within_sentence_param()}};
}
}  // namespace
ATTNSCAN_DETECTOR(PrevToken, info)
