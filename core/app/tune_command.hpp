#pragma once

namespace kreg::app {
// `runner tune REPORT... --out table.json [--force]`: a dispatch table from verified reports (docs/DISPATCH.md).
// Exit status: 0 written; 2 bad command line or a report tune refuses (the message names the file and why).
int run_tune_command(int argc, char** argv);
}  // namespace kreg::app
