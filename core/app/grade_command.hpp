#pragma once

namespace kreg::app {
// `runner grade --rubric FILE [--rubric HIDDEN] (--submission SO|DIR)... [--submissions DIR] ...`
int run_grade_command(int argc, char** argv);
}  // namespace kreg::app
