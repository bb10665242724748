// Misbehaving plugins (tests/plugins/faulty): infinities refused at the boundary, a broken file that
// would be passed over for another of its name, symlink loops on the search path, and detectors that
// crash, exit or hang, contained by the isolated DetectorRunner (which leaves attnscan's own detectors in
// this process by default).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "plugin_host/plugin_host.hpp"
#include "plugin_host/detector_runner.hpp"

using namespace attnscan;
namespace fs = std::filesystem;

namespace {

const fs::path kFaults = ATTNSCAN_FAULT_PLUGIN_DIR;

// "[CLS] first x [SEP] y [SEP]" with uniform attention over 2 layers x 3 heads.
struct Owned {
  sdk::Example example;
  std::vector<float> attention;
};

std::unique_ptr<Owned> example(const std::string& id, const std::string& first) {
  auto o = std::make_unique<Owned>();
  sdk::Example& e = o->example;
  e.id = id;
  using sdk::TokenRole;
  e.tokens = {{"[CLS]", 101, TokenRole::Begin, 0, 0, -1, "[CLS]"},     {first, 1, TokenRole::Content, 0, 0, 0, first},
              {"x", 2, TokenRole::Content, 0, 0, 1, "x"},                {"[SEP]", 102, TokenRole::Separator, 0, 0, -1, "[SEP]"},
              {"y", 3, TokenRole::Content, 1, 1, 0, "y"},                {"[SEP]", 102, TokenRole::Separator, 1, 1, -1, "[SEP]"}};
  e.layers = 2;
  e.heads = 3;
  const std::size_t n = e.size();
  o->attention.assign(static_cast<std::size_t>(e.layers * e.heads) * n * n, 1.0f / static_cast<float>(n));
  e.attention = o->attention.data();
  return o;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// This process's scratch folder, removed with everything in it when the tests end.
const fs::path& scratch_root() {
  static const struct Root {
    fs::path path = fs::temp_directory_path() / ("attnscan-plugin-faults-" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } root;
  return root.path;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST(DetectorValues, InfinityIsAnErrorNamingOutputExampleLayerAndHead) {
  auto d = PluginHost({kFaults}).load("returns_inf", {});
  auto fine = example("row-1", "fine"), undefined = example("row-2", "nan");
  auto inf = example("row-7", "boom"), minus = example("row-8", "minus");
  const auto ok = d.score({fine->example, undefined->example});
  EXPECT_TRUE(std::isnan(ok[1].scores[0]));  // NaN is "undefined": allowed
  EXPECT_EQ(message_of([&] { d.score({fine->example, inf->example}); }),
            "detector returns_inf failed on example row-7: output value is +inf at layer 1, head 2 "
            "(scores must be finite, or NaN where the pattern is undefined)");
  EXPECT_EQ(message_of([&] { d.score({minus->example}); }),
            "detector returns_inf failed on example row-8: output value has baseline -inf at layer 1 "
            "(baselines must be finite, or NaN where the pattern is undefined)");
}

TEST(PluginSearch, BrokenFileOfTheAskedNameIsAnErrorNotAFallback) {
  const fs::path dir = scratch("shadow");
  {
    std::ofstream(dir / "next_token.so") << "not a shared library\n";
  }
  const std::string e = message_of([&] { PluginHost({dir}).load("next_token", {}); });
  EXPECT_NE(e.find("detector 'next_token': the plugin file " + (dir / "next_token.so").string() + " cannot be used:"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("cannot load plugin"), std::string::npos) << e;                                    // the reason
  EXPECT_NE(e.find("it would shadow " + (builtin_plugin_dir() / "next_token.so").string()), std::string::npos) << e;
  // A real library that is not a detector plugin is refused the same way.
  fs::remove(dir / "next_token.so");
  fs::copy_file(kFaults / "throwing.so", dir / "next_token.so");
  const std::string e2 = message_of([&] { PluginHost({dir}).load("next_token", {}); });
  EXPECT_NE(e2.find("declares detector 'throwing' but the file is named next_token.so"), std::string::npos) << e2;
  EXPECT_NE(e2.find("it would shadow"), std::string::npos) << e2;
  EXPECT_NO_THROW(PluginHost({dir}).load("prev_token", {}));  // other names are not affected
}

TEST(PluginSearch, MissingPluginFolderIsAnError) {
  const fs::path missing = scratch("gone") / "plugins-typo";
  EXPECT_EQ(message_of([&] { PluginHost({missing}); }),
            "plugin folder " + missing.string() + ": not found (named in plugin_paths or --plugin-path)");
}

TEST(PluginSearch, SymlinkLoopIsSkippedWithItsReason) {
  const fs::path dir = scratch("loop");
  fs::create_symlink("loop.so", dir / "loop.so");
  fs::create_symlink("b.so", dir / "a.so");
  fs::create_symlink("a.so", dir / "b.so");
  std::vector<std::string> problems;
  std::vector<PluginFile> found;
  ASSERT_NO_THROW(found = PluginHost({dir}).discover(&problems));
  EXPECT_FALSE(found.empty());  // the built-in detectors are still found
  int loops = 0;
  for (const auto& p : problems) loops += p.find("Too many levels of symbolic links") != std::string::npos;
  EXPECT_EQ(loops, 3) << ::testing::PrintToString(problems);
  EXPECT_NO_THROW(PluginHost({dir}).load("next_token", {}));
  const std::string e = message_of([&] { PluginHost({dir}).load("loop", {}); });
  EXPECT_NE(e.find((dir / "loop.so").string() + ": cannot use: Too many levels of symbolic links"), std::string::npos)
      << e;
}

namespace {

struct Isolated {
  std::vector<LoadedDetector> detectors;
  std::atomic<bool> stop{false};
  std::unique_ptr<DetectorRunner> runner;
  Isolated(const std::vector<std::string>& names, double timeout_s, DetectorIsolation isolation = DetectorIsolation::All) {
    for (const auto& n : names) detectors.push_back(PluginHost({kFaults}).load(n, {}));
    DetectorRunOptions o;
    o.isolation = isolation;
    o.workers = 2;
    o.timeout_s = timeout_s;
    o.stop = &stop;
    runner = std::make_unique<DetectorRunner>(detectors, o);
  }
};

void expect_same_scores(const std::vector<std::vector<sdk::ExampleScores>>& x,
                        const std::vector<std::vector<sdk::ExampleScores>>& y) {
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t d = 0; d < x.size(); ++d) {
    ASSERT_EQ(x[d].size(), y[d].size());
    for (std::size_t k = 0; k < x[d].size(); ++k) {
      EXPECT_EQ(x[d][k].scores, y[d][k].scores) << d << " " << k;
      EXPECT_EQ(x[d][k].baseline, y[d][k].baseline) << d << " " << k;
    }
  }
}

}  // namespace

TEST(DetectorIsolation, SameScoresAsInProcess) {
  Isolated iso({"next_token", "entropy", "delimiter"}, 10),
      plain({"next_token", "entropy", "delimiter"}, 10, DetectorIsolation::None);
  auto a = example("a", "fine"), b = example("b", "other");
  const auto x = iso.runner->score({a->example, b->example});
  ASSERT_EQ(x.size(), 3u);
  expect_same_scores(x, plain.runner->score({a->example, b->example}));
}

// The default: attnscan's own detectors (its plugin folder) in this process, a plugin folder's in a worker,
// each detector's scores in its place, and the plugin's crash still contained and named.
TEST(DetectorIsolation, ShippedDetectorsRunHerePluginsInWorkers) {
  Isolated mixed({"next_token", "segfault", "entropy"}, 10, DetectorIsolation::Plugins),
      all({"next_token", "segfault", "entropy"}, 10, DetectorIsolation::All);
  EXPECT_TRUE(mixed.detectors[0].shipped);
  EXPECT_FALSE(mixed.detectors[1].shipped);
  EXPECT_TRUE(mixed.detectors[2].shipped);
  EXPECT_FALSE(mixed.runner->isolates(0));
  EXPECT_TRUE(mixed.runner->isolates(1));
  EXPECT_FALSE(mixed.runner->isolates(2));
  EXPECT_TRUE(mixed.runner->scores_in_process());
  EXPECT_FALSE(all.runner->scores_in_process());
  auto a = example("a", "fine"), b = example("b", "other");
  const auto x = mixed.runner->score({a->example, b->example});
  ASSERT_EQ(x.size(), 3u);
  expect_same_scores(x, all.runner->score({a->example, b->example}));
  auto bad = example("row-9", "boom");
  const std::string e = message_of([&] { mixed.runner->score({a->example, bad->example}); });
  EXPECT_EQ(e.rfind("detector segfault on example row-9: the detector crashed (signal 11", 0), 0u) << e;
}

TEST(DetectorIsolation, OptionValuesAndTheirOldSpellings) {
  EXPECT_EQ(detector_isolation_named("plugins"), DetectorIsolation::Plugins);
  EXPECT_EQ(detector_isolation_named("all"), DetectorIsolation::All);
  EXPECT_EQ(detector_isolation_named("true"), DetectorIsolation::All);
  EXPECT_EQ(detector_isolation_named("none"), DetectorIsolation::None);
  EXPECT_EQ(detector_isolation_named("false"), DetectorIsolation::None);
  EXPECT_EQ(message_of([] { detector_isolation_named("some"); }),
            "pipeline.detector_isolation: 'some' (expected plugins, all or none)");
}

TEST(DetectorIsolation, ThrowingDetectorKeepsItsMessageAndTheWorker) {
  Isolated iso({"throwing"}, 10);
  auto ok = example("row-1", "fine"), bad = example("row-2", "boom");
  EXPECT_EQ(message_of([&] { iso.runner->score({ok->example, bad->example}); }),
            "detector throwing failed on example row-2: boom token seen");
  EXPECT_NO_THROW(iso.runner->score({ok->example}));
}

TEST(DetectorIsolation, CrashIsNamed) {
  Isolated iso({"next_token", "segfault"}, 10);
  auto ok = example("row-1", "fine"), bad = example("row-9", "boom");
  EXPECT_NO_THROW(iso.runner->score({ok->example}));
  const std::string e = message_of([&] { iso.runner->score({ok->example, bad->example}); });
  EXPECT_EQ(e.rfind("detector segfault on example row-9: the detector crashed (signal 11", 0), 0u) << e;
}

TEST(DetectorIsolation, ExitIsNamed) {
  Isolated iso({"exit_zero"}, 10);
  auto bad = example("row-3", "boom");
  EXPECT_EQ(message_of([&] { iso.runner->score({bad->example}); }),
            "detector exit_zero on example row-3: the detector called exit(0) (a detector returns scores or throws; "
            "it must not end the process)");
}

TEST(DetectorIsolation, HangIsEndedAfterTheTimeout) {
  Isolated iso({"endless_loop"}, 1);
  auto ok = example("row-1", "fine"), bad = example("row-5", "boom");
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = message_of([&] { iso.runner->score({ok->example, bad->example}); });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(e, "detector endless_loop on example row-5: the detector did not finish within 1 s "
               "(pipeline.detector_timeout; raise it if this detector is slow, not stuck)");
  EXPECT_LT(secs, 5.0);
}

TEST(DetectorIsolation, StopEndsAHangingDetectorWithinSeconds) {
  Isolated iso({"endless_loop"}, 0);  // no timeout: only the stop request ends it
  auto bad = example("row-5", "boom");
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    iso.stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(iso.runner->score({bad->example}), DetectorsStopped);
  stopper.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}
