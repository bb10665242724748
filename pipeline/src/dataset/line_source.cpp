#include "dataset/line_source.hpp"

#include "dataset/dataset.hpp"

namespace attnscan {

LineSource::LineSource(const std::filesystem::path& path) : path_(path), in_(path, std::ios::binary) {
  if (!in_) throw DatasetError(path.string() + ": cannot open dataset file");
  std::error_code ec;
  size_ = std::filesystem::file_size(path, ec);
  char bom[3];
  in_.read(bom, 3);
  if (!(in_.gcount() == 3 && bom[0] == '\xEF' && bom[1] == '\xBB' && bom[2] == '\xBF')) {
    in_.clear();
    in_.seekg(0);
  }
}

bool LineSource::next(std::string& line) {
  if (!std::getline(in_, line)) return false;
  ++line_;
  consumed_ += line.size() + 1;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

}  // namespace attnscan
