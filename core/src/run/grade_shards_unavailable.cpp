// Grading in shards (--jobs, --devices) where grading itself is refused (Windows: no confinement, see
// sandbox/unconfined.cpp): the same refusal, before any shard starts.
#include "run/grade_shards.hpp"

#include "sandbox/confined_spawn.hpp"

#include <iostream>

namespace kreg {
namespace {

int refuse() {
    std::cerr << "runner grade: this machine cannot confine submissions: " << why_confinement_fails("") << "\n";
    return 3;
}

}  // namespace

int grade_on_devices(const DevicesSpec&, const std::vector<std::string>&, const std::filesystem::path&,
                     const std::filesystem::path&) {
    return refuse();
}

int grade_with_jobs(int, const std::vector<std::string>&, const std::filesystem::path&, const std::filesystem::path&) {
    return refuse();
}

int grade_in_shards(const std::vector<GradeShardLane>&, const std::vector<std::string>&, const std::filesystem::path&,
                    const std::filesystem::path&, const std::vector<std::string>&) {
    return refuse();
}

}  // namespace kreg
