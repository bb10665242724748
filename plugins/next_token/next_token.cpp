// next_token: attention from each token to the token after it.
#include "../common/adjacent.hpp"

namespace {
struct NextToken : attnscan_plugins::Adjacent {
  explicit NextToken(const attnscan::sdk::Params& p) : Adjacent(p, +1) {}
};
attnscan::sdk::DetectorInfo info() {
  return {"next_token", "1.0", "attention mass on the next token: T(i) = {i+1}", {"next_token"},
          {attnscan_plugins::within_sentence_param()}};
}
}  // namespace
ATTNSCAN_DETECTOR(NextToken, info)
