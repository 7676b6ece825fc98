// One fixture plugin swept by the real runner binary, as a user types it (`runner --plugin X.so`, plain or
// `--strict`), as the user running the tests or as nobody (as_nobody.hpp), and the rows as the JSON report
// has them: statuses and end causes are read from the report, never from what the runner printed.
// tests/e2e/sweep_defences_test.cpp (CPU) and gpu_sweep_defences_test.cpp (CUDA) share it.
#pragma once

#include "as_nobody.hpp"
#include "common/types.hpp"
#include "report/json_report.hpp"
#include "run_command.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace kreg::test {

enum class SweepMode { plain, strict };
inline const char* to_text(SweepMode mode) { return mode == SweepMode::plain ? "plain" : "strict"; }

struct FixtureSweepOptions {
    SweepMode mode = SweepMode::plain;
    RunAs who;
    std::vector<std::string> shapes;  // one row each
    std::string extra_options;        // more runner options ("--call-timeout 1", "--no-calibrate")
};

struct FixtureSweep {
    std::string command;  // as handed to sh, for messages
    CommandResult run;    // how the runner ended; its output only for messages
    std::vector<Record> rows;
    long report_owner = -1;  // the uid owning the JSON report (nobody's when the sweep ran as nobody)
    std::string error;       // why there are no rows ("" when the report was read)

    std::string describe() const { return command + "\nexit " + std::to_string(run.exit_code) + "\n" + run.err; }
};

// Sweeps the plugin file `plugin` (its own kernels only: --no-default-plugins) in a fresh folder of its own
// named after `name`. The plugin is copied there and, for nobody, the folder is handed to nobody, with a
// HOME of nobody's inside it: the run needs nothing of the build tree but the runner and its own folders.
inline FixtureSweep sweep_fixture(const std::string& name, const std::string& plugin, const FixtureSweepOptions& o) {
    namespace fs = std::filesystem;
    const fs::path dir = fresh_dir(name);
    fs::create_directories(dir / "plugins");
    fs::create_directories(dir / "home");
    const fs::path copy = dir / "plugins" / fs::path(plugin).filename();
    fs::copy_file(plugin, copy);
    if (o.who.nobody) give_to_nobody(dir);

    FixtureSweep s;
    s.command = o.who.prefix(dir / "home") + KREG_RUNNER + " --no-default-plugins --plugin '" + copy.string() + "'";
    for (const std::string& shape : o.shapes) s.command += " --shape " + shape;
    s.command += " --warmup 2 --repeat 5 --timeout 120 --json report.json";
    if (o.mode == SweepMode::strict) s.command += " --strict";
    if (!o.extra_options.empty()) s.command += " " + o.extra_options;
    s.run = run_command(s.command, dir, dir / "console");
    s.report_owner = owner_uid(dir / "report.json");
    try {
        s.rows = read_records_json(dir / "report.json");
    } catch (const std::exception& e) {
        s.error = e.what();
    }
    return s;
}

// What every row of a fixture's sweep must say.
struct ExpectedRow {
    const char* kernel;  // the fixture's one kernel, also its plugin file's stem
    RowStatus status;
    EndCause end_cause;
    const char* reason_has;  // "": any reason
    const char* signal;      // end_cause signal: the signal's name; otherwise nullptr (no signal on the row)
    const char* options;     // more runner options this fixture needs ("" for none)
};

// Checks the sweep against e: the report read, every shape a row, each row's status, end cause, signal and
// reason; the runner's exit status (0 when every row is ok, 1 otherwise), and the report nobody's when the
// sweep ran as nobody; that the mode was the one asked for (extra.anticheat).
inline void expect_rows(const FixtureSweep& s, const ExpectedRow& e, const FixtureSweepOptions& o) {
    SCOPED_TRACE(std::string(e.kernel) + ", " + to_text(o.mode) + ", as " + o.who.name());
    ASSERT_TRUE(s.error.empty()) << "no report: " << s.error << "\n" << s.describe();
    ASSERT_EQ(s.rows.size(), o.shapes.size()) << s.describe();
    EXPECT_EQ(s.run.exit_code, e.status == RowStatus::ok ? 0 : 1) << s.describe();
    if (o.who.nobody) EXPECT_EQ(s.report_owner, long(kNobodyUid)) << "the sweep did not run as nobody";
    for (const Record& r : s.rows) {
        const std::string row = r.kernel + " at " + to_string(r.shape) + ": " + r.reason;
        EXPECT_EQ(r.kernel, e.kernel) << row;
        EXPECT_EQ(to_string(r.status), to_string(e.status)) << row;  // compared by name: a failure reads as one
        EXPECT_EQ(to_string(r.end_cause), to_string(e.end_cause)) << "end cause, " << row;
        EXPECT_NE(r.reason.find(e.reason_has), std::string::npos) << row;
        EXPECT_EQ(r.signal, e.signal ? std::optional<std::string>(e.signal) : std::nullopt) << row;
        // An exit status only where the worker exited: on its own, or the call watchdog's exit.
        EXPECT_EQ(r.exit_code.has_value(), e.end_cause == EndCause::exited || e.end_cause == EndCause::call_timeout)
            << row;
        // Strict runs leave their evidence (extra.anticheat) on every row they finish, plain runs on none.
        if (o.mode == SweepMode::plain)
            EXPECT_FALSE(r.extra.anticheat.has_value()) << "a plain run's row with strict evidence: " << row;
        else if (r.status == RowStatus::ok)
            EXPECT_TRUE(r.extra.anticheat && r.extra.anticheat->every_call_checked) << "not a strict run: " << row;
    }
}

// How gtest prints a case's parameters (GetParam() in --gtest_list_tests and in failures).
inline void PrintTo(const ExpectedRow& e, std::ostream* os) { *os << e.kernel; }
inline void PrintTo(SweepMode mode, std::ostream* os) { *os << to_text(mode); }
inline void PrintTo(const RunAs& who, std::ostream* os) { *os << who.name(); }

// A readable test name for one case: kernel_mode_user.
inline std::string case_name(const ExpectedRow& e, SweepMode mode, const RunAs& who) {
    return std::string(e.kernel) + "_" + to_text(mode) + "_" + who.name();
}

// A defence table's cases: every fixture of it, plain and strict, as the invoker and as nobody.
using DefenceCase = std::tuple<ExpectedRow, SweepMode, RunAs>;
template <std::size_t N>
auto every_mode_and_user(const ExpectedRow (&table)[N]) {
    return ::testing::Combine(::testing::ValuesIn(table), ::testing::Values(SweepMode::plain, SweepMode::strict),
                              ::testing::Values(RunAs{false}, RunAs{true}));
}
inline std::string defence_case_name(const ::testing::TestParamInfo<DefenceCase>& info) {
    return case_name(std::get<0>(info.param), std::get<1>(info.param), std::get<2>(info.param));
}

// One case: the fixture swept as the case says (more_options before the table line's own), its rows held to
// the table's line; the sweep is returned for checks of the backend's own.
inline FixtureSweep sweep_defence_case(const std::string& prefix, const DefenceCase& c,
                                       const std::vector<std::string>& shapes, const std::string& more_options = "") {
    const auto& [expected, mode, who] = c;
    FixtureSweepOptions options;
    options.mode = mode;
    options.who = who;
    options.shapes = shapes;
    options.extra_options = more_options + expected.options;
    FixtureSweep sweep = sweep_fixture(prefix + case_name(expected, mode, who), fixture(expected.kernel), options);
    expect_rows(sweep, expected, options);
    return sweep;
}

}  // namespace kreg::test
