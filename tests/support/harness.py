"""The runner of the Python test scripts (tests/e2e, tests/report): each test_* function runs in its
own temporary folder; a test that needs something absent raises Skip with a message.

Exit 0 on success, 1 on any failure, 77 (CTest's skip code here) when every test run was skipped.
"""
import os
import tempfile
import traceback


class Skip(Exception):
    pass


def model_dir():
    """The default model's folder, or Skip saying where it was looked for."""
    d = os.environ.get("ATTNSCAN_MODEL") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attnscan", "models", "all-MiniLM-L6-v2")
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        raise Skip(f"default model not found at {d} (run the README set-up command)")
    return d


def fine_tuned_copy(dest, scale=2e-3, seed=0):
    """A copy of the default model with N(0, scale) noise added to every F32 weight: a second model
    with slightly different attention on any CPU (paired comparisons of two runs need one)."""
    import json
    import shutil
    import struct

    import numpy as np
    src = model_dir()
    os.makedirs(dest, exist_ok=True)
    for name in os.listdir(src):
        if name != "model.safetensors" and os.path.isfile(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), dest)
    with open(os.path.join(src, "model.safetensors"), "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    data = bytearray(blob[8 + n:])
    rng = np.random.default_rng(seed)
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        a, b = t["data_offsets"]
        w = np.frombuffer(bytes(data[a:b]), dtype="<f4")
        data[a:b] = (w + rng.normal(0, scale, w.shape)).astype("<f4").tobytes()
    with open(os.path.join(dest, "model.safetensors"), "wb") as f:
        f.write(blob[:8 + n] + bytes(data))
    return dest


def run_tests(module_globals, which):
    """Runs test_<which> (or every test_* for "all") of a script; sets its WORK to the test's folder."""
    tests = {name[5:]: fn for name, fn in module_globals.items() if name.startswith("test_")}
    names = list(tests) if which == "all" else [which]
    passed = failed = skipped = 0
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"attnscan_{name}_") as work:
            module_globals["WORK"] = work
            try:
                tests[name]()
                print(f"PASS {name}")
                passed += 1
            except Skip as e:
                print(f"SKIP {name}: {e}")
                skipped += 1
            except Exception as e:  # noqa: BLE001 - report every failure with its message
                traceback.print_exc()
                print(f"FAIL {name}: {e}")
                failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    if failed:
        return 1
    return 77 if skipped and not passed else 0


def main(module_globals, *extra):
    """`script.py ATTNSCAN_BINARY [EXTRA...] TEST_NAME`: sets the script's BIN (and each EXTRA global,
    as an absolute path) from the command line and runs the test; returns the exit code."""
    import sys
    module_globals["BIN"] = os.path.abspath(sys.argv[1])
    for k, name in enumerate(extra):
        module_globals[name] = os.path.abspath(sys.argv[2 + k])
    return run_tests(module_globals, sys.argv[2 + len(extra)])
