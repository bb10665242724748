#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) into build-fuzz/ and runs each for SECONDS
# (default 60) from its seed corpus in tests/fuzz/corpus/, after replaying every input of
# tests/fuzz/regressions/ (the crashes found so far). A crash leaves its input in build-fuzz/artifacts/
# and fails the script: add that file to tests/fuzz/regressions/<target>/ once fixed.
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
cmake -S . -B "$build" -DATTNSCAN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}"
mkdir -p "$build/artifacts"
status=0
for target in tokenizer readers safetensors config sentencepiece; do
  fuzzer="$build/tests/fuzz/${target}_fuzz"
  regressions=(tests/fuzz/regressions/$target/*)
  if [ -e "${regressions[0]}" ]; then
    echo "== $target: replaying ${#regressions[@]} regression input(s)"
    "$fuzzer" "${regressions[@]}" > "$build/artifacts/$target-regressions.log" 2>&1 \
      || { echo "FAIL: a regression input of $target crashes again"; tail -30 "$build/artifacts/$target-regressions.log"; status=1; }
  fi
  work="$build/corpus/$target"  # grows between runs; the seeds stay as committed
  mkdir -p "$work"
  echo "== $target: fuzzing for ${seconds}s"
  if ! "$fuzzer" "$work" "tests/fuzz/corpus/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 > "$build/artifacts/$target.log" 2>&1; then
    echo "FAIL: $target found a crash:"; tail -40 "$build/artifacts/$target.log"; status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "$build/artifacts/$target.log" | tail -2
  fi
done
exit $status
