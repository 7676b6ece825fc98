// The platform layer (core/src/platform), the same tests on each system: on Linux in the ordinary suite,
// on Windows cross-built with mingw-w64 and run under wine64 (ctest -L windows).
#include "platform/atomic_replace.hpp"
#include "platform/child_process.hpp"
#include "platform/file_io.hpp"
#include "platform/guard_memory.hpp"
#include "platform/host.hpp"
#include "platform/library_naming.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

using namespace kreg::platform;
namespace fs = std::filesystem;

// platform_child lies next to this test (both are built into the same folder).
fs::path child_program() {
    return executable_path().parent_path() / (std::string("platform_child") + KREG_EXECUTABLE_SUFFIX);
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("kreg_platform_test_" + std::to_string(process_id())) / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

TEST(PlatformNaming, PluginSuffixIsTheOneCMakeGivesAModule) {
    // kreg_add_plugin builds a MODULE library; the loader and the plugin folders look for this suffix.
    EXPECT_EQ(plugin_suffix(), KREG_MODULE_SUFFIX);
    EXPECT_EQ(os_description().rfind(std::string(system_name()), 0), 0u) << os_description();
}

TEST(PlatformHost, FactsAndCalendar) {
    EXPECT_GT(logical_cpus(), 0);
    EXPECT_FALSE(host_name().empty());
    const std::tm day = utc_calendar(std::time_t(86400 * 365 + 3600));  // 1971-01-01 01:00 UTC
    EXPECT_EQ(day.tm_year, 71);
    EXPECT_EQ(day.tm_yday, 0);
    EXPECT_EQ(day.tm_hour, 1);
    EXPECT_TRUE(fs::exists(executable_path())) << executable_path();
    EXPECT_TRUE(process_running(process_id()));
}

TEST(PlatformAtomicReplace, ReplacesAndLeavesNoTemporary) {
    const fs::path dir = fresh_dir("replace");
    const fs::path target = dir / "report.json";
    ASSERT_EQ(replace_file(target, "first"), "");
    ASSERT_EQ(replace_file(target, "second, longer"), "");  // over an existing file
    EXPECT_EQ(read_file(target), "second, longer");
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        (void)entry;
        ++files;
    }
    EXPECT_EQ(files, 1u) << "a temporary file was left next to the target";
}

TEST(PlatformAtomicReplace, FailureNamesTheStepAndLeavesTheTarget) {
    const fs::path missing = fresh_dir("replace_fail") / "no such folder" / "report.json";
    const std::string error = replace_file(missing, "x");
    EXPECT_EQ(error.rfind("cannot create a temporary file next to it: ", 0), 0u) << error;
    EXPECT_FALSE(fs::exists(missing));
}

TEST(PlatformGuardMemory, ReserveThenOpenPart) {
    const size_t page = page_size();
    ASSERT_GE(page, 4096u);
    auto* base = static_cast<unsigned char*>(reserve_inaccessible(4 * page));
    ASSERT_NE(base, nullptr);
    ASSERT_TRUE(make_read_write(base + page, 2 * page));
    base[page] = 7;
    base[3 * page - 1] = 9;
    EXPECT_EQ(base[page] + base[3 * page - 1], 16);
    release(base, 4 * page);
}

TEST(PlatformFileIo, AnAppendFileHasOneWriterAndIsCutWhereAsked) {
    const fs::path path = fresh_dir("append") / "run.journal.jsonl";
    const int fd = open_append(path, true, true);
    ASSERT_GE(fd, 0);
    EXPECT_LT(open_append(path, true, true), 0) << "an exclusive create of an existing file succeeded";
    ASSERT_EQ(try_lock_exclusive(fd), 0);
    const int second = open_append(path, false, false);
    ASSERT_GE(second, 0);
    EXPECT_EQ(try_lock_exclusive(second), EWOULDBLOCK) << "a second writer took the lock";
    close_file(second);
    const std::string text = "{\"a\":1}\n{\"torn";
    ASSERT_EQ(write_some(fd, text.data(), text.size()), long(text.size()));
    EXPECT_EQ(sync_file(fd), 0);
    EXPECT_EQ(truncate_file(fd, 8), 0);
    close_file(fd);
    EXPECT_EQ(read_file(path), "{\"a\":1}\n");
    std::string bytes, error;
    ASSERT_TRUE(read_regular_file(path, 1 << 20, bytes, error)) << error;
    EXPECT_EQ(bytes, "{\"a\":1}\n");
    EXPECT_FALSE(read_regular_file(path, 4, bytes, error));
    EXPECT_FALSE(read_regular_file(path.parent_path(), 1 << 20, bytes, error)) << "read a folder as a file";
}

TEST(PlatformChild, TheStdioChannelKeepsWhatAPluginPrintsOffIt) {
    ChildProcess child = ChildProcess::start(child_program(), {"stdio-channel"});
    ASSERT_TRUE(child.write_line("ping"));
    std::string line;
    ASSERT_EQ(child.read_line(line, 60), ChildProcess::Read::line) << child.stderr_tail();
    EXPECT_EQ(line, "reply to ping");
    EXPECT_EQ(child.read_line(line, 60), ChildProcess::Read::closed) << "more on the channel: " << line;
    EXPECT_EQ(child.wait().exit_code, 0);
    EXPECT_NE(child.stderr_tail().find("a plugin's printf"), std::string::npos) << child.stderr_tail();
    EXPECT_NE(child.stderr_tail().find("a plugin's cout"), std::string::npos) << child.stderr_tail();
}

