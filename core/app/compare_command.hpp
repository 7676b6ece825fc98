#pragma once

namespace kreg::app {
// `runner compare A.json B.json [--threshold 5%] [--alpha 0.01] [--json FILE] [--csv FILE] ...`
// Exit status: 0 no regression; 1 regression; 2 bad command line or bad input.
int run_compare_command(int argc, char** argv);
}  // namespace kreg::app
