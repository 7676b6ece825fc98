// `runner __sandboxed_exec --sandbox POLICY_JSON -- PROGRAM ARGS...`: a step of a submission's build, started
// confined by the grader (sandbox/confined_spawn.hpp), hardens itself with the policy and becomes PROGRAM.
#pragma once

namespace kreg {
// argv[1] is "__sandboxed_exec". Returns only on failure: 126 a bad command line or policy, 127 PROGRAM could
// not be run.
int sandboxed_exec_main(int argc, char** argv);
}  // namespace kreg
