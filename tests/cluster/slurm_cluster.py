"""A single-node SLURM for the tests: munged, slurmctld and slurmd from Debian, with a private
slurm.conf and state in a temporary folder, on loopback. Needs root (slurmd runs jobs as root).

    with SlurmCluster(workdir) as cluster:
        env = cluster.env        # SLURM_CONF and PATH for sbatch/squeue/scontrol
"""
import os
import shutil
import socket
import subprocess
import time


class Unavailable(Exception):
    """SLURM cannot be run here (packages missing, not root): tests skip with this message."""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    def __init__(self, workdir, cpus=None):
        self.dir = os.path.join(workdir, "slurm")
        self.cpus = cpus or os.cpu_count() or 2
        self.procs = []
        self.env = dict(os.environ)

    def __enter__(self):
        for tool in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol"):
            if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
                raise Unavailable(f"{tool} not found (Debian slurmctld slurmd slurm-client munge)")
        if os.geteuid() != 0:
            raise Unavailable("the test cluster needs root (slurmd and munged)")
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o755)
        for sub in ("state", "spool", "log"):
            os.makedirs(os.path.join(self.dir, sub))
        self._start_munge()
        host = socket.gethostname()
        port_ctld, port_d = _free_port(), _free_port()
        conf = os.path.join(self.dir, "slurm.conf")
        with open(conf, "w") as f:
            f.write(f"""ClusterName=attnscan-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={port_ctld}
SlurmdPort={port_d}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=cred_expire=5
StateSaveLocation={self.dir}/state
SlurmdSpoolDir={self.dir}/spool
SlurmctldPidFile={self.dir}/slurmctld.pid
SlurmdPidFile={self.dir}/slurmd.pid
SlurmctldLogFile={self.dir}/log/slurmctld.log
SlurmdLogFile={self.dir}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
DependencyParameters=kill_invalid_depend
JobRequeue=1
MinJobAge=600
InactiveLimit=0
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName={host} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
        self.env["SLURM_CONF"] = conf
        self.procs.append(subprocess.Popen(["slurmctld", "-D", "-c", "-f", conf], env=self.env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.procs.append(subprocess.Popen(["slurmd", "-D", "-N", host, "-f", conf], env=self.env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.time() + 60
        while time.time() < deadline:
            p = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True)
            if p.returncode == 0 and p.stdout.strip() in ("idle", "mixed", "allocated"):
                return self
            time.sleep(0.5)
        self.__exit__(None, None, None)
        raise RuntimeError(f"the test SLURM did not come up; logs in {self.dir}/log: "
                           + open(os.path.join(self.dir, "log", "slurmctld.log")).read()[-2000:])

    def _start_munge(self):
        os.makedirs("/run/munge", exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        key = "/etc/munge/munge.key"
        if not os.path.exists(key):
            subprocess.run(["mungekey", "--create", "--keyfile", key], check=True)
            shutil.chown(key, "munge", "munge")
            os.chmod(key, 0o400)
        if subprocess.run(["munge", "-n"], capture_output=True).returncode == 0:
            return  # already running
        subprocess.run(["runuser", "-u", "munge", "--", "munged"], check=True)
        for _ in range(50):
            if subprocess.run(["munge", "-n"], capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("munged did not start")

    def __exit__(self, *exc):
        subprocess.run(["scancel", "--full", "-u", "root"], env=self.env, capture_output=True)
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        self.procs.clear()
        # Jobs slurmd started may outlive it (no cgroups): end them.
        subprocess.run(["pkill", "-f", "slurmstepd"], capture_output=True)
        return False
