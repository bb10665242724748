#!/usr/bin/env bash
# The current peer, dev-time only: a venv with the PyPI torch and transformers a researcher installs today,
# in which bench/compare_bench.py and bench/hf_baseline.py run the Hugging Face baseline by default, and
# scripts/setup.sh test generates the references that need transformers 5.x (ModernBERT, the decoders:
# tests/reference/make_modernbert_fixtures.py, make_decoder_fixtures.py) and converts SmolLM2's GGUF
# (scripts/gguf_to_hf.py, from scripts/fetch_models.sh).
#
#   scripts/make_peer_venv.sh        create ${ATTNSCAN_CACHE:-~/.cache/attnscan}/peer-venv (idempotent)
#
# PyPI's torch pulls its CUDA runtime packages: about 3 GB downloaded once; the baseline runs on the CPU.
# Nothing at run time needs this venv. The other parity references stay on the reference venv (tools-venv:
# transformers 4.40.2 on Debian's torch 1.13, which still has head_mask), made by scripts/setup.sh test.
set -euo pipefail

cache=${ATTNSCAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscan}
venv="$cache/peer-venv"
torch_version=2.15.0
transformers_version=5.25.0
# gguf + accelerate: transformers' GGUF loader, for scripts/gguf_to_hf.py (scripts/fetch_models.sh's SmolLM2)
pkgs=(torch=="$torch_version" transformers=="$transformers_version" h5py==3.16.0 gguf==0.19.0 accelerate==1.16.0)

# ready: every package imports, torch and transformers at the pinned versions; "$1" = base: torch and
# transformers alone (an older peer venv then gets the other packages added, not the 3 GB again)
ready() {
  "$venv/bin/python" - "$torch_version" "$transformers_version" "${1:-all}" <<'EOF' 2>/dev/null
import sys, numpy, torch, transformers
if sys.argv[3] == "all":
    import accelerate, gguf, h5py
sys.exit(0 if (torch.__version__.split("+")[0], transformers.__version__) == (sys.argv[1], sys.argv[2]) else 1)
EOF
}

if ready; then
  echo "$venv: torch $torch_version, transformers $transformers_version (ready)"
  exit 0
fi
if ready base; then
  echo "adding to $venv: ${pkgs[*]}"
  "$venv/bin/pip" install --quiet "${pkgs[@]}"
else
  echo "creating $venv (${pkgs[*]}; about 3 GB downloaded once)"
  rm -rf "$venv"
  mkdir -p "$cache"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet "${pkgs[@]}"
fi
ready || { echo "$venv: torch $torch_version / transformers $transformers_version do not import" >&2; exit 1; }
"$venv/bin/pip" freeze > "$venv/versions.txt"
echo "$venv: torch $torch_version, transformers $transformers_version (versions of every package: $venv/versions.txt)"
