// Line-aligned parallel files: line i of s1, s2 (and labels) form pair i. Unequal line counts are
// an error of the whole dataset, not of one row.
#include <memory>

#include "dataset/line_source.hpp"
#include "dataset/readers.hpp"

namespace attnscan {

namespace {

class ParallelReader : public PairReader {
 public:
  explicit ParallelReader(const DatasetSpec& spec) : spec_(spec), s1_(spec.s1), s2_(spec.s2) {
    policy_ = spec.on_bad_row;
    if (!spec.labels.empty()) labels_ = std::make_unique<LineSource>(spec.labels);
  }

  double fraction() const override { return s1_.fraction(); }

  std::optional<PairRecord> next() override {
    std::string a, b, label;
    for (;;) {
      bool has_a = s1_.next(a), has_b = s2_.next(b);
      bool has_l = labels_ ? labels_->next(label) : has_a;
      if (!has_a && !has_b && !has_l) return std::nullopt;
      if (!(has_a && has_b && has_l)) throw DatasetError(length_mismatch(has_a, has_b));
      ++read_;
      PairRecord rec;
      rec.source_row = s1_.line_number();
      rec.a = std::move(a);
      rec.b = std::move(b);
      if (labels_) rec.label = label;
      if (finish(spec_, spec_.s1, rec)) return rec;
    }
  }

 private:
  std::string length_mismatch(bool has_a, bool has_b) const {
    const LineSource* ended = !has_a ? &s1_ : !has_b ? &s2_ : labels_.get();
    const LineSource* longer = has_a ? &s1_ : has_b ? &s2_ : labels_.get();
    return ended->path().string() + ":" + std::to_string(ended->line_number() + 1) + ": file ends after " +
           std::to_string(ended->line_number()) + " lines but " + longer->path().string() +
           " has more: parallel files must have equal line counts";
  }

  DatasetSpec spec_;
  LineSource s1_, s2_;
  std::unique_ptr<LineSource> labels_;
};

}  // namespace

std::unique_ptr<PairReader> make_parallel_reader(const DatasetSpec& spec) {
  return std::make_unique<ParallelReader>(spec);
}

}  // namespace attnscan
