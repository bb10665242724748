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

Decoder models' BPE tokenizers, each built as that model's tokenizer.json is (normalizer, pre-tokenizer,
post-processor, model flags, added tokens) and saved with tokenizer.json, tokenizer_config.json (the
model's tokenizer_class, which AutoTokenizer loads) and special_tokens_map.json; DECODER_VOCAB_SIZE tokens:
  DIR/gpt2/         GPT-2: ByteLevel pre-tokenizer, ByteLevel post-processor (no BOS), <|endoftext|> only
  DIR/llama3/       Llama 3 / SmolLM3: Split(Llama-3 regex, Isolated) + ByteLevel(use_regex false), ignore_merges,
                    Sequence[ByteLevel, TemplateProcessing <|begin_of_text|> $A]; no pad token
  DIR/qwen2/        Qwen2/3: NFC, Split(Qwen2 regex) + ByteLevel(use_regex false), ByteLevel post-processor (no
                    BOS), <|endoftext|> <|im_start|> <|im_end|>, pad <|endoftext|>
  DIR/gemma/        Gemma 3: Replace " " -> "▁", no pre-tokenizer, BPE with byte_fallback (<0x00>..<0xFF>)
                    and fuse_unk, TemplateProcessing <bos> $A
  DIR/llama2/       Llama 2: Sequence[Prepend "▁", Replace " " -> "▁"], as gemma otherwise, <s> $A
  DIR/gpt_neox/     Pythia (GPT-NeoX): NFC, ByteLevel, ByteLevel post-processor with trim_offsets, <|endoftext|>
                    and <|padding|> first
  DIR/smollm2/      SmolLM2: Sequence[Digits(individual_digits), ByteLevel], ByteLevel post-processor

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


DECODER_VOCAB_SIZE = 2500
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")


def byte_level_bpe(sentences, specials, normalizer=None, pre_tokenizer=None, **bpe):
    """A byte-level BPE trained as GPT-2's: every byte in the alphabet, the specials first."""
    from tokenizers import Tokenizer, decoders, pre_tokenizers
    from tokenizers.models import BPE
    from tokenizers.trainers import BpeTrainer
    tok = Tokenizer(BPE(**bpe))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer or pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = BpeTrainer(vocab_size=DECODER_VOCAB_SIZE, min_frequency=2, special_tokens=specials,
                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(sentences, trainer=trainer)
    return tok


def sentencepiece_style_bpe(sentences, specials, normalizer, unk):
    """A BPE over characters as Llama 2's and Gemma's tokenizer.json: words start with "\u2581", no
    pre-tokenizer, the 256 byte tokens <0x00>..<0xFF> in the vocabulary after the specials (byte_fallback),
    unknown characters fused; merges never cross a word start (trained with a split before each "\u2581")."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import BPE
    from tokenizers.trainers import BpeTrainer
    tok = Tokenizer(BPE(unk_token=unk, byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("\u2581"), behavior="merged_with_next")
    trainer = BpeTrainer(vocab_size=DECODER_VOCAB_SIZE - 256, min_frequency=2, special_tokens=specials,
                         limit_alphabet=150, show_progress=False)  # rare characters left to byte_fallback
    tok.train_from_iterator(sentences, trainer=trainer)
    j = json.loads(tok.to_str())
    trained = sorted(j["model"]["vocab"].items(), key=lambda kv: kv[1])
    vocab = {t: i for i, t in enumerate(specials)}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for t, _ in trained:
        if t not in vocab:
            vocab[t] = len(vocab)
    j["model"]["vocab"] = vocab
    j["pre_tokenizer"] = None
    for a in j["added_tokens"]:
        a["id"] = vocab[a["content"]]
    tok = Tokenizer.from_str(json.dumps(j))
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    return tok


def save_decoder(tok, out, tokenizer_class, sample, **specials):
    """tokenizer.json as built, tokenizer_config.json with the model's tokenizer_class, special_tokens_map.json;
    AutoTokenizer must load it as that class and give the file's ids (its post-processor included)."""
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer, PreTrainedTokenizerFast
    os.makedirs(out, exist_ok=True)
    PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=2048, **specials).save_pretrained(out)
    tok.save(os.path.join(out, "tokenizer.json"))
    config_file = os.path.join(out, "tokenizer_config.json")
    with open(config_file, encoding="utf-8") as f:
        config = json.load(f)
    config["tokenizer_class"] = tokenizer_class
    for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
        config.setdefault(key, None)  # as the models' files: null where the model has none
    with open(config_file, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
    loaded = AutoTokenizer.from_pretrained(out)
    assert loaded.is_fast and type(loaded).__name__ in (tokenizer_class, tokenizer_class + "Fast"), (out, type(loaded))
    from_file = Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
    for text in sample:
        assert loaded(text)["input_ids"] == from_file.encode(text).ids, (out, text)


def train_gpt2(sentences, out):
    from tokenizers import processors
    tok = byte_level_bpe(sentences, ["<|endoftext|>"])
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    e = "<|endoftext|>"
    save_decoder(tok, out, "GPT2Tokenizer", sentences[:50], bos_token=e, eos_token=e, unk_token=e)


def train_llama3(sentences, out):
    from tokenizers import Regex, pre_tokenizers, processors
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|eot_id|>"]
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok = byte_level_bpe(sentences, specials, pre_tokenizer=pre, ignore_merges=True)
    bos = tok.token_to_id(specials[0])
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single=f"{specials[0]} $A", pair=f"{specials[0]} $A {specials[0]}:1 $B:1",
                                      special_tokens=[(specials[0], bos)])])
    save_decoder(tok, out, "PreTrainedTokenizerFast", sentences[:50], bos_token=specials[0], eos_token=specials[1])


