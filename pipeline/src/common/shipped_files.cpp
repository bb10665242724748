#include "common/shipped_files.hpp"

namespace attnscan {

namespace fs = std::filesystem;

fs::path shipped_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path share = exe.parent_path().parent_path() / "share" / "attnscan";
  return fs::is_directory(share, ec) ? share : fs::path();
}

fs::path given_or_shipped(const fs::path& path) {
  std::error_code ec;
  if (path.empty() || path.is_absolute() || fs::exists(path, ec)) return path;
  const fs::path share = shipped_dir();
  if (!share.empty() && fs::exists(share / path, ec)) return share / path;
  return path;
}

}  // namespace attnscan
