#pragma once
// The relations the dependency detector scores: Universal Dependencies v2 and the ClearNLP labels
// of spaCy's English models, in one list (ROOT/root is not scored). A UD subtype ("nmod:poss",
// "obl:tmod") counts as its universal relation (the part before ':').
#include <array>
#include <cstring>
#include <string>

namespace attnscan::dependency {

inline constexpr std::array<const char*, 57> kRelations = {
    "acl",       "acomp",    "advcl",     "advmod",     "agent",    "amod",      "appos",    "attr",
    "aux",       "auxpass",  "case",      "cc",         "ccomp",    "clf",       "compound", "conj",
    "cop",       "csubj",    "csubjpass", "dative",     "dep",      "det",       "discourse", "dislocated",
    "dobj",      "expl",     "fixed",     "flat",       "goeswith", "iobj",      "intj",     "list",
    "mark",      "meta",     "neg",       "nmod",       "npadvmod", "nsubj",     "nsubjpass", "nummod",
    "obj",       "obl",      "oprd",      "orphan",     "parataxis", "pcomp",    "pobj",     "poss",
    "preconj",   "predet",   "prep",      "prt",        "punct",    "quantmod",  "relcl",    "reparandum",
    "xcomp"};

// Index of `relation` (its part before ':') in kRelations, or -1.
inline int relation_index(const std::string& relation) {
  const std::string base = relation.substr(0, relation.find(':'));
  for (std::size_t i = 0; i < kRelations.size(); ++i)
    if (base == kRelations[i]) return static_cast<int>(i);
  return -1;
}

}  // namespace attnscan::dependency
