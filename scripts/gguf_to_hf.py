#!/usr/bin/env python3
"""Converts a llama.cpp GGUF checkpoint into a Hugging Face model directory (dev-time; the peer venv of
scripts/make_peer_venv.sh: transformers 5.25 with PyPI gguf and accelerate).

  gguf_to_hf.py --gguf FILE --out DIR [--dtype float32|bfloat16] [--prompt TEXT --expect WORD]

transformers' GGUF loader dequantizes every tensor (Q4_1, Q8_0, ...) to float32 and undoes llama.cpp's
q/k row permutation; the model is saved with save_pretrained(safe_serialization=True) in --dtype (default
float32: the dequantized weights exactly), without the loader's quantization_config, so the directory loads
as an ordinary checkpoint. The tokenizer is rebuilt from the GGUF vocabulary and merges; where the file's
tokenizer.ggml.pre names a llama.cpp pre-tokenizer that the conversion does not reproduce (PRE_TOKENIZERS), the
saved tokenizer.json gets the original model's one. tokenizer_config.json names the slow class of the GGUF
tokenizer model (gpt2: GPT2Tokenizer), the context length and the chat template; special_tokens_map.json
is written too. Its merges are written as "a b" strings where no token holds a space (the form older tokenizers
releases read).

Checks before the directory appears: the saved directory, loaded as a plain checkpoint, gives the same
logits as the GGUF-loaded model (exactly, in float32), and greedy generation from the chat-templated
--prompt (default "What is the capital of France?") contains --expect (default "Paris"); the generated text
is printed. DIR is written as DIR.partial and renamed: it appears complete or not at all.
"""
import argparse
import json
import os

os.environ.setdefault("TQDM_DISABLE", "1")  # the GGUF loader's per-tensor progress bar
import shutil
import sys
import time

# llama.cpp pre-tokenizer names (GGUF tokenizer.ggml.pre) whose regexes split every digit on its own before
# GPT-2's byte-level regex (llama-vocab.cpp); the original models' tokenizer.json say it as Digits + ByteLevel.
_DIGITS_THEN_BYTELEVEL = {"type": "Sequence", "pretokenizers": [
    {"type": "Digits", "individual_digits": True},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]}
PRE_TOKENIZERS = {"smollm": _DIGITS_THEN_BYTELEVEL, "starcoder": _DIGITS_THEN_BYTELEVEL}
SLOW_CLASSES = {"gpt2": "GPT2Tokenizer", "llama": "LlamaTokenizer"}  # GGUF tokenizer.ggml.model -> HF class


