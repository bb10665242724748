#!/usr/bin/env bash
# Installs attnscan, builds docs/examples/punctuation out of tree against the installed SDK
# (find_package(attnscan) + attnscan::sdk), loads it through `attnscan run` and reads its scores.
set -euo pipefail
build=$1 source=$2
model=${ATTNSCAN_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscan/models/all-MiniLM-L6-v2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }
[ -f "$tmp/prefix/include/attnscan/detector.hpp" ] || fail "SDK header not installed"
# The SDK header needs nothing but the standard library.
if grep -E '#include <(torch|ATen|hdf5|H5|yaml|boost)' "$tmp/prefix/include/attnscan/detector.hpp"; then fail "SDK header pulls in a dependency"; fi
cmake -S "$source/docs/examples/punctuation" -B "$tmp/example" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log" \
  || { cat "$tmp/configure.log"; fail "configure against the installed SDK"; }
cmake --build "$tmp/example" > "$tmp/build.log" || { cat "$tmp/build.log"; fail "build"; }
[ -f "$tmp/example/punctuation.so" ] || fail "no punctuation.so"

listing=$("$tmp/prefix/bin/attnscan" plugins --plugin-path "$tmp/example")  # whole, so grep -q cannot cut it short
grep -q "^punctuation 1.0" <<< "$listing" || fail "attnscan plugins does not list it"
if [ ! -f "$model/model.safetensors" ]; then
  echo "SKIP: default model not found at $model (run the README set-up command); the plugin built and loads"; exit 77
fi
cd "$source"
"$tmp/prefix/bin/attnscan" run -c configs/default.yaml --set detectors=punctuation --set plugin_paths="$tmp/example" \
  -o "$tmp/out.h5" --no-progress 2> "$tmp/run.log" || { cat "$tmp/run.log"; fail "run"; }
"$tmp/prefix/bin/attnscan" heads "$tmp/out.h5" --top 2 --format csv | grep -q "^punctuation,punctuation,all,1," || fail "heads"
/usr/bin/python3 - "$tmp/out.h5" <<'PY' || fail "scores not as expected"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
v = f["scores/punctuation/punctuation/values"]
assert v.shape == (10, 6, 12), v.shape
assert f["scores/punctuation"].attrs["parameters"] == "include_self=true"
assert np.isfinite(f["scores/punctuation/punctuation/mean"][...]).all()
PY
echo "out-of-tree detector: built against the installed SDK, loaded and run"
