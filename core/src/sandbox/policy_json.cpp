#include "sandbox/policy_json.hpp"

namespace kreg {

void to_json(nlohmann::json& j, const SandboxPolicy& p) {
    j = {{"enabled", p.enabled},
         {"cpu_seconds", p.cpu_seconds},
         {"max_file_bytes", p.max_file_bytes},
         {"max_open_files", p.max_open_files},
         {"network_namespace", p.network_namespace},
         {"seccomp", p.seccomp},
         {"kill_on_violation", p.kill_on_violation},
         {"landlock", p.landlock},
         {"scratch_dir", p.scratch_dir},
         {"readable_paths", p.readable_paths},
         {"memory_bytes", p.memory_bytes},
         {"memory_in_cgroup", p.memory_in_cgroup},
         {"max_processes", p.max_processes},
         {"scratch_bytes", p.scratch_bytes},
         {"fixed_affinity", p.fixed_affinity}};
}

void from_json(const nlohmann::json& j, SandboxPolicy& p) {
    p.enabled = j.value("enabled", p.enabled);
    p.cpu_seconds = j.value("cpu_seconds", p.cpu_seconds);
    p.max_file_bytes = j.value("max_file_bytes", p.max_file_bytes);
    p.max_open_files = j.value("max_open_files", p.max_open_files);
    p.network_namespace = j.value("network_namespace", p.network_namespace);
    p.seccomp = j.value("seccomp", p.seccomp);
    p.kill_on_violation = j.value("kill_on_violation", p.kill_on_violation);
    p.landlock = j.value("landlock", p.landlock);
    p.scratch_dir = j.value("scratch_dir", p.scratch_dir);
    p.readable_paths = j.value("readable_paths", p.readable_paths);
    p.memory_bytes = j.value("memory_bytes", p.memory_bytes);
    p.memory_in_cgroup = j.value("memory_in_cgroup", p.memory_in_cgroup);
    p.max_processes = j.value("max_processes", p.max_processes);
    p.scratch_bytes = j.value("scratch_bytes", p.scratch_bytes);
    p.fixed_affinity = j.value("fixed_affinity", p.fixed_affinity);
}

}  // namespace kreg
