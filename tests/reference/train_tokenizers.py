#!/usr/bin/env python3
"""Tokenizers of the BPE, Unigram and WordLevel kinds, trained on the shared datasets (dev-time; reference venv).

  train_tokenizers.py --datasets ../shared/datasets --out DIR

No RoBERTa, XLM-R, ALBERT or DeBERTa checkpoint is reachable here, so their tokenizers are trained the way those
models' tokenizers were made, on the shared datasets' sentences, and saved as Hugging Face saves them:
both the slow files and tokenizer.json (the fast tokenizer converted from the slow one by transformers).
The WordLevel tokenizer has no slow class (nor a checkpoint kind of its own): it is trained with HF
tokenizers' WordLevelTrainer and saved as transformers' PreTrainedTokenizerFast saves it.

  DIR/roberta/      byte-level BPE (HF tokenizers): vocab.json, merges.txt, tokenizer.json, tokenizer_config.json
  DIR/xlm-roberta/  SentencePiece Unigram: sentencepiece.bpe.model (XLMRobertaTokenizer), tokenizer.json
  DIR/albert/       SentencePiece Unigram, lowercased: spiece.model (AlbertTokenizer), tokenizer.json
  DIR/deberta-v2/   SentencePiece Unigram with DeBERTa-v3's ids ([PAD] 0, [CLS] 1, [SEP] 2, [UNK] 3):
                    spm.model (DebertaV2Tokenizer), tokenizer.json
  DIR/modernbert/   byte-level BPE as ModernBERT's (NFC, TemplateProcessing [CLS] A [SEP] B [SEP], [MASK]
                    with lstrip): tokenizer.json, tokenizer_config.json (PreTrainedTokenizerFast)
  DIR/wordlevel/    WordLevel (whole words, [UNK] for the rest), BERT-like: normalizer Sequence[NFD,
                    Lowercase, StripAccents], BertPreTokenizer, TemplateProcessing [CLS] $A [SEP] /
                    [CLS] $A [SEP] $B:1 [SEP]:1; tokenizer.json, tokenizer_config.json
                    (PreTrainedTokenizerFast), special_tokens_map.json

Deterministic for a given dataset (fixed vocabulary sizes, one thread for SentencePiece; WordLevelTrainer
orders words by count, then by the word).
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import dataset_pairs  # noqa: E402

VOCAB_SIZE = 3000


def training_sentences(datasets):
    seen, out = set(), []
    for _, a, b in dataset_pairs(datasets):
        for t in (a, b):
            if t not in seen:
                seen.add(t)
                out.append(t)
    return out


def train_roberta(sentences, out):
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizer, RobertaTokenizerFast
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(sentences, vocab_size=VOCAB_SIZE, min_frequency=2,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    os.makedirs(out, exist_ok=True)
    bpe.save_model(out)  # vocab.json + merges.txt: what the slow RobertaTokenizer reads
    slow = RobertaTokenizer(os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt"))
    slow.save_pretrained(out)
    RobertaTokenizerFast.from_pretrained(out).save_pretrained(out)  # adds tokenizer.json


def train_sentencepiece(sentences, model_prefix, lowercase, **ids):
    import sentencepiece as spm
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write("\n".join(s.lower() if lowercase else s for s in sentences))
        corpus = f.name
    try:
        spm.SentencePieceTrainer.train(
            input=corpus, model_prefix=model_prefix, vocab_size=VOCAB_SIZE, model_type="unigram",
            character_coverage=0.9995, num_threads=1, seed_sentencepiece_size=200000, shuffle_input_sentence=False,
            minloglevel=2, **ids)
    finally:
        os.unlink(corpus)


def train_xlm_roberta(sentences, out):
    from transformers import XLMRobertaTokenizer, XLMRobertaTokenizerFast
    os.makedirs(out, exist_ok=True)
    # SentencePiece's default ids (unk 0, <s> 1, </s> 2), as XLM-R's own model; HF adds fairseq's offset
    train_sentencepiece(sentences, os.path.join(out, "sentencepiece.bpe"), lowercase=False)
    os.remove(os.path.join(out, "sentencepiece.bpe.vocab"))
    XLMRobertaTokenizer(os.path.join(out, "sentencepiece.bpe.model")).save_pretrained(out)
    XLMRobertaTokenizerFast.from_pretrained(out).save_pretrained(out)


def train_albert(sentences, out):
    from transformers import AlbertTokenizer, AlbertTokenizerFast
    os.makedirs(out, exist_ok=True)
    # as ALBERT's own spiece.model: <pad> 0, <unk> 1, then [CLS] [SEP] [MASK] as control symbols
    train_sentencepiece(sentences, os.path.join(out, "spiece"), lowercase=True, pad_id=0, unk_id=1, bos_id=-1,
                        eos_id=-1, control_symbols="[CLS],[SEP],[MASK]")
    os.remove(os.path.join(out, "spiece.vocab"))
    AlbertTokenizer(os.path.join(out, "spiece.model"), do_lower_case=True).save_pretrained(out)
    AlbertTokenizerFast.from_pretrained(out).save_pretrained(out)


def train_deberta(sentences, out):
    from transformers import DebertaV2Tokenizer, DebertaV2TokenizerFast
    os.makedirs(out, exist_ok=True)
    # as DeBERTa-v3's own spm.model: [PAD] 0, [CLS] 1, [SEP] 2, [UNK] 3; [MASK] is added after the pieces
    train_sentencepiece(sentences, os.path.join(out, "spm"), lowercase=False, pad_id=0, bos_id=1, eos_id=2, unk_id=3,
                        pad_piece="[PAD]", bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]")
    os.remove(os.path.join(out, "spm.vocab"))
    DebertaV2Tokenizer(os.path.join(out, "spm.model")).save_pretrained(out)
    DebertaV2TokenizerFast.from_pretrained(out).save_pretrained(out)


MODERNBERT_SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]  # ids 0..4, in ModernBERT's order


def train_modernbert(sentences, out):
    from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import BPE
    from tokenizers.trainers import BpeTrainer
    from transformers import PreTrainedTokenizerFast
    # as ModernBERT's tokenizer.json: NFC, byte-level BPE without a prefix space, [CLS] A [SEP] B [SEP] with
    # TemplateProcessing, [MASK] with lstrip; no slow class; no token type ids among the model's inputs
    tok = Tokenizer(BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = BpeTrainer(vocab_size=VOCAB_SIZE, min_frequency=2, special_tokens=MODERNBERT_SPECIALS,
                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(sentences, trainer=trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    os.makedirs(out, exist_ok=True)
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                            sep_token="[SEP]", mask_token=AddedToken("[MASK]", lstrip=True, normalized=False),
                            model_input_names=["input_ids", "attention_mask"], model_max_length=8192).save_pretrained(out)


WORDLEVEL_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # ids 0..4, in this order


def train_wordlevel(sentences, out):
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel
    from tokenizers.trainers import WordLevelTrainer
    from transformers import AutoTokenizer, PreTrainedTokenizerFast
    tok = Tokenizer(WordLevel(unk_token="[UNK]"))
    # BERT's normalisation written as a Sequence: NFD changes lengths, so offsets go through the alignments
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = WordLevelTrainer(vocab_size=VOCAB_SIZE, min_frequency=2, special_tokens=WORDLEVEL_SPECIALS,
                               show_progress=False)
    tok.train_from_iterator(sentences, trainer=trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    os.makedirs(out, exist_ok=True)
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                            sep_token="[SEP]", mask_token="[MASK]", model_max_length=512).save_pretrained(out)
    # what the tests' readers rely on: transformers loads it back (fast only: there is no slow class) and
    # its length is the vocabulary's, the specials first
    with open(os.path.join(out, "tokenizer.json"), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    assert [vocab[t] for t in WORDLEVEL_SPECIALS] == list(range(len(WORDLEVEL_SPECIALS))), vocab
    assert sorted(vocab.values()) == list(range(len(vocab))) and len(vocab) <= VOCAB_SIZE
    loaded = AutoTokenizer.from_pretrained(out)
    assert loaded.is_fast and type(loaded) is PreTrainedTokenizerFast, type(loaded)
    assert len(loaded) == len(vocab), (len(loaded), len(vocab))
    assert loaded("Hello there", "x")["input_ids"][0] == cls


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    from transformers.utils import logging
    logging.set_verbosity_error()
    sentences = training_sentences(args.datasets)
    for name, train in (("roberta", train_roberta), ("xlm-roberta", train_xlm_roberta), ("albert", train_albert),
                        ("deberta-v2", train_deberta), ("modernbert", train_modernbert),
                        ("wordlevel", train_wordlevel)):
        train(sentences, os.path.join(args.out, name))
        print(f"{args.out}/{name}: {sorted(os.listdir(os.path.join(args.out, name)))}")


if __name__ == "__main__":
    sys.exit(main())
