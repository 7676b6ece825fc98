// Why a run (a sweep, a grading run) stopped before it could finish, as a typed value: the command line
// maps the kind onto an exit status and prints the message.
#pragma once

#include <stdexcept>
#include <string>

namespace kreg {

// The message is whole (the command line prefixes "runner: " or "runner grade: "); the kind is what the
// exit status says: bad input (2), nothing to do (3), or a run that cannot go on here, such as reports
// that cannot be written or a machine that cannot confine submissions (3).
class RunError : public std::runtime_error {
public:
    enum class Kind { bad_input, nothing_to_run, cannot_run };
    RunError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

}  // namespace kreg
