#!/usr/bin/env python3
"""`attnscan slurm` against a real single-node SLURM (Debian slurmctld, slurmd, munge) started here.

  slurm_test.py ATTNSCAN_BINARY TEST_NAME     ("all" runs each)

Exit 0 on success, 1 on failure, 77 when SLURM or the inputs are absent (the message says what).
"""
import contextlib
import json
import os
import subprocess
import sys
import time

import h5py

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from harness import Skip, model_dir  # noqa: E402
from harness import main as harness_main  # noqa: E402
from h5_recipes import all_content, same_content  # noqa: E402
from slurm_cluster import SlurmCluster, Unavailable  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DATASETS = os.path.join(ROOT, "..", "shared", "datasets")
BIN = WORK = None


def out(name):
    return os.path.join(WORK, name)


def stsb_config(block_rows=100):
    """STS-B dev through the default model with three detectors, as one YAML file."""
    model_dir()
    if not os.path.isdir(DATASETS):
        raise Skip(f"../shared/datasets not found at {DATASETS}")
    path = out("stsb.yaml")
    with open(path, "w") as f:
        f.write(f"""dataset:
  path: {os.path.join(DATASETS, "stsb", "sts-dev.csv")}
  header: false
  quoting: none
  sentence_a: 5
  sentence_b: 6
  id: 3
  label: 4
  label_type: number
pipeline:
  block_rows: {block_rows}
detectors: [next_token, delimiter, cross_sentence_match]
""")
    return path


