// The exit status a run's error gives (the README's table): bad input 2, nothing to do or cannot run here 3.
#pragma once

#include "run/run_error.hpp"

namespace kreg::app {

inline int exit_status(RunError::Kind kind) {
    switch (kind) {
        case RunError::Kind::bad_input:
            return 2;
        case RunError::Kind::nothing_to_run:
        case RunError::Kind::cannot_run:
            return 3;
    }
    return 3;
}

}  // namespace kreg::app
