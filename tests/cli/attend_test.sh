#!/usr/bin/env bash
# `attnscan attend` end to end: help, the seed pair with one head, JSON dump, and a clear error.
set -euo pipefail
bin=$1
model=${ATTNSCAN_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/attnscan/models/all-MiniLM-L6-v2}
fail() { echo "FAIL: $*"; exit 1; }

"$bin" attend --help | grep -q -- "--layer" || fail "attend --help lacks --layer"
if [ ! -f "$model/model.safetensors" ]; then
  echo "SKIP: default model not found at $model (run the README set-up command)"; exit 77
fi
out=$("$bin" attend --a "I went to the store." --b "At the store, I bought fresh strawberries." --layer 2 --head 0)
echo "$out" | grep -q "19 tokens" || fail "expected 19 tokens: $out"
echo "$out" | grep -Eq "^16 +##berries +20968 +1 +7" || fail "expected ##berries as word 7 of sentence B: $out"
echo "$out" | grep -q "layer 2 head 0 (0-indexed)" || fail "no head listing: $out"

json=$("$bin" attend --a "Short." --b "Pair." --json)
/usr/bin/python3 - "$json" <<'PY' || fail "JSON dump is wrong"
import json, sys
j = json.loads(sys.argv[1])
n = len(j["tokens"])
assert j["tokens"] == ["[CLS]", "short", ".", "[SEP]", "pair", ".", "[SEP]"], j["tokens"]
assert len(j["attention"]) == j["layers"] == 6 and len(j["attention"][0]) == j["heads"] == 12
for layer in j["attention"]:
    for head in layer:
        assert len(head) == n and all(abs(sum(row) - 1) < 1e-5 for row in head)
PY

if err=$("$bin" attend --model /nonexistent --a x 2>&1); then fail "missing model accepted"; fi
echo "$err" | grep -q "/nonexistent: model directory not found" || fail "unclear error: $err"
echo "cli.attend: all checks passed"