def attnscan(*args, env=None, check=True):
    p = subprocess.run([BIN, *args], cwd=ROOT, capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"attnscan {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


@contextlib.contextmanager
def slurm():
    """A running test cluster for the block; yields the environment its commands need."""
    c = SlurmCluster(WORK)
    try:
        c.__enter__()
    except Unavailable as e:
        raise Skip(str(e))
    try:
        yield c.env
    finally:
        c.__exit__(None, None, None)


def wait_status(env, folder, want, timeout=300, until=None):
    """Polls `attnscan slurm status` until its exit code is `want` (or `until(stdout)` holds)."""
    deadline = time.time() + timeout
    while True:
        p = attnscan("slurm", "status", folder, env=env, check=False)
        if (until and until(p.stdout)) or (not until and p.returncode == want):
            return p
        if time.time() > deadline:
            raise AssertionError(f"status did not reach {want} in {timeout}s:\n{p.stdout}\n{p.stderr}")
        time.sleep(1)


def assert_same_file(reference, target):
    with h5py.File(reference, "r") as x, h5py.File(target, "r") as y:
        diffs = same_content(all_content(x), all_content(y), ignore=("@config",))
    assert not diffs, diffs[:10]


def single_run(cfg):
    ref = out("single.h5")
    attnscan("run", "-c", cfg, "-o", ref, "--no-progress")
    return ref


# --- tests -------------------------------------------------------------------------------------------

def test_dry_run_scripts():
    """The scripts as written: array range and limit, log names, requeue, signal, dependency, threads."""
    cfg = out("tiny.yaml")
    with open(cfg, "w") as f:
        f.write("dataset:\n  path: data/sample_pairs.tsv\n")
    p = attnscan("slurm", "submit", "-c", cfg, "-o", out("o.h5"), "--shards", "4", "--array-limit", "2",
                 "--time", "01:00:00", "--cpus-per-task", "2", "--partition", "gpu", "--signal-before", "300",
                 "--sbatch-arg=--constraint=a100", "--dry-run")
    s = p.stdout
    for line in ("#SBATCH --array=0-3%2", f"#SBATCH --output={out('o.h5.slurm')}/logs/%A_%a.log", "#SBATCH --requeue",
                 "#SBATCH --signal=B:USR1@300", "#SBATCH --time=01:00:00", "#SBATCH --cpus-per-task=2",
                 "#SBATCH --partition=gpu", "#SBATCH --constraint=a100", '--shard "$shard/4"',
                 '--set engine.threads="${SLURM_CPUS_PER_TASK:-0}"', 'scontrol requeue "$SLURM_JOB_ID" && exit 0',
                 "(sbatch --parsable --dependency=afterok:ARRAY_JOB)", f"#SBATCH --output={out('o.h5.slurm')}/logs/merge_%j.log",
                 f"merge --overwrite '{out('o.h5')}' '{out('o.h5.slurm')}/shards/shard-0.h5'"):
        assert line in s, (line, s)
    assert not os.path.exists(out("o.h5.slurm")), "a dry run wrote the job folder"
    sif = out("attnscan.sif")  # --container: every job through apptainer/singularity exec, its folders bound
    open(sif, "w").close()
    p = attnscan("slurm", "submit", "-c", cfg, "-o", out("c/o.h5"), "--shards", "2", "--container", sif,
                 "--bind", "/srv/data", "--dry-run")
    binds = ",".join([out("c"), ROOT, WORK, os.path.join(ROOT, "data"), "/srv/data"])
    assert p.stdout.count("runner=$(command -v apptainer || command -v singularity) ||") == 2, p.stdout
    assert f"\"$runner\" exec --bind '{binds}' '{sif}' attnscan run -c '{cfg}'" in p.stdout, p.stdout
    assert f"\"$runner\" exec --bind '{binds}' '{sif}' attnscan merge --overwrite" in p.stdout, p.stdout
    p = attnscan("slurm", "submit", "-c", cfg, "-o", out("c/o.h5"), "--shards", "2", "--container", out("none.sif"),
                 check=False)
    assert p.returncode != 0 and "none.sif: no such file" in p.stderr, p.stderr


def test_submit_refusals_without_a_scheduler():
    cfg = out("tiny.yaml")
    with open(cfg, "w") as f:
        f.write("dataset:\n  path: data/sample_pairs.tsv\n")
    env = dict(os.environ, PATH="/nonexistent")
    p = attnscan("slurm", "submit", "-c", cfg, "-o", out("o.h5"), "--shards", "2", env=env, check=False)
    assert p.returncode != 0 and "sbatch is not on PATH" in p.stderr, p.stderr
    open(out("exists.h5"), "w").close()
    fake = out("bin")  # an sbatch that must never be reached
    os.makedirs(fake)
    with open(os.path.join(fake, "sbatch"), "w") as f:
        f.write("#!/bin/sh\nexit 99\n")
    os.chmod(os.path.join(fake, "sbatch"), 0o755)
    env = dict(os.environ, PATH=fake + ":" + os.environ["PATH"])
    p = attnscan("slurm", "submit", "-c", cfg, "-o", out("exists.h5"), "--shards", "2", env=env, check=False)
    assert p.returncode != 0 and "exists; pass --overwrite" in p.stderr, p.stderr
    with open(cfg, "a") as f:
        f.write("pipline:\n  block_rows: 3\n")
    p = attnscan("slurm", "submit", "-c", cfg, "-o", out("o.h5"), "--shards", "2", env=env, check=False)
    assert p.returncode != 0 and "unknown key 'pipline'" in p.stderr, p.stderr
    p = attnscan("run", "-c", "configs/default.yaml", "--shard", "auto", "-o", out("x.h5"), check=False)
    assert p.returncode != 0 and "not inside a SLURM array task" in p.stderr, p.stderr


def test_four_shards_and_merge_equal_a_single_run():
    cfg = stsb_config()
    ref = single_run(cfg)
    with slurm() as env:
        p = attnscan("slurm", "submit", "-c", cfg, "-o", out("merged.h5"), "--shards", "4", env=env)
        assert "submitted array job" in p.stdout and "attnscan slurm status" in p.stdout, p.stdout
        s = wait_status(env, out("merged.h5.slurm"), 0)
        assert "4 done" in s.stdout and "merge job" in s.stdout and "done:" in s.stdout, s.stdout
        p = attnscan("slurm", "submit", "-c", cfg, "-o", out("merged.h5"), "--shards", "4", env=env, check=False)
        assert p.returncode != 0 and "exists; pass --overwrite" in p.stderr, p.stderr
        p = attnscan("slurm", "submit", "-c", cfg, "-o", out("bad.h5"), "--shards", "2", "--partition", "nope",
                     env=env, check=False)
        assert p.returncode != 0 and "sbatch refused" in p.stderr and "invalid partition" in p.stderr.lower(), p.stderr
    assert_same_file(ref, out("merged.h5"))


def test_failed_shard_is_named_and_resubmitted_alone():
    cfg = stsb_config()
    ref = single_run(cfg)
    folder = out("merged.h5.slurm")
    with slurm() as env:
        p = attnscan("slurm", "submit", "-c", cfg, "-o", out("merged.h5"), "--shards", "4", "--sbatch-arg=--hold",
                     env=env)
        jobs = json.load(open(os.path.join(folder, "jobs.json")))["submissions"][0]
        os.makedirs(os.path.join(folder, "shards", "shard-2.h5.lock"))  # the cause: shard 2 cannot take its lock
        subprocess.run(["scontrol", "release", jobs["array_job"], jobs["merge_job"]], env=env, check=True)
        s = wait_status(env, folder, 1, until=lambda t: "3 done" in t and "1 failed" in t)
        assert "shard 2/4: failed" in s.stdout and "cannot create lock file: Is a directory" in s.stdout, s.stdout
        assert f"logs/{jobs['array_job']}_2.log" in s.stdout, s.stdout
        time.sleep(2)  # kill_invalid_depend: the merge never runs
        s = attnscan("slurm", "status", folder, env=env, check=False)
        assert s.returncode == 1 and not os.path.exists(out("merged.h5")), s.stdout
        assert "CANCELLED" in s.stdout.split("merge job")[1] or "unknown" in s.stdout.split("merge job")[1], s.stdout
        os.rmdir(os.path.join(folder, "shards", "shard-2.h5.lock"))  # the cause fixed
        p = attnscan("slurm", "resubmit", folder, env=env)
        again = json.load(open(os.path.join(folder, "jobs.json")))["submissions"][1]
        assert again["indices"] == [2], again
        subprocess.run(["scontrol", "release", again["array_job"], again["merge_job"]], env=env, check=True)
        s = wait_status(env, folder, 0)
        assert "4 done" in s.stdout, s.stdout
    assert_same_file(ref, out("merged.h5"))


def test_warning_signal_requeues_and_resumes():
    cfg = stsb_config(block_rows=25)
    ref = single_run(cfg)
    folder = out("merged.h5.slurm")
    with slurm() as env:
        attnscan("slurm", "submit", "-c", cfg, "-o", out("merged.h5"), "--shards", "2", env=env)
        array = json.load(open(os.path.join(folder, "jobs.json")))["submissions"][0]["array_job"]
        parts = os.path.join(folder, "shards", "shard-0.h5.parts")
        deadline = time.time() + 120
        while not (os.path.isdir(parts) and any(n.endswith(".h5") and n.startswith("block-") for n in os.listdir(parts))):
            assert time.time() < deadline, "shard 0 committed no block"
            assert not os.path.exists(os.path.join(folder, "shards", "shard-0.h5")), "shard 0 finished before the signal"
            time.sleep(0.05)
        subprocess.run(["scancel", "--signal=USR1", "--batch", f"{array}_0"], env=env, check=True)
        # SLURM holds a requeued job until its old credential expired (Reason=BeginTime; cred_expire, 120 s
        # by default, 5 s in the test cluster).
        s = wait_status(env, folder, 0)
        log = open(os.path.join(folder, "logs", f"{array}_0.log")).read()
        assert "stopped with its blocks committed (exit 130); requeueing" in log, log
        assert "resuming:" in log and "restart 1" in log, log
        info = subprocess.run(["scontrol", "-o", "show", "job", f"{array}_0"], env=env, capture_output=True, text=True)
        assert "Restarts=1" in info.stdout, info.stdout
        assert "2 done" in s.stdout, s.stdout
    assert_same_file(ref, out("merged.h5"))


# --- the container image (opt-in: building it takes minutes) ------------------------------------------

IMAGE = "localhost/attnscan:latest"


def built_image():
    """Builds the image from this commit (scripts/build_image.sh) once per test process; the environment
    podman needs here. Skips unless ATTNSCAN_IMAGE_TEST=1 (an opt-in: the build takes about 4 minutes)."""
    if os.environ.get("ATTNSCAN_IMAGE_TEST") != "1":
        raise Skip("opt-in: set ATTNSCAN_IMAGE_TEST=1 to build the container image (scripts/build_image.sh, "
                   "about 4 minutes on 2 cores) and run jobs in it")
    model_dir()
    env = dict(os.environ)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if subprocess.run(["podman", "image", "exists", f"localhost/attnscan:{head}"]).returncode == 0:
        built_image.done = True  # built from this commit already
    if not getattr(built_image, "done", False):
        p = subprocess.run([os.path.join(ROOT, "scripts", "build_image.sh"), out("attnscan-image.tar")], cwd=ROOT,
                           capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        print(p.stdout.strip())
        built_image.done = True
    conf = os.path.join(ROOT, "build", "containers.conf")  # written by build_image.sh where this host needs it
    if os.path.exists(conf):
        env["CONTAINERS_CONF"] = conf
    return env


def in_image(env, *command, user="4321:4321"):
    """COMMAND in the image as an unprivileged user, read-only, without network, in WORK."""
    return subprocess.run(["podman", "run", "--rm", "--read-only", "--network=none", "--user", user,
                           "-v", f"{WORK}:{WORK}", "-w", WORK, IMAGE, *command],
                          capture_output=True, text=True, env=env)


def assert_same_numbers(reference, target):
    """Equal scores and attention (bit for bit: the image has the host's Debian libraries), tokens and ids."""
    with h5py.File(reference, "r") as x, h5py.File(target, "r") as y:
        diffs = same_content(all_content(x), all_content(y),
                             ignore=("@config", "@model_dir", "@dataset", "@compute_platform", "@numerics"))
    assert not diffs, diffs[:10]


def test_image_runs_the_sample_job_read_only():
    """In the image, as a user it does not know, read-only and offline, from a folder without configs/:
    `info` says it runs in the image, and the sample job equals the host build's."""
    env = built_image()
    os.chmod(WORK, 0o777)
    p = in_image(env, "attnscan", "info")
    assert p.returncode == 0 and "container image: attnscan localhost/attnscan:" in p.stdout, p.stdout + p.stderr
    p = in_image(env, "attnscan", "run", "-c", "configs/default.yaml", "-o", out("image.h5"), "--no-progress")
    assert p.returncode == 0, p.stderr
    host = out("host.h5")
    attnscan("run", "-c", "configs/default.yaml", "-o", host, "--no-progress")
    assert_same_numbers(host, out("image.h5"))
    p = in_image(env, "python3", "-c", "import attnscan, sys; r = attnscan.open(sys.argv[1]); "
                 "print(len(r), r.example(0).attention.shape)", out("image.h5"))
    assert p.returncode == 0 and p.stdout.startswith("10 (6, 12,"), p.stdout + p.stderr


def test_container_jobs_equal_a_single_run():
    """`slurm submit --container` runs every array task and the merge through apptainer exec; here podman
    stands in for Apptainer (neither it nor Singularity installs on Debian 12): the merged file equals a
    single run of the host build."""
    env = built_image()
    cfg = stsb_config()
    ref = single_run(cfg)
    fake = out("apptainer-bin")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "apptainer"), "w") as f:
        f.write("""#!/bin/bash
# Stands in for apptainer: `apptainer exec --bind A,B SIF CMD ...` as podman run of the image SIF names.
set -eu
[ "$1" = exec ] || { echo "fake apptainer: only exec" >&2; exit 2; }
shift
volumes=()
while [ "$1" = --bind ]; do
  IFS=, read -r -a folders <<< "$2"
  for d in "${folders[@]}"; do volumes+=(-v "$d:$d"); done
  shift 2
done
image=$(cat "$1")
shift
exec podman run --rm --read-only --network=none --user "$(id -u):$(id -g)" "${volumes[@]}" -w "$PWD" "$image" "$@"
""")
    os.chmod(os.path.join(fake, "apptainer"), 0o755)
    sif = out("attnscan.sif")
    with open(sif, "w") as f:
        f.write(IMAGE)
    with slurm() as cluster_env:
        env = dict(cluster_env, PATH=fake + ":" + cluster_env["PATH"], **{
            k: v for k, v in env.items() if k == "CONTAINERS_CONF"})
        p = attnscan("slurm", "submit", "-c", cfg, "-o", out("boxed.h5"), "--shards", "2", "--container", sif, env=env)
        assert "submitted array job" in p.stdout, p.stdout
        s = wait_status(env, out("boxed.h5.slurm"), 0, timeout=600)
        assert "2 done" in s.stdout, s.stdout
    with open(os.path.join(out("boxed.h5.slurm"), "array-1.sbatch")) as f:
        assert '"$runner" exec --bind' in f.read()
    assert_same_numbers(ref, out("boxed.h5"))


if __name__ == "__main__":
    sys.exit(harness_main(globals()))
