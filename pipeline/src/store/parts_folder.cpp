#include "store/parts_folder.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/durable.hpp"

namespace attnscan {

namespace fs = std::filesystem;

fs::path parts_dir(const fs::path& out) { return fs::path(out.string() + ".parts"); }

std::string block_name(uint64_t block) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "block-%010" PRIu64 ".h5", block);
  return buf;
}

// Identity file of a parts folder: three lines "key: value" then the config identity.
void write_identity(const fs::path& dir, const RunIdentity& id, int shard_index, int shard_count) {
  auto tmp = dir / "identity.txt.tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << "model_sha256: " << id.model_sha256 << "\ndataset_sha256: " << id.dataset_sha256 << "\nshard: " << shard_index
        << "/" << shard_count << "\n";
    std::istringstream builds(id.detector_builds);
    for (std::string line; std::getline(builds, line);) out << "detector_build: " << line << "\n";
    out << id.config_identity;
  }
  durable_rename(tmp, dir / "identity.txt");
}

RunIdentity read_identity(const fs::path& dir, std::string& shard) {
  std::ifstream in(dir / "identity.txt", std::ios::binary);
  if (!in)
    throw Error((dir / "identity.txt").string() +
                ": missing, so which run (model, dataset, options) wrote the committed blocks in " + dir.string() +
                " cannot be checked. Pass --overwrite to discard them and start this output over (or restore "
                "identity.txt)");
  RunIdentity id;
  std::string line;
  auto value = [&](const char* key) {
    std::getline(in, line);
    if (line.rfind(key, 0) != 0) throw Error((dir / "identity.txt").string() + ": corrupt (expected " + key + ")");
    return line.substr(std::string(key).size());
  };
  id.model_sha256 = value("model_sha256: ");
  id.dataset_sha256 = value("dataset_sha256: ");
  shard = value("shard: ");
  std::string rest;
  for (std::string l; std::getline(in, l);) {
    if (rest.empty() && l.rfind("detector_build: ", 0) == 0) id.detector_builds += l.substr(16) + "\n";
    else rest += l + "\n";
  }
  id.config_identity = rest;
  return id;
}

std::string note_numerics(const fs::path& dir, const std::string& line, std::ostream& log) {
  const fs::path file = dir / "numerics.txt";
  std::string all, previous;
  {
    std::ifstream in(file, std::ios::binary);
    for (std::string l; std::getline(in, l);) {
      if (l.empty()) continue;
      all += l + "\n";
      previous += (previous.empty() ? "" : "; ") + l;
    }
  }
  if (all.find(line + "\n") != std::string::npos) return all;
  if (!previous.empty() && !committed_blocks(dir).empty())
    log << "note: resuming with other numerics than the committed blocks (" << previous << " -> " << line
        << "): their fp32 attention agrees within 1e-5, not bit for bit (docs/engine.md, reproducibility); "
           "the output lists both in its `numerics` attribute\n";
  all += line + "\n";
  const fs::path tmp = dir / "numerics.txt.tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << all;
    if (!out.flush()) throw Error(tmp.string() + ": cannot write");
  }
  durable_rename(tmp, file);
  return all;
}

namespace {

bool ends_with(const std::string& name, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
}

}  // namespace

std::set<uint64_t> committed_blocks(const fs::path& dir) {
  std::set<uint64_t> done;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    uint64_t b = 0;
    if (std::sscanf(name.c_str(), "block-%" SCNu64 ".h5", &b) == 1 && name == block_name(b)) done.insert(b);
  }
  return done;
}

void remove_interrupted_commits(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (ends_with(name, ".tmp") || ends_with(name, ".spill")) fs::remove(entry.path());  // redone on resume
  }
}

}  // namespace attnscan