def train_qwen2(sentences, out):
    from tokenizers import Regex, normalizers, pre_tokenizers, processors
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok = byte_level_bpe(sentences, specials, normalizer=normalizers.NFC(), pre_tokenizer=pre)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    save_decoder(tok, out, "Qwen2Tokenizer", sentences[:50], eos_token=specials[0], pad_token=specials[0])


def train_gemma(sentences, out):
    from tokenizers import normalizers, processors
    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]
    tok = sentencepiece_style_bpe(sentences, specials, normalizers.Replace(" ", "\u2581"), "<unk>")
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos>:1 $B:1", special_tokens=[("<bos>", tok.token_to_id("<bos>"))])
    save_decoder(tok, out, "GemmaTokenizer", sentences[:50], bos_token="<bos>", eos_token="<eos>", unk_token="<unk>",
                 pad_token="<pad>")


def train_llama2(sentences, out):
    from tokenizers import normalizers, processors
    specials = ["<unk>", "<s>", "</s>"]
    norm = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok = sentencepiece_style_bpe(sentences, specials, norm, "<unk>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s>:1 $B:1", special_tokens=[("<s>", tok.token_to_id("<s>"))])
    save_decoder(tok, out, "LlamaTokenizer", sentences[:50], bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def train_gpt_neox(sentences, out):
    from tokenizers import normalizers, processors
    tok = byte_level_bpe(sentences, ["<|endoftext|>", "<|padding|>"], normalizer=normalizers.NFC())
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    e = "<|endoftext|>"
    save_decoder(tok, out, "GPTNeoXTokenizer", sentences[:50], bos_token=e, eos_token=e, unk_token=e)


def train_smollm2(sentences, out):
    from tokenizers import pre_tokenizers, processors
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    pre = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok = byte_level_bpe(sentences, specials, pre_tokenizer=pre)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    e = specials[0]
    save_decoder(tok, out, "GPT2Tokenizer", sentences[:50], bos_token=e, eos_token=e, unk_token=e)


TRAINERS = (("roberta", train_roberta), ("xlm-roberta", train_xlm_roberta), ("albert", train_albert),
            ("deberta-v2", train_deberta), ("modernbert", train_modernbert), ("wordlevel", train_wordlevel),
            ("gpt2", train_gpt2), ("llama3", train_llama3), ("qwen2", train_qwen2), ("gemma", train_gemma),
            ("llama2", train_llama2), ("gpt_neox", train_gpt_neox), ("smollm2", train_smollm2))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="*", help="train only these directories (default: all)")
    args = p.parse_args()
    from transformers.utils import logging
    logging.set_verbosity_error()
    sentences = training_sentences(args.datasets)
    for name, train in TRAINERS:
        if args.only and name not in args.only:
            continue
        train(sentences, os.path.join(args.out, name))
        print(f"{args.out}/{name}: {sorted(os.listdir(os.path.join(args.out, name)))}")


if __name__ == "__main__":
    sys.exit(main())
