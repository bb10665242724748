// Run configuration: defaults < YAML < --set, located errors, and a dump that loads back unchanged.
#include <gtest/gtest.h>

#include <fstream>

#include "config/run_config.hpp"
#include "support/test_paths.hpp"

using namespace attnscan;

namespace {

std::filesystem::path yaml(const std::string& name, const std::string& text) {
  auto path = test::scratch_dir("cfg_" + name) / "run.yaml";
  std::ofstream(path) << text;
  return path;
}

std::string config_error(const std::string& name, const std::string& text) {
  auto path = yaml(name, text);
  try {
    ConfigBuilder b;
    b.load_yaml(path);
    b.build();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << text;
  return {};
}

}  // namespace

TEST(RunConfig, DefaultsYamlAndSetInThatOrder) {
  auto path = yaml("order", "dataset:\n  path: pairs.tsv\n  label: score\nengine:\n  threads: 2\n  precision: bf16\n");
  ConfigBuilder b;
  b.load_yaml(path);
  b.set("engine.threads=1");
  auto c = b.build();
  EXPECT_EQ(c.dataset.path, "pairs.tsv");
  EXPECT_EQ(c.dataset.delimiter, '\t');
  EXPECT_EQ(c.dataset.sentence_a.name, "sentence1");  // default
  EXPECT_EQ(c.dataset.label.name, "score");           // YAML
  EXPECT_EQ(c.engine.precision, Precision::BF16);     // YAML
  EXPECT_EQ(c.engine.threads, 1);                     // --set beats YAML
}

TEST(RunConfig, ColumnsByIndexAndCsvDelimiter) {
  ConfigBuilder b;
  b.set("dataset.format=csv");
  b.set("dataset.path=x.csv");
  b.set("dataset.sentence_a=5");
  b.set("dataset.header=false");
  auto c = b.build();
  EXPECT_EQ(c.dataset.delimiter, ',');
  EXPECT_EQ(c.dataset.sentence_a.index, 5);
  EXPECT_FALSE(c.dataset.header);
}

TEST(RunConfig, DumpLoadsBackToTheSameConfig) {
  ConfigBuilder b;
  b.set("dataset.path=my data.tsv");
  b.set("engine.max_length=128");
  auto path = yaml("dump", b.dump());
  ConfigBuilder again;
  again.load_yaml(path);
  EXPECT_EQ(again.dump(), b.dump());
  EXPECT_NE(b.dump().find("max_length: 128"), std::string::npos) << b.dump();
}

TEST(RunConfigErrors, UnknownKeyNamesLineAndSuggestion) {
  auto msg = config_error("unknown", "dataset:\n  path: x.tsv\n  formt: csv\n");
  EXPECT_NE(msg.find("run.yaml:3: unknown key 'dataset.formt' (did you mean 'dataset.format'?)"), std::string::npos) << msg;
}

TEST(RunConfig, DetectorIsolationIsPluginsByDefaultAndKeepsItsOldSpellings) {
  ConfigBuilder defaults;
  defaults.set("dataset.path=pairs.tsv");
  EXPECT_EQ(defaults.build().detector_isolation, "plugins");
  for (const std::string value : {"plugins", "all", "none", "true", "false"}) {
    ConfigBuilder b;
    b.set("dataset.path=pairs.tsv");
    b.set("pipeline.detector_isolation=" + value);
    EXPECT_EQ(b.build().detector_isolation, value);
  }
  EXPECT_NE(config_error("isolation", "pipeline:\n  detector_isolation: some\n")
                .find("run.yaml:2: pipeline.detector_isolation: 'some' is not one of plugins, all, none, true, false"),
            std::string::npos);
}

TEST(RunConfigErrors, WrongTypesAndRanges) {
  EXPECT_NE(config_error("type", "engine:\n  threads: many\n").find("run.yaml:2: engine.threads: expected an integer, got 'many'"),
            std::string::npos);
  EXPECT_NE(config_error("range", "engine:\n  threads: -3\n").find("run.yaml:2: engine.threads: -3 is out of range"),
            std::string::npos);
  EXPECT_NE(config_error("choice", "dataset:\n  quoting: csv\n").find("run.yaml:2: dataset.quoting: 'csv' is not one of none, rfc4180"),
            std::string::npos);
  EXPECT_NE(config_error("bool", "dataset:\n  header: maybe\n").find("run.yaml:2: dataset.header: expected true or false"),
            std::string::npos);
  EXPECT_NE(config_error("map", "engine: fast\n").find("run.yaml:1: unknown key 'engine'"), std::string::npos);
  EXPECT_NE(config_error("list", "model: [a, b]\n").find("run.yaml:1: model: expected a single value, not a list"),
            std::string::npos);
  EXPECT_NE(config_error("syntax", "dataset:\n  path: [unclosed\n").find("invalid YAML"), std::string::npos);
  EXPECT_NE(config_error("device", "engine:\n  device: tpu\n").find("run.yaml:2: engine.device: device 'tpu'"), std::string::npos);
  EXPECT_NE(config_error("needs", "dataset:\n  format: parallel\n").find("needs dataset.s1 and dataset.s2"), std::string::npos);
}

TEST(RunConfigErrors, SetArgumentIsNamed) {
  ConfigBuilder b;
  try {
    b.set("engine.thread=2");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--set engine.thread=2: unknown key 'engine.thread' (did you mean 'engine.threads'?)");
  }
  EXPECT_THROW(b.set("novalue"), ConfigError);
}

TEST(RunConfig, DetectorMapsAreParsedDumpedAndPartOfTheIdentity) {
  auto path = yaml("maps", "dataset:\n  path: x.tsv\ndetectors:\n  - delimiter\n  - {name: delimiter, as: delimiter_norm, map: norm}\n"
                           "  - {name: delimiter, as: delimiter_alti, map: alti_rollout}\n"
                           "output:\n  value_norms: true\n  rollout: true\n  alti: true\n");
  ConfigBuilder b;
  b.load_yaml(path);
  auto c = b.build();
  ASSERT_EQ(c.detectors.size(), 3u);
  EXPECT_EQ(c.detectors[0].map, "weights");
  EXPECT_EQ(c.detectors[1].map, "norm");
  EXPECT_EQ(c.detectors[2].map, "alti_rollout");
  EXPECT_TRUE(c.value_norms);
  EXPECT_EQ(c.layer_maps, (std::vector<std::string>{"rollout", "alti", "alti_rollout"}));  // output.alti stores both
  EXPECT_NE(b.identity().find("delimiter as delimiter_norm on norm("), std::string::npos) << b.identity();
  ConfigBuilder again;
  again.load_yaml(yaml("maps_dump", b.dump()));
  EXPECT_EQ(again.dump(), b.dump());
  EXPECT_EQ(again.build().detectors[1].map, "norm");
}

TEST(RunConfigErrors, UnknownDetectorMapNamesItsLine) {
  EXPECT_NE(config_error("badmap", "detectors:\n  - delimiter\n  - {name: entropy, map: norms}\n")
                .find("run.yaml:3: detectors: entropy: map: 'norms': expected weights, norm, rollout, value_zeroing, alti or "
                      "alti_rollout"),
            std::string::npos);
}

TEST(RunConfig, ImportanceOptionsAreReadAndPartOfTheIdentity) {
  auto path = yaml("importance", "dataset:\n  path: x.tsv\n  label: label\nimportance:\n  ablation: true\n"
                                 "  gradient: classification\n  every: 4\n  mlm_every: 5\n");
  ConfigBuilder b;
  b.load_yaml(path);
  const auto c = b.build();
  EXPECT_TRUE(c.importance_ablation);
  EXPECT_EQ(c.importance_gradient, "classification");
  EXPECT_EQ(c.importance_every, 4u);
  EXPECT_EQ(c.mlm_every, 5);
  EXPECT_NE(b.identity().find("importance.every: 4\n"), std::string::npos) << b.identity();
  EXPECT_NE(b.identity().find("importance.gradient: classification\n"), std::string::npos) << b.identity();
}

TEST(RunConfigErrors, ImportanceNeedsLabelsFp32AndItsName) {
  EXPECT_NE(config_error("imp_label", "dataset:\n  path: x.tsv\nimportance:\n  gradient: classification\n")
                .find("importance.gradient classification needs each example's class: set dataset.label"),
            std::string::npos);
  EXPECT_NE(config_error("imp_bf16", "dataset:\n  path: x.tsv\nengine:\n  precision: bf16\nimportance:\n  gradient: mlm\n")
                .find("importance.gradient needs engine.precision fp32"),
            std::string::npos);
  EXPECT_NE(config_error("imp_name", "dataset:\n  path: x.tsv\nimportance:\n  ablation: true\ndetectors:\n"
                                     "  - {name: entropy, as: importance}\n")
                .find("run.yaml:6: the detector name 'importance' is taken by importance.*"),
            std::string::npos);
  EXPECT_NE(config_error("imp_kind", "dataset:\n  path: x.tsv\nimportance:\n  gradient: loss\n").find("importance.gradient"),
            std::string::npos);
}

// dataset.pair_separator: a newline by default, set in YAML or --set (a YAML scalar, so "\n" escapes work in
// double quotes), loaded back from the dump, part of the identity on one line, a typo named.
TEST(RunConfig, PairSeparatorIsANewlineByDefaultAndReadLikeEveryOption) {
  ConfigBuilder defaults;
  defaults.set("dataset.path=x.tsv");
  EXPECT_EQ(defaults.build().pair_separator, "\n");
  EXPECT_NE(defaults.identity().find("dataset.pair_separator: \"\\n\"\n"), std::string::npos) << defaults.identity();
  for (const auto& o : config_options())
    if (o.key == "dataset.pair_separator") EXPECT_EQ(o.default_value, "\"\\n\"");  // --help shows it on one line
  ConfigBuilder b;
  b.load_yaml(yaml("separator", "dataset:\n  path: x.tsv\n  pair_separator: \" ||| \"\n"));
  EXPECT_EQ(b.build().pair_separator, " ||| ");
  EXPECT_NE(b.identity().find("dataset.pair_separator:  ||| \n"), std::string::npos) << b.identity();
  b.set("dataset.pair_separator=\"\\n\\n\"");
  EXPECT_EQ(b.build().pair_separator, "\n\n");
  ConfigBuilder again;
  again.load_yaml(yaml("separator_dump", b.dump()));
  EXPECT_EQ(again.build().pair_separator, "\n\n");
  EXPECT_EQ(again.identity(), b.identity());
  b.set("dataset.pair_separator=");
  EXPECT_EQ(b.build().pair_separator, "");
  EXPECT_NE(config_error("separator_typo", "dataset:\n  path: x.tsv\n  pair_seperator: x\n")
                .find("unknown key 'dataset.pair_seperator' (did you mean 'dataset.pair_separator'?)"),
            std::string::npos);
}
