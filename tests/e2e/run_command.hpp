// Runs a command line for the end-to-end tests and captures what it printed and how it ended.
#pragma once

#include "report/json_report.hpp"
#include "report_schema_check.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace kreg::test {

struct CommandResult {
    int exit_code = -1;
    std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs `command` with sh in `cwd`; stdout and stderr go to files in `scratch`.
inline CommandResult run_command(const std::string& command, const std::filesystem::path& cwd,
                                 const std::filesystem::path& scratch) {
    std::filesystem::create_directories(scratch);
    const auto out = scratch / "stdout.txt";
    const auto err = scratch / "stderr.txt";
    const std::string full =
        "cd '" + cwd.string() + "' || exit 99; " + command + " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(full.c_str());
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

// A fresh, empty folder under the system temp directory for one test. Every sweep report left in it
// is checked against the report schema when the test program ends (report_schema_check.hpp).
inline std::filesystem::path fresh_dir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("kreg-e2e-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    ReportSchemaCheck::instance().watch(dir);
    return dir;
}

// A test fixture plugin (tests/fixtures) by name: its .so in the build's fixture folder.
inline std::string fixture(const std::string& name) { return std::string(KREG_FIXTURE_DIR) + "/" + name + ".so"; }

// A report's rows by kernel name (the last row of a kernel wins).
inline std::map<std::string, Record> rows_by_kernel(const std::filesystem::path& json) {
    std::map<std::string, Record> out;
    for (const auto& r : read_records_json(json)) out[r.kernel] = r;
    return out;
}

}  // namespace kreg::test
