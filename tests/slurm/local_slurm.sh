#!/usr/bin/env bash
# A single-node Slurm cluster for tests, from Debian's packages (slurmctld, slurmd, slurm-client, munge).
#
#   tests/slurm/local_slurm.sh start DIR   # start munged, slurmctld and slurmd with all their state in DIR
#   tests/slurm/local_slurm.sh stop DIR    # cancel every job, stop the daemons this script started, remove DIR
#
# After `start`, clients reach the cluster with SLURM_CONF=DIR/slurm.conf (sbatch, squeue, scontrol);
# nothing under /etc or /run is touched, so it runs beside a real Slurm or munge and beside other test
# runs (each has its own ports and its own munge socket and key). The node `localhost` fakes two GPUs
# (gres.conf entries on /dev/null), so `--gres=gpu:N` jobs are scheduled as on a GPU cluster. There is no
# accounting (no slurmdbd): poll jobs with scontrol/squeue, not sacct.
#
# Exit status of `start`: 0 the node is idle and takes jobs; 77 Slurm cannot run here (not root, or the
# packages are missing) with "SKIP: reason" on stdout and the reason in DIR/skip_reason, which the tests
# read to skip themselves; 1 it should have started and did not (the daemons' logs are printed). With
# KREG_REQUIRE_SLURM=1 (CI) a missing package or a non-root user is an error too (exit 1).
set -uo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
(( $# == 2 )) || usage
action=$1
dir=$2

skip() {
    mkdir -p "$dir"
    echo "$1" >"$dir/skip_reason"
    if [[ ${KREG_REQUIRE_SLURM:-0} == 1 ]]; then
        echo "local_slurm: $1 (KREG_REQUIRE_SLURM=1: Slurm must run here)" >&2
        exit 1
    fi
    echo "SKIP: $1"
    exit 77
}

# The pid files hold only processes this script started; each is ended by its own id.
stop_daemon() {
    local pidfile=$1 pid
    [[ -f $pidfile ]] || return 0
    pid=$(<"$pidfile")
    if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$pidfile"
}

stop() {
    [[ -d $dir ]] || return 0
    if [[ -f $dir/slurm.conf && -f $dir/slurmctld.pid ]] && command -v scancel >/dev/null; then
        # Jobs first, so that no job's processes outlive the cluster (proctrack/linuxproc tracks them
        # while slurmd runs).
        SLURM_CONF=$dir/slurm.conf scancel --quiet --user="$(id -un)" 2>/dev/null
        for _ in $(seq 50); do
            [[ -z $(SLURM_CONF=$dir/slurm.conf squeue -h -o %i 2>/dev/null) ]] && break
            sleep 0.1
        done
    fi
    stop_daemon "$dir/slurmd.pid.launched"
    stop_daemon "$dir/slurmctld.pid.launched"
    stop_daemon "$dir/munged.pid.launched"
    rm -rf "$dir"
}

# A TCP port nobody listens on (another test run's cluster may hold the default ones).
free_port() {
    local port
    for _ in $(seq 100); do
        port=$(( 20000 + RANDOM % 30000 ))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
    done
    return 1
}

show_logs() {
    for f in munged.log slurmctld.log slurmd.log slurmctld.out slurmd.out munged.out; do
        [[ -s $dir/$f ]] || [[ -s $dir/munge/$f ]] || continue
        local path=$dir/$f
        [[ -s $path ]] || path=$dir/munge/$f
        echo "---- $path (last lines)" >&2
        tail -n 20 "$path" >&2
    done
}

start() {
    [[ $(id -u) -eq 0 ]] || skip "a local Slurm needs root (slurmd runs jobs as their users), running as $(id -un)"
    local missing=()
    for tool in munged slurmctld slurmd sbatch scontrol squeue sinfo scancel setpriv; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    (( ${#missing[@]} == 0 )) || skip "Slurm is not installed (missing ${missing[*]}; apt-get install slurmctld slurmd slurm-client munge)"
    id munge >/dev/null 2>&1 || skip "no 'munge' user (install the munge package)"

    stop  # what a killed earlier run left behind
    mkdir -p "$dir"/{munge,ctld,spool}
    chmod 755 "$dir"
    # munged insists on its own files: a key only it can read, in a folder only it can write.
    chown munge:munge "$dir/munge"
    chmod 711 "$dir/munge"  # clients (root) need only to reach the socket
    if [[ ${#dir} -gt 80 ]]; then
        echo "local_slurm: $dir is too long for a UNIX socket path" >&2
        exit 1
    fi
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chown munge:munge "$dir/munge/munge.key"
    chmod 400 "$dir/munge/munge.key"
    local socket=$dir/munge/munge.socket
    setpriv --reuid=munge --regid=munge --init-groups -- munged --foreground --force \
        --socket="$socket" --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
        --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
        </dev/null >"$dir/munged.out" 2>&1 &
    echo $! >"$dir/munged.pid.launched"
    for _ in $(seq 50); do [[ -S $socket ]] && break; sleep 0.1; done
    if [[ ! -S $socket ]]; then
        echo "local_slurm: munged did not start" >&2
        show_logs
        stop
        exit 1
    fi

    local ctld_port slurmd_port cpus
    ctld_port=$(free_port) && slurmd_port=$(free_port) || { echo "local_slurm: no free TCP port" >&2; exit 1; }
    # At least 4 CPUs, so a 4-task array of one-CPU shards runs at once even on a 2-core machine; the
    # config's count is believed (config_overrides), as a test cluster's CPUs are only slots.
    cpus=$(nproc)
    (( cpus < 4 )) && cpus=4
    cat >"$dir/slurm.conf" <<EOF
# Written by tests/slurm/local_slurm.sh: a one-node test cluster; everything lives in $dir.
ClusterName=kregtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
# Tests wait on the scheduler: look at pending jobs every second, not every minute.
SchedulerParameters=sched_interval=1,bf_interval=1
ReturnToService=2
SlurmdParameters=config_overrides
# Finished jobs stay visible to scontrol for an hour: without accounting that is the only record.
MinJobAge=3600
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=4096 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
    cat >"$dir/gres.conf" <<EOF
# Two fake GPUs: Slurm schedules them; /dev/null and /dev/zero stand in for the device files (one
# file may not be two GPUs).
NodeName=localhost Name=gpu File=/dev/null
NodeName=localhost Name=gpu File=/dev/zero
EOF
    export SLURM_CONF=$dir/slurm.conf
    slurmctld -D -f "$SLURM_CONF" </dev/null >"$dir/slurmctld.out" 2>&1 &
    echo $! >"$dir/slurmctld.pid.launched"
    slurmd -D -N localhost -f "$SLURM_CONF" </dev/null >"$dir/slurmd.out" 2>&1 &
    echo $! >"$dir/slurmd.pid.launched"

    local state=""
    for _ in $(seq 300); do
        state=$(sinfo -h -n localhost -o %T 2>/dev/null)
        [[ $state == idle ]] && break
        kill -0 "$(<"$dir/slurmctld.pid.launched")" 2>/dev/null || { state="slurmctld exited"; break; }
        kill -0 "$(<"$dir/slurmd.pid.launched")" 2>/dev/null || { state="slurmd exited"; break; }
        sleep 0.1
    done
    if [[ $state != idle ]]; then
        echo "local_slurm: the node did not become idle within 30 s (state '${state:-unknown}')" >&2
        scontrol show node localhost >&2 2>&1
        show_logs
        stop
        exit 1
    fi
    echo "local_slurm: up in $dir (SLURM_CONF=$SLURM_CONF)"
}

case $action in
    start) start ;;
    stop) stop ;;
    *) usage ;;
esac
