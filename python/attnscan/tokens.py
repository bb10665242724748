"""One token of an example, with the role a detector sees (docs/hdf5-layout.md, tokens/special)."""
from typing import NamedTuple, Optional

# A template special of the pair template's prefix ([CLS] for BERT, <s> for RoBERTa/MPNet; every template
# attnscan has puts exactly one token there, and truncation never removes it).
BEGIN, SEPARATOR, SPECIAL_IN_TEXT, CONTENT = "Begin", "Separator", "SpecialInText", "Content"
TEMPLATE_PREFIX_LENGTH = 1


class Token(NamedTuple):
    text: str        # the vocabulary's piece as written (subword_kind says how to read it)
    id: int          # vocabulary id
    role: str        # Begin, Separator, SpecialInText or Content
    sentence: int    # 0: [CLS] A [SEP] (<s> A </s></s>), 1: B [SEP] (B </s>)
    word_index: int  # word within its own sentence; -1 for template specials
    word: str        # the whole word the piece belongs to
    special: bool    # a template special or a special token written in the text
    # Code points [char_start, char_end) of the token in its sentence (sentence_a when sentence == 0, else
    # sentence_b): example.sentence_a[t.char_start:t.char_end]. -1/-1 for template specials, and for
    # every token of files written before format_version 4.
    char_start: int = -1
    char_end: int = -1
    # The gold dependency tree of the token's word (files of datasets with trees, dataset.format conllu;
    # None in others): dep_head the word_index of its head word in the same sentence (-1: the root; -2 for
    # template specials), dep_relation its DEPREL as written ("" for template specials).
    dep_head: Optional[int] = None
    dep_relation: Optional[str] = None


def role(position, special, word_index):
    if not special:
        return CONTENT
    if word_index >= 0:
        return SPECIAL_IN_TEXT
    return BEGIN if position < TEMPLATE_PREFIX_LENGTH else SEPARATOR


def make_tokens(text, ids, segment, word_index, word, special, char_start=None, char_end=None, dep_head=None,
                dep_relation=None):
    """Token tuples from one example's slices of the tokens/* columns (the optional ones: None when the
    file has none)."""
    return [Token(text[t], int(ids[t]), role(t, bool(special[t]), int(word_index[t])), int(segment[t]),
                  int(word_index[t]), word[t], bool(special[t]),
                  -1 if char_start is None else int(char_start[t]), -1 if char_end is None else int(char_end[t]),
                  None if dep_head is None else int(dep_head[t]), None if dep_relation is None else dep_relation[t])
            for t in range(len(text))]
