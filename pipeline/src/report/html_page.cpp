#include "report/html_page.hpp"

#include <fstream>

#include "common/error.hpp"
#include "report/markup.hpp"
#include "report/assets.hpp"
#include "common/durable.hpp"

namespace attnscan::report {

namespace {

// JSON inside <script>: '<' only occurs within strings, where \u003c is the same character, so
// no "</script>" in the data can end the block early.
std::string script_safe_json(const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

}  // namespace

std::string render_page(const nlohmann::json& data, const std::string& title) {
  const std::string page = kPageTemplate;
  const std::pair<std::string, std::string> fills[] = {
      {"@TITLE@", escape_markup(title)}, {"@CSS@", kReportStyle}, {"@DATA@", script_safe_json(data)}, {"@JS@", kReportScript}};
  std::string out;
  std::size_t pos = 0;
  while (true) {  // one pass over the template: markers inside the filled-in text stay as they are
    std::size_t next = std::string::npos;
    const std::pair<std::string, std::string>* fill = nullptr;
    for (const auto& f : fills)
      if (auto at = page.find(f.first, pos); at < next) next = at, fill = &f;
    if (!fill) break;
    out.append(page, pos, next - pos);
    out += fill->second;
    pos = next + fill->first.size();
  }
  out.append(page, pos, std::string::npos);
  return out;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(tmp.string() + ": cannot create");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw Error(tmp.string() + ": write failed (disk full?)");
    }
  }
  durable_rename(tmp, path);
}

}  // namespace attnscan::report
