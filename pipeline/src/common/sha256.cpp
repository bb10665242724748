#include "common/sha256.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "common/error.hpp"

namespace attnscan {

namespace {

class Digest {
 public:
  Digest() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) { EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr); }
  void update(const void* data, std::size_t n) { EVP_DigestUpdate(ctx_.get(), data, n); }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx_.get(), md, &len);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out.push_back(digits[md[i] >> 4]);
      out.push_back(digits[md[i] & 15]);
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

}  // namespace

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
  Digest d;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    d.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  return d.hex();
}

std::string sha256_text(const std::string& text) {
  Digest d;
  d.update(text.data(), text.size());
  return d.hex();
}

}  // namespace attnscan
