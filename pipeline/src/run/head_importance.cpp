#include "run/head_importance.hpp"

#include "common/error.hpp"

namespace attnscan {

// One description and parameter list for both outputs: the layout stores them per score group
// (scores/importance), as a detector's.
std::vector<ScoreOutput> importance_outputs(const ImportanceSettings& s) {
  std::vector<ScoreOutput> out;
  if (!s.enabled()) return out;
  std::string description = "head importance per example (docs/analyses.md): ";
  std::string params = "every=" + std::to_string(s.every);
  if (s.ablation) {
    description += "ablation = 1 - cos(e, e without the head), e the mean last hidden state over the example's tokens, "
                   "the head's gate at 0";
    params += ", ablation=true";
  }
  if (s.head) {
    description += std::string(s.ablation ? "; " : "") + "gradient = |dL/dxi| at xi = 1 (Michel et al. 2019), L the loss of the " +
                   s.head->description;
    params += std::string(", gradient=") + to_string(s.head->objective);
    if (s.head->objective == HeadObjective::Mlm) params += ", mlm_every=" + std::to_string(s.mlm_every);
  }
  if (s.ablation) out.push_back({kImportanceDetector, kAblationOutput, "1", description, params, "", "head gates"});
  if (s.head) out.push_back({kImportanceDetector, kGradientOutput, "1", description, params, "", "head gates"});
  return out;
}

std::vector<int64_t> mlm_masked_positions(const Encoding& e, int64_t every) {
  std::vector<int64_t> out;
  int64_t content = 0;
  for (std::size_t t = 0; t < e.size(); ++t) {
    if (e.special[t]) continue;
    if (content++ % every == 0) out.push_back(static_cast<int64_t>(t));
  }
  return out;
}

int64_t record_class(const ImportanceSettings& s, const PairRecord& r) {
  const std::string where = s.label_file + ":" + std::to_string(r.source_row) + ": ";
  if (!r.label)
    throw BadRowError(where + "no label (importance.gradient classification needs each sampled row's class in dataset.label)",
                      false);
  if (auto c = class_index(*s.head, *r.label)) return *c;
  std::string names;
  for (const auto& [name, id] : s.head->label2id) names += (names.empty() ? "" : ", ") + name;
  throw BadRowError(where + "label '" + *r.label + "' is no class of the " + s.head->description + ": expected 0.." +
                        std::to_string(s.head->outputs - 1) +
                        (names.empty() ? "" : " or one of config.json's label2id: " + names),
                    false);
}

ImportanceRequest importance_request(const ImportanceSettings& s, const std::vector<const Encoding*>& rows,
                                     const std::vector<int64_t>& classes) {
  ImportanceRequest req;
  req.ablation = s.ablation;
  req.gradient = s.head != nullptr;
  if (s.head && s.head->objective == HeadObjective::Classification) req.labels = classes;
  if (s.head && s.head->objective == HeadObjective::Mlm) {
    req.mask_id = s.mask_id;
    for (const auto* e : rows) req.masked.push_back(mlm_masked_positions(*e, s.mlm_every));
  }
  return req;
}

}  // namespace attnscan
