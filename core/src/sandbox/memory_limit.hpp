// A memory limit per worker, and telling afterwards whether a worker ended because of it.
//
// Two layers, each standing alone:
//   WorkerCgroup   a fresh cgroup v2 leaf per worker, made by the runner (the parent): memory.max, memory.swap.max
//                  0, memory.oom.group 1 and pids.max. It counts everything the worker's processes charge
//                  (anonymous memory, page cache, shmem, kernel memory) and the OOM killer ends the worker
//                  with SIGKILL when it goes over. Needs cgroup v2 with the memory controller delegated to
//                  the runner's cgroup; otherwise create() says why not and the runner goes on without it.
//   RLIMIT_DATA    set by the worker on itself (apply_resource_limits, resource_limits.hpp), always when
//                  SandboxPolicy::memory_bytes > 0, cgroup or not: private writable mappings of one process
//                  beyond the limit fail (malloc returns NULL, mmap ENOMEM, new throws std::bad_alloc).
//                  Never RLIMIT_AS: the CUDA driver reserves far more address space (PROT_NONE) than any
//                  sensible limit; RLIMIT_DATA does not count those reservations, nor cudaMallocHost's pinned
//                  buffers (mapped from the driver's device file), so it limits the plugin's heap, not those.
//
// How the runner's cgroup is arranged (once per runner process, on the first create()): the workers' cgroups
// are children of the runner's own cgroup <own> (from /proc/self/cgroup, under the cgroup2 mount). Controllers
// can be passed to children only by a cgroup without processes of its own (the root excepted), so when
// <own> holds the runner itself, the runner moves into <own>/kreg-runner-<pid> and then enables +memory (and
// +pids where delegated) in <own>/cgroup.subtree_control. Only the runner moves: when other processes share
// <own> (a shell that started it), that fails with EBUSY, the runner moves back and create() reports it.
// Start the runner in a cgroup of its own (systemd-run --scope -p Delegate=yes ..., or a container whose
// cgroup it is alone in) to get the cgroup layer.
#pragma once

#include "platform/process_id.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kreg {

class WorkerCgroup;

namespace detail {
struct WorkerParent;
std::optional<WorkerCgroup> create_worker_cgroup(const WorkerParent& parent, uint64_t memory_bytes, uint64_t max_pids,
                                                 std::string& why_not);
}  // namespace detail

// One worker's cgroup: <own>/kreg-worker-<runner pid>-<n>. The runner clones the worker, which waits on a
// sync pipe until the runner has called add(pid); only then does it go on (and exec or load the plugin).
// After the worker ended and was reaped: memory_limit_hit() and peak_bytes(), then let it go (the destructor
// kills whatever is left in it and removes the directory).
class WorkerCgroup {
public:
    // memory_bytes 0 or max_pids 0: no limit of that kind ("max"). pids.max is set only where the pids
    // controller is delegated; limits() says what was set. nullopt with why_not filled when no cgroup can be
    // made, e.g. "cgroup v2 is not mounted (this machine has a v1 layout)".
    static std::optional<WorkerCgroup> create(uint64_t memory_bytes, uint64_t max_pids, std::string& why_not);

    WorkerCgroup(WorkerCgroup&& other) noexcept;
    WorkerCgroup& operator=(WorkerCgroup&& other) noexcept;
    WorkerCgroup(const WorkerCgroup&) = delete;
    WorkerCgroup& operator=(const WorkerCgroup&) = delete;
    // kill_all(), waits (at most about 2 s) until no process is left, removes the directory. A directory that
    // cannot be removed is named on stderr.
    ~WorkerCgroup();

    // Moves pid (all its threads) into this cgroup: writes it to cgroup.procs.
    bool add(platform::ProcessId pid, std::string& why_not);

    // From memory.events: the OOM killer ran (oom_kill), an allocation found the cgroup full (oom), or usage
    // reached memory.max (max). Ask only about a worker that failed: one that reached the limit through page
    // cache and went on reclaiming it also counts "max".
    bool memory_limit_hit() const;
    // memory.peak (Linux 5.19), the most memory the cgroup ever held; 0 where the file does not exist.
    uint64_t peak_bytes() const;
    // Every process in the cgroup gets SIGKILL: cgroup.kill (Linux 5.14), else freeze the cgroup (no more
    // forks) and kill the pids listed in cgroup.procs until none is left (bounded).
    void kill_all();

