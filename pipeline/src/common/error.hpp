#pragma once
// Error types thrown by the attnscan library. Messages always name the file (and where it applies the
// tensor, line or field) so that a user can act on them without reading code.
#include <stdexcept>
#include <string>

namespace attnscan {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model directory, config file or weight file that cannot be used.
class ModelError : public Error {
 public:
  using Error::Error;
};

}  // namespace attnscan
