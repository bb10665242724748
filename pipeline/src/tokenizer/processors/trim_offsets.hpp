#pragma once
// RobertaProcessing's trim_offsets (the `tokenizers` crate's byte_level process_offsets, whatever the model):
// the spaces a token's text starts or ends with ("Ġ", or whitespace an added token's lstrip/rstrip
// took) are not in its span. With add_prefix_space, the one leading space of a sentence's first token
// (the space the tokenizer put there) stays.
#include <string>

#include "tokenizer/tokenizer.hpp"

namespace attnscan::detail {

// `sentence`: the text `out` was tokenized from (an added token's text is what it matched there).
void trim_offsets(SentenceTokens& out, const std::u32string& sentence, bool add_prefix_space);

}  // namespace attnscan::detail