TEST(PlatformChild, ExchangesLinesAndExits) {
    ChildProcess child = ChildProcess::start(child_program(), {"echo"});
    std::string line;
    ASSERT_EQ(child.read_line(line, 60), ChildProcess::Read::line) << child.stderr_tail();
    EXPECT_EQ(line, "hello " + std::to_string(child.pid()));
    ASSERT_TRUE(child.write_line("a line with \"quotes\" and spaces"));
    ASSERT_EQ(child.read_line(line, 60), ChildProcess::Read::line);
    EXPECT_EQ(line, "echo: a line with \"quotes\" and spaces");
    ASSERT_TRUE(child.write_line("exit"));
    EXPECT_EQ(child.read_line(line, 60), ChildProcess::Read::closed);
    const ChildExit end = child.wait();
    EXPECT_EQ(end.exit_code, 0);
    EXPECT_FALSE(end.killed);
    EXPECT_EQ(end.fault, "");
}

TEST(PlatformChild, ExitCodeAndStderrTail) {
    ChildProcess child = ChildProcess::start(child_program(), {"exit", "3"});
    std::string line;
    EXPECT_EQ(child.read_line(line, 60), ChildProcess::Read::closed);
    const ChildExit end = child.wait();
    EXPECT_EQ(end.exit_code, 3);
    EXPECT_EQ(end.describe(), "exited with code 3");
    EXPECT_NE(child.stderr_tail().find("platform_child: exiting with 3"), std::string::npos) << child.stderr_tail();
}

TEST(PlatformChild, ArgumentsArriveAsGiven) {
    // Windows rebuilds argv from one command line: spaces, quotes and backslashes must survive the trip.
    ChildProcess child = ChildProcess::start(child_program(), {"exit", "7"});
    EXPECT_EQ(child.wait().exit_code, 7);
    ChildProcess unknown = ChildProcess::start(child_program(), {"no such \"mode\" \\", ""});
    EXPECT_EQ(unknown.wait().exit_code, 64);
    EXPECT_NE(unknown.stderr_tail().find("usage: platform_child"), std::string::npos) << unknown.stderr_tail();
}

TEST(PlatformChild, AFaultOnAGuardPageIsExplainedAndEndsTheChild) {
    ChildProcess child = ChildProcess::start(child_program(), {"fault"});
    std::string line;
    EXPECT_EQ(child.read_line(line, 60), ChildProcess::Read::closed);
    const ChildExit end = child.wait();
    EXPECT_FALSE(end.killed);
    EXPECT_TRUE(end.fault == "SIGSEGV" || end.fault == "EXCEPTION_ACCESS_VIOLATION") << end.describe();
    EXPECT_NE(child.stderr_tail().find("platform_child: explained a write to the guard page"), std::string::npos)
        << child.stderr_tail();
    EXPECT_EQ(child.stderr_tail().find("did not fault"), std::string::npos);
}

TEST(PlatformChild, AHangingChildTimesOutAndIsKilledWithWhatItStarted) {
    ChildProcess child = ChildProcess::start(child_program(), {"grandchild"});
    std::string line;
    ASSERT_EQ(child.read_line(line, 60), ChildProcess::Read::line) << child.stderr_tail();
    ASSERT_EQ(line.rfind("grandchild ", 0), 0u) << line;
    const long grandchild = std::stol(line.substr(11));
    ASSERT_TRUE(process_running(grandchild));
    EXPECT_EQ(child.read_line(line, 0.5), ChildProcess::Read::timed_out);
    child.kill_tree();
    const ChildExit end = child.wait();
    EXPECT_TRUE(end.killed);
    EXPECT_EQ(end.describe(), "killed (with everything it started)");
    // The grandchild goes with it; give the system a moment to finish it.
    for (int i = 0; i < 200 && process_running(grandchild); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(process_running(grandchild)) << "the grandchild " << grandchild << " outlived kill_tree";
}

TEST(PlatformChild, ALineWithoutEndIsTooLong) {
    ChildProcess child = ChildProcess::start(child_program(), {"long-line"});
    std::string line;
    EXPECT_EQ(child.read_line(line, 60), ChildProcess::Read::too_long);
    child.kill_tree();
    EXPECT_TRUE(child.wait().killed);
}

TEST(PlatformChild, AMissingProgramIsAnErrorNamingIt) {
    const fs::path missing = fresh_dir("missing") / "no_such_program";
    try {
        ChildProcess child = ChildProcess::start(missing, {});
        // POSIX finds out after fork: the child says so and exits 127.
        const ChildExit end = child.wait();
        EXPECT_EQ(end.exit_code, 127);
        EXPECT_NE(child.stderr_tail().find("exec failed"), std::string::npos);
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("no_such_program"), std::string::npos) << e.what();
    }
}

}  // namespace
