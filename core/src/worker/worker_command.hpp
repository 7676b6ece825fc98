// `runner __worker [--sandbox POLICY_JSON] [--cuda-visible-devices UUID] --nonce N`: the hidden command line
// of the worker process the runner re-executes itself as (worker/session.hpp), read and handed to run_worker.
#pragma once

namespace kreg {
// argv[1] is "__worker". Returns the process exit status (2 for a command line it does not take).
int worker_main(int argc, char** argv);
}  // namespace kreg
