#!/usr/bin/env bash
# Installs attnscan to a temporary prefix, moves the prefix elsewhere, and runs the moved binary with
# every built-in detector and lz4 compression: it must find its plugins beside itself (not in the
# build tree) and the HDF5 filter plugins without a fixed path.
set -euo pipefail
build=$1 source=$2
model=${ATTNSCAN_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscan/models/all-MiniLM-L6-v2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }
mv "$tmp/prefix" "$tmp/moved"   # relocated after installing
bin="$tmp/moved/bin/attnscan"
"$bin" plugins > "$tmp/plugins.txt" || { cat "$tmp/plugins.txt"; fail "attnscan plugins"; }
grep -q "^search path: $tmp/moved/lib/attnscan/plugins$" "$tmp/plugins.txt" || { cat "$tmp/plugins.txt"; fail "search path"; }
if grep -q "$build" "$tmp/plugins.txt"; then cat "$tmp/plugins.txt"; fail "the installed binary looks into the build tree"; fi
[ "$(grep -c "^[a-z_]* [0-9.]*  ($tmp/moved/" "$tmp/plugins.txt")" = 8 ] || { cat "$tmp/plugins.txt"; fail "8 plugins from the prefix"; }
if [ ! -f "$model/model.safetensors" ]; then
  echo "SKIP: default model not found at $model (run the README set-up command); the install finds its plugins"; exit 77
fi
cd "$source"
env -u HDF5_PLUGIN_PATH "$bin" run -c configs/default.yaml --set output.compression=lz4 -o "$tmp/out.h5" --no-progress \
  2> "$tmp/run.log" || { cat "$tmp/run.log"; fail "run with detectors and lz4"; }
/usr/bin/python3 - "$tmp/out.h5" <<'PY' || fail "output not as expected"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
assert f["attention"].attrs["compression"] == "lz4"
plist = f["attention/values"].id.get_create_plist()
filters = [plist.get_filter(k)[0] for k in range(plist.get_nfilters())]
assert 32004 in filters, filters  # lz4 (beside Fletcher32, the checksum of format_version 2)
assert len(list(f["scores"].attrs["outputs"])) == 9 and f["attention/values"][:10].sum() > 0
PY
echo "relocated install: plugins found beside the binary, lz4 written without HDF5_PLUGIN_PATH"