    const std::string& path() const { return path_; }  // the cgroup's directory
    // What was set, for the sandbox report: "memory.max 4294967296, memory.swap.max 0, pids.max 64", and for
    // a controller that is not delegated "pids.max not set (the pids controller is not delegated to ...)".
    const std::string& limits() const { return limits_; }

private:
    explicit WorkerCgroup(std::string path) : path_(std::move(path)) {}
    friend std::optional<WorkerCgroup> detail::create_worker_cgroup(const detail::WorkerParent&, uint64_t, uint64_t,
                                                                    std::string&);
    std::string path_;  // empty: moved from
    std::string limits_;
};

// Without a cgroup, whether a worker that ended ran into the memory limit, by what the parent saw of it: its
// peak RSS (wait4's ru_maxrss, KiB) reached 90 % of the limit. What the worker wrote ("std::bad_alloc",
// "Cannot allocate memory") is its claim and is never read: an allocation RLIMIT_DATA refused leaves nothing
// the parent can observe, so that row is the kernel's failure (docs/GRADING.md, "Outcomes").
bool looks_like_memory_limit(uint64_t limit_bytes, long ru_maxrss_kib);

// "memory limit of 4 GiB exceeded (peak 4.0 GiB)"; without "(peak ...)" when peak_bytes is 0.
std::string memory_limit_reason(uint64_t limit_bytes, uint64_t peak_bytes);

// For the runner after a worker ended and was reaped (before its WorkerCgroup is destroyed): the reason the
// row carries when the memory limit explains the end, else "". cgroup may be null (none could be made). The
// cgroup's memory.events (memory_limit_hit()), or the peak RSS of looks_like_memory_limit; the peak is
// memory.peak where it exists, else ru_maxrss. limit_bytes 0 (no limit): always "".
std::string describe_memory_limit_hit(uint64_t limit_bytes, const WorkerCgroup* cgroup, long ru_maxrss_kib);

// The pieces of create(), separate so a test can point them at a hierarchy and controllers of its choosing.
namespace detail {

struct Cgroup2Mount {
    std::string mount_point;  // "/sys/fs/cgroup"
    std::string root;         // the cgroup shown at mount_point, "/" unless a subtree is bind-mounted
};

// From the text of /proc/self/mountinfo: every cgroup2 mount, in order.
std::vector<Cgroup2Mount> cgroup2_mounts(const std::string& mountinfo);
// The mount point of a cgroup v1 hierarchy that holds controller ("memory"), or "".
std::string cgroup_v1_mount_of(const std::string& mountinfo, const std::string& controller);
// The directory of this process's cgroup v2 from the texts of /proc/self/mountinfo and /proc/self/cgroup
// ("0::/path" line), or nullopt and why not.
std::optional<std::string> own_cgroup_dir(const std::string& mountinfo, const std::string& proc_self_cgroup,
                                          std::string& why_not);

// A cgroup whose children get the controllers listed: the workers' cgroups are made inside dir.
struct WorkerParent {
    std::string dir;
    std::vector<std::string> controllers;  // enabled in dir/cgroup.subtree_control
    std::string not_enabled;               // why an optional controller is missing, "" when none is
};

// From the text of a cgroup's memory.events ("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n..."): whether the cap
// was reached (max, oom or oom_kill above 0). Unknown keys and malformed lines count for nothing.
bool memory_events_show_limit_hit(const std::string& memory_events);
// The same for the memory.events file in cgroup_dir; false where it cannot be read.
bool memory_limit_hit_in(const std::string& cgroup_dir);

// Arranges own_dir as described at the top of this file (the runner's leaf, subtree_control) so its children
// get every controller in required and those of optional that own_dir has. The calling process is the one
// moved. Not cached: create() calls it once per process.
std::optional<WorkerParent> prepare_worker_parent(const std::string& own_dir, const std::vector<std::string>& required,
                                                  const std::vector<std::string>& optional, std::string& why_not);

}  // namespace detail
}  // namespace kreg
