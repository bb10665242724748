#include "plugin_host/plugin_host.hpp"

#include "plugin_host/attention_maps.hpp"

#include <boost/dll/shared_library.hpp>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace attnscan {

namespace fs = std::filesystem;

namespace {

using ApiVersionFn = int();
using AbiFn = const char*();
using InfoFn = const sdk::DetectorInfo*(char* error, std::size_t error_size);
using CreateFn = sdk::Detector*(const sdk::Params*, char* error, std::size_t error_size);
using DestroyFn = void(sdk::Detector*);
constexpr std::size_t kErrorSize = 1024;

// "a=1; b=2" -> the fields of two fingerprints that differ, as "b: plugin 3, attnscan 2".
std::string abi_difference(const std::string& plugin, const std::string& host) {
  auto fields = [](const std::string& f) {
    std::map<std::string, std::string> m;
    std::size_t pos = 0;
    while (pos < f.size()) {
      const auto end = std::min(f.find("; ", pos), f.size());
      const std::string field = f.substr(pos, end - pos);
      const auto eq = field.find('=');
      m[field.substr(0, eq)] = eq == std::string::npos ? "" : field.substr(eq + 1);
      pos = end + 2;
    }
    return m;
  };
  auto p = fields(plugin), h = fields(host);
  std::string out;
  for (const auto& [k, v] : h)
    if (p[k] != v) out += (out.empty() ? "" : ", ") + k + ": plugin " + (p[k].empty() ? "(none)" : p[k]) + ", attnscan " + v;
  for (const auto& [k, v] : p)
    if (!h.count(k)) out += (out.empty() ? "" : ", ") + k + ": plugin " + v + ", attnscan (none)";
  return out;
}

// The declared detector, checked: a name matching the file, outputs, defaults of the declared types.
void check_info(const fs::path& file, const sdk::DetectorInfo& info) {
  std::vector<std::string> problems;
  if (info.name != file.stem().string())
    problems.push_back("declares detector '" + info.name + "' but the file is named " + file.filename().string() +
                       " (name it " + info.name + ".so)");
  if (info.outputs.empty()) problems.push_back("declares no outputs");
  for (const auto& spec : info.params)
    if (spec.default_value.index() != static_cast<std::size_t>(spec.type))
      problems.push_back("parameter '" + spec.name + "' is declared " + param_type_name(spec.type) + " but its default " +
                         param_value_text(spec.default_value) + " is " +
                         param_type_name(static_cast<sdk::ParamType>(spec.default_value.index())) +
                         (spec.type == sdk::ParamType::Double ? " (write it as a double, e.g. 1.0)" : ""));
  if (problems.empty()) return;
  std::string msg = file.string() + ": invalid detector plugin:";
  for (const auto& p : problems) msg += "\n  " + p;
  throw PluginError(msg);
}

// A number that is the whole text, or nothing.
template <typename T, typename Parse>
std::optional<T> parse_whole(const std::string& text, Parse parse) {
  try {
    std::size_t used = 0;
    T v = parse(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

sdk::ParamValue parse_param(const std::string& plugin, const sdk::ParamSpec& spec, const std::string& text) {
  auto bad = [&](const char* expected) {
    return PluginParamError(spec.name, "detector " + plugin + ": parameter '" + spec.name + "' expects " + expected + ", got '" + text + "'");
  };
  switch (spec.type) {
    case sdk::ParamType::Bool:
      if (text == "true" || text == "yes" || text == "on") return true;
      if (text == "false" || text == "no" || text == "off") return false;
      throw bad("true or false");
    case sdk::ParamType::Int:
      if (auto v = parse_whole<int64_t>(text, [](const std::string& t, std::size_t* u) { return std::stoll(t, u); })) return *v;
      throw bad("an integer");
    case sdk::ParamType::Double:
      if (auto v = parse_whole<double>(text, [](const std::string& t, std::size_t* u) { return std::stod(t, u); })) return *v;
      throw bad("a number");
    case sdk::ParamType::String:
      return text;
  }
  throw bad("a value");
}

// The first +-inf among one example's scores and baselines, described ("" when there is none). The
// SDK's scores are finite or NaN (undefined); an infinity would rank first and poison every mean.
std::string infinite_value(const sdk::DetectorInfo& info, const sdk::Example& e, const sdk::ExampleScores& s) {
  const std::size_t lh = static_cast<std::size_t>(e.layers * e.heads);
  for (std::size_t o = 0; o < info.outputs.size(); ++o) {
    for (std::size_t k = 0; k < lh; ++k) {
      const float v = s.scores[o * lh + k];
      if (std::isinf(v))
        return "output " + info.outputs[o] + " is " + (v > 0 ? "+inf" : "-inf") + " at layer " +
               std::to_string(k / static_cast<std::size_t>(e.heads)) + ", head " +
               std::to_string(k % static_cast<std::size_t>(e.heads)) +
               " (scores must be finite, or NaN where the pattern is undefined)";
    }
    for (int64_t l = 0; l < e.layers; ++l) {
      const float b = s.baseline[o * static_cast<std::size_t>(e.layers) + static_cast<std::size_t>(l)];
      if (std::isinf(b))
        return "output " + info.outputs[o] + " has baseline " + (b > 0 ? "+inf" : "-inf") + " at layer " +
               std::to_string(l) + " (baselines must be finite, or NaN where the pattern is undefined)";
    }
  }
  return "";
}

}  // namespace

std::string param_type_name(sdk::ParamType t) {
  switch (t) {
    case sdk::ParamType::Bool: return "bool";
    case sdk::ParamType::Int: return "int";
    case sdk::ParamType::Double: return "double";
    case sdk::ParamType::String: return "string";
  }
  return "?";
}

std::string param_value_text(const sdk::ParamValue& v) {
  if (auto b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (auto i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto d = std::get_if<double>(&v)) {
    std::ostringstream s;
    s << *d;
    return s.str();
  }
  return std::get<std::string>(v);
}

PluginHost::PluginHost(std::vector<fs::path> extra) : path_(std::move(extra)) {
  for (const auto& dir : path_) {  // a misspelt folder would let a detector of that name come from elsewhere
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      throw PluginError("plugin folder " + dir.string() + ": " +
                        (ec && ec != std::errc::no_such_file_or_directory ? ec.message() : std::string("not found")) +
                        " (named in plugin_paths or --plugin-path)");
  }
  if (const char* env = std::getenv("ATTNSCAN_PLUGIN_PATH"); env && *env) {
    std::stringstream ss(env);
    std::string part;
    while (std::getline(ss, part, ':'))
      if (!part.empty()) path_.emplace_back(part);
  }
  path_.push_back(builtin_plugin_dir());
}

fs::path builtin_plugin_dir() {
  // Installed: PREFIX/bin/attnscan beside PREFIX/lib/attnscan/plugins, wherever PREFIX was moved.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "lib" / "attnscan" / "plugins";
    if (fs::is_directory(installed, ec)) return installed;
  }
  return ATTNSCAN_BUILD_PLUGIN_DIR;  // run from the build tree
}

PluginFile probe_plugin(const fs::path& file) {
  std::error_code ec;
  const auto status = fs::status(file, ec);  // a symlink loop or an unreadable folder: a reason, not a raw error
  if (ec && ec != std::errc::no_such_file_or_directory) throw PluginError(file.string() + ": cannot use: " + ec.message());
  if (!fs::exists(status)) throw PluginError(file.string() + ": plugin file not found");
  auto lib = std::make_shared<boost::dll::shared_library>();
  try {
    lib->load(boost::dll::fs::path(file.string()));
  } catch (const std::exception& e) {
    throw PluginError(file.string() + ": cannot load plugin: " + e.what());
  }
  if (!lib->has("attnscan_detector_api_version"))
    throw PluginError(file.string() + ": not an attnscan detector plugin (no attnscan_detector_api_version)");
  const int version = lib->get<ApiVersionFn>("attnscan_detector_api_version")();
  if (version != sdk::kApiVersion)
    throw PluginError(file.string() + ": plugin built for detector API version " + std::to_string(version) +
                      ", this attnscan provides version " + std::to_string(sdk::kApiVersion) + "; rebuild it");
  for (const char* sym : {"attnscan_detector_abi", "attnscan_detector_info", "attnscan_detector_create",
                          "attnscan_detector_destroy"})
    if (!lib->has(sym)) throw PluginError(file.string() + ": not an attnscan detector plugin (no " + sym + ")");
  // Nothing of C++ type crosses before the fingerprints agree.
  const char* abi = lib->get<AbiFn>("attnscan_detector_abi")();
  const std::string host_abi = sdk::abi_fingerprint();
  if (!abi || host_abi != abi)
    throw PluginError(file.string() + ": built with another C++ ABI than this attnscan (" +
                      (abi ? abi_difference(abi, host_abi) : std::string("no fingerprint")) +
                      "); rebuild it with the same compiler settings as attnscan");
  char error[kErrorSize] = "";
  const sdk::DetectorInfo* info = lib->get<InfoFn>("attnscan_detector_info")(error, sizeof error);
  if (!info)
    throw PluginError(file.string() + ": plugin info failed: " + (error[0] ? error : "it returned no detector info"));
  PluginFile p;
  p.file = file;
  p.info = *info;
  check_info(file, p.info);
  p.library = lib;
  return p;
}

namespace {

LoadedDetector create_detector(const PluginFile& p, const std::map<std::string, std::string>& raw) {
  LoadedDetector d;
  d.file = p.file;
  d.info = p.info;
  std::error_code ec;
  d.shipped = fs::equivalent(p.file.parent_path(), builtin_plugin_dir(), ec);
  std::set<std::string> known;
  for (const auto& spec : d.info.params) {
    known.insert(spec.name);
    auto it = raw.find(spec.name);
    d.params[spec.name] = it == raw.end() ? spec.default_value : parse_param(d.info.name, spec, it->second);
  }
  for (const auto& [name, value] : raw)
    if (!known.count(name)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw PluginParamError(name, "detector " + d.info.name + ": unknown parameter '" + name + "' (parameters: " +
                                       (list.empty() ? "none" : list) + ")");
    }
  auto lib = std::static_pointer_cast<boost::dll::shared_library>(p.library);
  auto destroy = lib->get<DestroyFn>("attnscan_detector_destroy");
  char error[kErrorSize] = "";
  sdk::Detector* raw_detector = lib->get<CreateFn>("attnscan_detector_create")(&d.params, error, sizeof error);
  if (!raw_detector)
    throw PluginError("detector " + d.info.name + " (" + p.file.string() + "): cannot be created: " +
                      (error[0] ? error : "the plugin returned no detector"));
  // The deleter holds the library, so it is unloaded only after the detector is destroyed.
  d.detector = std::shared_ptr<const sdk::Detector>(raw_detector, [lib, destroy](const sdk::Detector* ptr) {
    destroy(const_cast<sdk::Detector*>(ptr));
  });
  return d;
}

}  // namespace

LoadedDetector PluginHost::load_file(const fs::path& file, const std::map<std::string, std::string>& raw) const {
  return create_detector(probe_plugin(file), raw);
}

std::vector<PluginFile> PluginHost::discover(std::vector<std::string>* problems) const {
  return discover_files(problems, nullptr);
}

std::vector<PluginFile> PluginHost::discover_files(std::vector<std::string>* problems,
                                                   std::vector<SkippedPlugin>* skipped) const {
  std::vector<PluginFile> out;
  std::set<fs::path> seen;  // a folder named twice in the path is searched once
  auto skip = [&](const fs::path& file, const std::string& reason) {
    if (problems) problems->push_back(reason);
    if (skipped) skipped->push_back({file, reason});
  };
  for (const auto& dir : path_) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    const fs::path canonical = fs::weakly_canonical(dir, ec);
    if (!seen.insert(ec ? dir : canonical).second) continue;
    std::vector<fs::path> files;
    fs::directory_iterator it(dir, ec), end;
    if (ec) {
      skip(dir, dir.string() + ": cannot list plugin folder: " + ec.message());
      continue;
    }
    for (; it != end; it.increment(ec)) {  // no member that throws: entries are only named here
      if (ec) {
        skip(dir, dir.string() + ": cannot list plugin folder: " + ec.message());
        break;
      }
      if (it->path().extension() == ".so") files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      try {
        out.push_back(probe_plugin(f));
      } catch (const PluginError& e) {
        skip(f, e.what());
      } catch (const std::exception& e) {  // anything else a broken file can raise: still only this file
        skip(f, f.string() + ": cannot use: " + e.what());
      }
    }
  }
  return out;
}

std::map<std::string, std::vector<fs::path>> PluginHost::duplicates(const std::vector<PluginFile>& found) {
  std::map<std::string, std::vector<fs::path>> by_name, dup;
  for (const auto& p : found) by_name[p.info.name].push_back(p.file);
  for (auto& [name, files] : by_name)
    if (files.size() > 1) dup[name] = files;
  return dup;
}

const std::vector<PluginFile>& PluginHost::found() const {
  if (!found_) found_ = discover_files(nullptr, &skipped_);
  return *found_;
}

LoadedDetector PluginHost::load(const std::string& name, const std::map<std::string, std::string>& params) const {
  const auto& plugins = found();
  std::vector<const PluginFile*> matches;
  for (const auto& p : plugins)
    if (p.info.name == name) matches.push_back(&p);
  // A file named for the detector that does not load is never passed over for another one.
  for (const auto& s : skipped_)
    if (s.file.stem().string() == name && s.file.extension() == ".so") {
      std::string msg = "detector '" + name + "': the plugin file " + s.file.string() + " cannot be used:\n  " + s.reason;
      if (!matches.empty())
        msg += "\nit would shadow " + matches.front()->file.string() + " (version " + matches.front()->info.version +
               "), which is not used in its place";
      throw PluginError(msg + "\nfix or remove " + s.file.string() + " (or narrow plugin_paths / ATTNSCAN_PLUGIN_PATH)");
    }
  if (matches.size() == 1) return create_detector(*matches.front(), params);
  if (matches.size() > 1) {
    std::string files;
    for (const auto* m : matches) files += "\n  " + m->file.string() + " (version " + m->info.version + ")";
    throw PluginError("detector '" + name + "' is declared by " + std::to_string(matches.size()) +
                      " plugin files on the search path:" + files +
                      "\nremove or rename all but one (or narrow plugin_paths / ATTNSCAN_PLUGIN_PATH)");
  }
  std::string available, where;
  for (const auto& p : plugins) available += (available.empty() ? "" : ", ") + p.info.name;
  for (const auto& dir : path_) where += (where.empty() ? "" : ":") + dir.string();
  throw PluginError("no detector plugin '" + name + "' (available: " + (available.empty() ? "none" : available) +
                    "; searched " + where + ")");
}

std::vector<sdk::ExampleScores> LoadedDetector::score(const std::vector<sdk::Example>& given,
                                                      const std::vector<MixingMaps>& mixing) const {
  std::vector<std::vector<float>> storage;
  std::vector<sdk::Example> mapped;
  if (map != AttentionMap::Weights) mapped = map_examples(map, given, mixing, storage);
  const std::vector<sdk::Example>& batch = map == AttentionMap::Weights ? given : mapped;
  std::vector<sdk::ExampleScores> out(batch.size());
  auto fail = [&](const std::string& id, const std::string& what) {
    return PluginError("detector " + info.name + " failed on example " + id + ": " + what);
  };
  auto run = [&](const std::vector<sdk::Example>& b, std::vector<sdk::ExampleScores>& o) {
    try {
      detector->score(b, o);
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    } catch (...) {
      return std::string("unknown exception");
    }
  };
  if (std::string err = run(batch, out); !err.empty()) {
    for (const auto& e : batch) {  // find the example that fails alone, to name it
      std::vector<sdk::ExampleScores> one(1);
      if (std::string e1 = run({e}, one); !e1.empty()) throw fail(e.id, e1);
    }
    throw fail(batch.empty() ? "?" : batch.front().id + " (batch)", err);
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const auto& e = batch[i];
    const std::size_t want = info.outputs.size() * static_cast<std::size_t>(e.layers * e.heads),
                      want_baselines = info.outputs.size() * static_cast<std::size_t>(e.layers);
    if (out[i].scores.size() != want || out[i].baseline.size() != want_baselines)
      throw fail(e.id, "returned " + std::to_string(out[i].scores.size()) + " scores and " +
                           std::to_string(out[i].baseline.size()) + " baselines, expected " + std::to_string(want) +
                           " and " + std::to_string(want_baselines) + " (one per output and layer)");
    if (std::string bad = infinite_value(info, e, out[i]); !bad.empty()) throw fail(e.id, bad);
  }
  return out;
}

}  // namespace attnscan
