#pragma once
// The reader implementations behind open_dataset(), one file each.
#include <memory>

#include "dataset/dataset.hpp"

namespace attnscan {

std::unique_ptr<PairReader> make_delimited_reader(const DatasetSpec& spec);
std::unique_ptr<PairReader> make_jsonl_reader(const DatasetSpec& spec);
std::unique_ptr<PairReader> make_parallel_reader(const DatasetSpec& spec);
std::unique_ptr<PairReader> make_conllu_reader(const DatasetSpec& spec);

}  // namespace attnscan