def gguf_fields(path):
    import gguf
    reader = gguf.GGUFReader(path)
    out = {}
    for key in ("tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.chat_template"):
        if key in reader.fields:
            out[key] = reader.fields[key].contents()
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gguf", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    p.add_argument("--prompt", default="What is the capital of France?")
    p.add_argument("--expect", default="Paris")
    p.add_argument("--new-tokens", type=int, default=15)
    args = p.parse_args()
    import torch
    import transformers as tf
    from safetensors import safe_open
    from tokenizers import Tokenizer
    tf.utils.logging.set_verbosity_error()
    tf.utils.logging.disable_progress_bar()

    src_dir, name = os.path.split(os.path.abspath(args.gguf))
    fields = gguf_fields(args.gguf)
    started = time.time()
    tok = tf.AutoTokenizer.from_pretrained(src_dir, gguf_file=name)
    model = tf.AutoModelForCausalLM.from_pretrained(src_dir, gguf_file=name, dtype=torch.float32)
    model.eval()
    print(f"gguf_to_hf.py: loaded and dequantized {name} in {time.time() - started:.1f}s")

    chat = tok.apply_chat_template([{"role": "user", "content": args.prompt}], add_generation_prompt=True,
                                   return_dict=True, return_tensors="pt")
    with torch.inference_mode():
        ref = model(**chat).logits

    out = os.path.abspath(args.out)
    partial = out + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    # the saved directory is an ordinary checkpoint: no quantization_config, no GGUF file name
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.hf_quantizer = None
    model.is_quantized = False
    model = model.to(getattr(torch, args.dtype))
    model.config.dtype = args.dtype
    model.config.name_or_path = os.path.basename(out)
    model.save_pretrained(partial, safe_serialization=True)
    context = model.config.max_position_embeddings
    del model

    # tokenizer.json: the conversion's, with the original pre-tokenizer where the GGUF names one it lost
    backend = json.loads(tok.backend_tokenizer.to_str())
    pre = fields.get("tokenizer.ggml.pre")
    if pre in PRE_TOKENIZERS and backend["pre_tokenizer"] != PRE_TOKENIZERS[pre]:
        print(f"gguf_to_hf.py: tokenizer.ggml.pre '{pre}': pre_tokenizer {json.dumps(backend['pre_tokenizer'])} "
              f"replaced by {json.dumps(PRE_TOKENIZERS[pre])}")
        backend["pre_tokenizer"] = PRE_TOKENIZERS[pre]
    else:
        print(f"gguf_to_hf.py: tokenizer.ggml.pre '{pre}': pre_tokenizer kept: {json.dumps(backend['pre_tokenizer'])}")
    # merges as "a b" strings, as the original tokenizer.json files have them, where no token holds a space:
    # tokenizers before 0.20 (transformers 4.40's) read only that form
    merges = backend["model"].get("merges") or []
    if merges and not isinstance(merges[0], str) and not any(" " in a or " " in b for a, b in merges):
        backend["model"]["merges"] = [f"{a} {b}" for a, b in merges]
    with open(os.path.join(partial, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(backend, f, ensure_ascii=False, indent=2)
    specials = {k: getattr(tok, k) for k in ("bos_token", "eos_token", "unk_token", "pad_token")
                if getattr(tok, k) is not None}
    extra = [t["content"] for t in backend["added_tokens"] if t["special"] and t["content"] not in specials.values()]
    special_map = {**specials, "additional_special_tokens": extra}
    with open(os.path.join(partial, "special_tokens_map.json"), "w", encoding="utf-8") as f:
        json.dump(special_map, f, ensure_ascii=False, indent=2)
    tok_config = {**special_map, "add_prefix_space": False, "clean_up_tokenization_spaces": False,
                  "model_max_length": context,
                  "tokenizer_class": SLOW_CLASSES.get(fields.get("tokenizer.ggml.model"), "PreTrainedTokenizerFast"),
                  "vocab_size": len(backend["model"]["vocab"])}
    if fields.get("tokenizer.chat_template"):
        tok_config["chat_template"] = fields["tokenizer.chat_template"]
    with open(os.path.join(partial, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tok_config, f, ensure_ascii=False, indent=2)

    # checks: the directory as a plain checkpoint equals the GGUF-loaded model; greedy generation is sensible
    tok2 = tf.AutoTokenizer.from_pretrained(partial)
    model2 = tf.AutoModelForCausalLM.from_pretrained(partial, dtype=torch.float32)
    model2.eval()
    chat2 = tok2.apply_chat_template([{"role": "user", "content": args.prompt}], add_generation_prompt=True,
                                     return_dict=True, return_tensors="pt")
    if not torch.equal(chat["input_ids"], chat2["input_ids"]):
        sys.exit("gguf_to_hf.py: the saved tokenizer encodes the chat prompt differently from the GGUF one")
    with torch.inference_mode():
        got = model2(**chat).logits
        diff = (ref - got).abs().max().item()
        if args.dtype == "float32" and diff != 0:
            sys.exit(f"gguf_to_hf.py: the saved checkpoint's logits differ from the GGUF model's by {diff}")
        gen = model2.generate(**chat, max_new_tokens=args.new_tokens, do_sample=False, pad_token_id=tok2.pad_token_id)
    text = tok2.decode(gen[0, chat["input_ids"].shape[1]:], skip_special_tokens=True)
    print(f"gguf_to_hf.py: saved checkpoint vs GGUF model, max |logit difference| {diff:.3g}")
    print(f"gguf_to_hf.py: greedy {args.new_tokens} tokens after {args.prompt!r}: {text!r}")
    if args.expect and args.expect not in text:
        sys.exit(f"gguf_to_hf.py: the generated text lacks {args.expect!r}: the conversion is wrong")
    c = model2.config
    rope = getattr(c, "rope_parameters", None) or {"rope_theta": getattr(c, "rope_theta", None)}
    print(f"gguf_to_hf.py: {c.model_type}: {c.num_hidden_layers} layers, {c.num_attention_heads} heads, "
          f"{c.num_key_value_heads} kv heads, head_dim {getattr(c, 'head_dim', c.hidden_size // c.num_attention_heads)}, "
          f"hidden {c.hidden_size}, rope {json.dumps(rope)}, tie_word_embeddings {c.tie_word_embeddings}, "
          f"vocab {c.vocab_size}, weights {args.dtype}")
    with safe_open(os.path.join(partial, "model.safetensors"), "pt") as f:
        keys = sorted(f.keys())
    print(f"gguf_to_hf.py: model.safetensors: {len(keys)} tensors; not in layers: "
          f"{[k for k in keys if '.layers.' not in k]}; layer 0: {[k for k in keys if '.layers.0.' in k]}")
    Tokenizer.from_file(os.path.join(partial, "tokenizer.json"))  # reads back with the tokenizers library alone
    shutil.rmtree(out, ignore_errors=True)
    os.rename(partial, out)
    print(f"gguf_to_hf.py: {out} ({time.time() - started:.1f}s in all)")


if __name__ == "__main__":
    sys.exit(main())
