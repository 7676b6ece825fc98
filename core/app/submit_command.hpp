// `runner submit --slurm ...` and `runner grade ... --slurm ...`: a sweep or a grading run handed to
// Slurm as a job array of shards (runner --shard I/K, one array task each) and a merge job that Slurm
// starts once every shard has ended (`runner merge --expect K ...`).
#pragma once

namespace kreg::app {
// argv[0] is "submit".
int run_submit_command(int argc, char** argv);
// argv[0] is "grade"; called when the grade command line holds --slurm.
int run_grade_slurm_command(int argc, char** argv);
// Whether a grade command line asks for Slurm (holds --slurm).
bool grade_wants_slurm(int argc, char** argv);
}  // namespace kreg::app
