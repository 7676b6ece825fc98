// kreg's plugins as .dll files under Windows (run here under wine64): listed and measured by kreg's own
// loader and CPU pipeline in a child process each; a crashing and a hanging plugin become rows while the
// sweep goes on; the student template, built by the cross toolchain against the installed SDK, is loaded,
// measured and verified; the rows are written as a report.
#include "sweep_rows.hpp"

#include "common/library_format.hpp"
#include "plugin/loader.hpp"
#include "platform/host.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace {

using namespace kreg;
using windows_test::SweepRow;
namespace fs = std::filesystem;

const fs::path& bin_dir() {
    static const fs::path dir = platform::executable_path().parent_path();
    return dir;
}
fs::path probe() { return bin_dir() / "plugin_probe.exe"; }
fs::path fixture(const std::string& name) { return bin_dir() / "fixtures" / ("fixture_" + name + ".dll"); }
// The in-tree CPU plugins, in the build tree's plugin folder (<build>/lib/kreg/plugins).
fs::path in_tree(const std::string& name) {
    return bin_dir().parent_path() / "lib" / "kreg" / "plugins" / (name + ".dll");
}
// Put there by the Linux build's windows.template_dll (tests/cmake/windows_cross.cmake).
fs::path template_dll() { return bin_dir() / "template" / "my_gemm.dll"; }

std::map<std::string, SweepRow> by_kernel(const std::vector<SweepRow>& rows) {
    std::map<std::string, SweepRow> out;
    for (const SweepRow& r : rows) out[r.kernel.empty() ? r.plugin : r.kernel] = r;
    return out;
}

TEST(WindowsPlugins, TheLoaderListsADllAndRefusesWhatIsNotOne) {
    const LoadedPlugin plugin = LoadedPlugin::load(in_tree("cpu_naive"));
    ASSERT_FALSE(plugin.kernels().empty());
    EXPECT_STREQ(plugin.kernels()[0].name, "cpu_naive");
    EXPECT_EQ(native_plugin_suffix(), ".dll");
    try {
        LoadedPlugin::load(fixture("no_entry"));
        ADD_FAILURE() << "loaded a .dll without the entry point";
    } catch (const PluginLoadError& e) {
        EXPECT_EQ(e.kind(), PluginLoadError::Kind::no_entry_point) << e.what();
    }
    try {
        LoadedPlugin::load(fixture("wrong_abi"));
        ADD_FAILURE() << "loaded a plugin of another ABI major";
    } catch (const PluginLoadError& e) {
        EXPECT_EQ(e.kind(), PluginLoadError::Kind::abi_mismatch) << e.what();
    }
}

TEST(WindowsPlugins, ALinuxSoIsRefusedWithWhatToBuildInstead) {
    const fs::path so = fs::temp_directory_path() / "kreg_windows_test_linux_plugin.so";
    {
        std::ofstream out(so, std::ios::binary);
        out << "\x7f"
               "ELF"
            << std::string(60, '\0');
    }
    try {
        LoadedPlugin::load(so);
        ADD_FAILURE() << "loaded an ELF file";
    } catch (const PluginLoadError& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.kind(), PluginLoadError::Kind::not_shared_library);
        EXPECT_NE(what.find("a Linux plugin"), std::string::npos) << what;
        EXPECT_NE(what.find("build the plugin on Windows as a .dll"), std::string::npos) << what;
    }
    fs::remove(so);
}

TEST(WindowsSweep, CrashAndHangBecomeRowsAndTheSweepGoesOn) {
    // The misbehaving ones first: every plugin after them must still be measured.
    const std::vector<fs::path> plugins = {fixture("crash_in_run"), fixture("hang_in_run"), fixture("writes_past_c"),
                                           fixture("wrong_result"), fixture("no_entry"),    in_tree("cpu_naive"),
                                           in_tree("cpu_blocked"),  fixture("good")};
    const std::vector<SweepRow> rows = windows_test::sweep(probe(), plugins, 48, 10.0);
    const auto row = by_kernel(rows);

    ASSERT_TRUE(row.count("fixture_crash_in_run"));
    EXPECT_EQ(row.at("fixture_crash_in_run").status, "crashed");
    EXPECT_NE(row.at("fixture_crash_in_run").reason.find("EXCEPTION_ACCESS_VIOLATION"), std::string::npos)
        << row.at("fixture_crash_in_run").reason;

    ASSERT_TRUE(row.count("fixture_hang_in_run"));
    EXPECT_EQ(row.at("fixture_hang_in_run").status, "timeout");
    EXPECT_NE(row.at("fixture_hang_in_run").reason.find("killed (with everything it started)"), std::string::npos)
        << row.at("fixture_hang_in_run").reason;

    // C lies against guard pages (VirtualAlloc): the write past it faults where it is made, and the vectored
    // handler says what happened before the process dies.
    ASSERT_TRUE(row.count("fixture_writes_past_c"));
    EXPECT_EQ(row.at("fixture_writes_past_c").status, "crashed");
    EXPECT_NE(row.at("fixture_writes_past_c").reason.find("kreg: the kernel wrote past the end of C"),
              std::string::npos)
        << row.at("fixture_writes_past_c").reason;

    ASSERT_TRUE(row.count("fixture_wrong_result"));
    EXPECT_EQ(row.at("fixture_wrong_result").status, "wrong_result") << row.at("fixture_wrong_result").reason;

    ASSERT_TRUE(row.count("fixture_no_entry.dll"));
    EXPECT_EQ(row.at("fixture_no_entry.dll").status, "failed");
    EXPECT_NE(row.at("fixture_no_entry.dll").reason.find("no entry point"), std::string::npos);

    for (const char* good : {"cpu_naive", "cpu_blocked", "fixture_good"}) {
        ASSERT_TRUE(row.count(good)) << good;
        EXPECT_EQ(row.at(good).status, "ok") << good << ": " << row.at(good).reason;
        EXPECT_EQ(row.at(good).record.at("samples_ms").size(), 3u) << good;
        EXPECT_LE(row.at(good).record.at("max_rel_err").get<double>(),
                  row.at(good).record.at("tolerance").get<double>());
    }

    const fs::path report = bin_dir() / "windows_sweep_report.json";
    windows_test::write_report(report, rows);
    std::ifstream in(report);
    const nlohmann::json written = nlohmann::json::parse(in);
    EXPECT_EQ(written.at("rows").size(), rows.size());
}

TEST(WindowsSweep, TheTemplateBuiltAgainstTheInstalledSdkIsMeasuredAndVerified) {
    ASSERT_TRUE(fs::exists(template_dll()))
        << template_dll() << " is missing: the Linux build's ctest test windows.template_dll builds it "
        << "(ctest -L windows runs it first)";
    const std::vector<SweepRow> rows = windows_test::sweep(probe(), {template_dll()}, 64, 60.0);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].kernel, "student_gemm");
    EXPECT_EQ(rows[0].status, "ok") << rows[0].reason;
    EXPECT_EQ(rows[0].record.value("plugin", ""), "my_gemm") << rows[0].record.dump();
    EXPECT_GT(rows[0].record.value("gflops", 0.0), 0.0) << rows[0].record.dump();
}

}  // namespace
