// The loader rejects every kind of broken plugin with its own message, naming the file; the worker
// session turns kernel failures into statuses instead of exceptions.
#include "plugin/loader.hpp"
#include "plugin/registry.hpp"
#include "worker/session.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace kreg {
namespace {

std::string fixture(const std::string& name) { return std::string(KREG_FIXTURE_DIR) + "/" + name + ".so"; }

// Loads path and returns the error; fails the test if loading succeeds.
PluginLoadError load_error(const std::string& path) {
    try {
        LoadedPlugin::load(path);
    } catch (const PluginLoadError& e) {
        return e;
    }
    ADD_FAILURE() << "loading " << path << " should have failed";
    return PluginLoadError(PluginLoadError::Kind::bad_descriptor, "");
}

TEST(Loader, LoadsAGoodPluginAndCopiesItsMetadata) {
    const LoadedPlugin plugin = LoadedPlugin::load(fixture("fixture_good"));
    EXPECT_EQ(plugin.descriptor().abi_major, KREG_ABI_MAJOR);
    ASSERT_EQ(plugin.kernels().size(), 1u);
    const PluginInfo info = plugin.info();
    EXPECT_EQ(info.name, "fixture_good");
    EXPECT_EQ(info.version, "0.0.1");
    ASSERT_EQ(info.kernels.size(), 1u);
    EXPECT_EQ(info.kernels[0].name, "fixture_good");
    EXPECT_EQ(info.kernels[0].backend, Backend::cpu);
    EXPECT_EQ(info.kernels[0].dtypes, std::vector<DType>{DType::fp32});
}

TEST(Loader, MissingFile) {
    const auto e = load_error("/nonexistent/plugin.so");
    EXPECT_EQ(e.kind(), PluginLoadError::Kind::not_found);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/plugin.so: no such file"), std::string::npos) << e.what();
}

TEST(Loader, NotAnElfFile) {
    const auto path = fixture("not_elf");
    const auto e = load_error(path);
    EXPECT_EQ(e.kind(), PluginLoadError::Kind::not_shared_library);
    EXPECT_EQ(std::string(e.what()), path + ": not a shared library (no ELF header)");
}

TEST(Loader, NoEntryPoint) {
    const auto path = fixture("fixture_no_entry");
    const auto e = load_error(path);
    EXPECT_EQ(e.kind(), PluginLoadError::Kind::no_entry_point);
    EXPECT_NE(std::string(e.what()).find(path + ": no entry point"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kreg_plugin_entry"), std::string::npos) << e.what();
}

TEST(Loader, WrongAbiMajor) {
    const auto path = fixture("fixture_wrong_abi");
    const auto e = load_error(path);
    EXPECT_EQ(e.kind(), PluginLoadError::Kind::abi_mismatch);
    EXPECT_NE(std::string(e.what()).find(path + ": ABI major 99 but runner expects " + std::to_string(KREG_ABI_MAJOR)),
              std::string::npos)
        << e.what();
}

TEST(Loader, NullDescriptor) {
    const auto e = load_error(fixture("fixture_null_descriptor"));
    EXPECT_EQ(e.kind(), PluginLoadError::Kind::null_descriptor);
    EXPECT_NE(std::string(e.what()).find("returned no descriptor"), std::string::npos) << e.what();
}

// ABI 1.1 only appends: a plugin built against 1.0 (shorter kernel infos, abi_minor 0) loads, with its
// second kernel read at the 1.0 stride, and the 1.1 fields read as NULL.
TEST(Loader, APluginOfAbi10LoadsUnchanged) {
    const LoadedPlugin plugin = LoadedPlugin::load(fixture("fixture_abi_1_0"));
    EXPECT_EQ(plugin.descriptor().abi_minor, 0);
    ASSERT_EQ(plugin.kernels().size(), 2u);
    EXPECT_STREQ(plugin.kernels()[1].name, "abi10_gemm_second");
    for (const auto& k : plugin.kernels()) {
        EXPECT_EQ(k.operation, KREG_OPERATION_GEMM);
        EXPECT_EQ(k.run_transpose, nullptr);
        EXPECT_EQ(k.run_block_transpose, nullptr);
        EXPECT_EQ(k.max_block, 0);
    }
    for (const auto& k : plugin.info().kernels) {
        EXPECT_EQ(k.operation, "gemm");
        EXPECT_EQ(k.unavailable_reason, "");
    }
}

// ABI 1.2 only appends describe_gemm_variant: a 1.1 plugin's kernels are read at the 1.1 stride and the entry
// reads as NULL, so the runner records no variant instead of calling the next kernel's bytes.
TEST(Loader, APluginOfAbi11LoadsWithoutAVariantEntry) {
    const LoadedPlugin plugin = LoadedPlugin::load(fixture("fixture_abi_1_1"));
    EXPECT_EQ(plugin.descriptor().abi_minor, 1);
    ASSERT_EQ(plugin.kernels().size(), 2u);
    EXPECT_STREQ(plugin.kernels()[1].name, "abi11_gemm_second");
    for (const auto& k : plugin.kernels()) {
        EXPECT_NE(k.run_gemm, nullptr);
        EXPECT_EQ(k.describe_gemm_variant, nullptr);
        EXPECT_EQ(k.block_multiple, 1);
    }
    for (const auto& k : LoadedPlugin::load(fixture("fixture_abi_1_0")).kernels())
        EXPECT_EQ(k.describe_gemm_variant, nullptr);
}

// ABI 1.3 only appends the generic entry: a 1.2 plugin's kernels are read at the 1.2 stride and run reads as
// NULL (not as the next kernel's first bytes), so the runner calls run_gemm.
TEST(Loader, APluginOfAbi12LoadsWithoutTheGenericEntry) {
    const LoadedPlugin plugin = LoadedPlugin::load(fixture("fixture_abi_1_2"));
    EXPECT_EQ(plugin.descriptor().abi_minor, 2);
    ASSERT_EQ(plugin.kernels().size(), 2u);
    EXPECT_STREQ(plugin.kernels()[1].name, "abi12_gemm_second");
    for (const auto& k : plugin.kernels()) {
        EXPECT_NE(k.run_gemm, nullptr);
        EXPECT_EQ(k.run, nullptr);
        EXPECT_EQ(k.describe_call_launch, nullptr);
    }
    for (const char* older : {"fixture_abi_1_0", "fixture_abi_1_1"})
        for (const auto& k : LoadedPlugin::load(fixture(older)).kernels()) EXPECT_EQ(k.run, nullptr) << older;
}

// A plugin on the generic entry alone (the SDK's IOperationKernel) loads: each kernel has run and none of the
// entries of its operation's own (1.0/1.1), and says its operation.
TEST(Loader, APluginOnTheGenericEntryAloneLoads) {
    const LoadedPlugin plugin = LoadedPlugin::load(fixture("fixture_generic_call"));
    EXPECT_EQ(plugin.descriptor().abi_minor, KREG_ABI_MINOR);
    ASSERT_EQ(plugin.kernels().size(), 3u);
    for (const auto& k : plugin.kernels()) {
        EXPECT_NE(k.run, nullptr) << k.name;
        EXPECT_EQ(k.run_gemm, nullptr) << k.name;
        EXPECT_EQ(k.run_transpose, nullptr) << k.name;
        EXPECT_EQ(k.run_block_transpose, nullptr) << k.name;
    }
    const PluginInfo info = plugin.info();
    EXPECT_EQ(info.kernels[0].operation, "gemm");
    EXPECT_EQ(info.kernels[1].operation, "transpose");
    EXPECT_EQ(info.kernels[2].operation, "block_transpose");
    for (const auto& k : info.kernels) EXPECT_EQ(k.unavailable_reason, "") << k.name;
}

// Neither the generic entry nor the operation's own: a broken descriptor, saying which entries it lacks.
TEST(Loader, AKernelWithoutAnyRunEntryIsRefused) {
    const auto e = load_error(fixture("fixture_no_run_entry"));
    EXPECT_EQ(e.kind(), PluginLoadError::Kind::bad_descriptor);
    EXPECT_NE(std::string(e.what()).find("('no_run_entry') is a gemm kernel without run or run_gemm"),
              std::string::npos)
        << e.what();
}

// A kernel of an operation, or of dtypes only, that the runner does not know is listed unavailable with
// the reason; the plugin's other kernels load (abi.h promises a newer minor version still loads).
TEST(Loader, UnknownOperationOrDtypeMakesOnlyThatKernelUnavailable) {
    const LoadedPlugin plugin = LoadedPlugin::load(fixture("fixture_unknown_operation"));
    const PluginInfo info = plugin.info();
    ASSERT_EQ(info.kernels.size(), 3u);
    EXPECT_EQ(info.kernels[0].name, "future_fft");
    EXPECT_EQ(info.kernels[0].operation, "unknown operation 99");
    EXPECT_NE(info.kernels[0].unavailable_reason.find("declares operation 99, which this runner does not know"),
              std::string::npos)
        << info.kernels[0].unavailable_reason;
    EXPECT_NE(info.kernels[1].unavailable_reason.find("only dtypes this runner does not know (dtypes mask 1048576)"),
              std::string::npos)
        << info.kernels[1].unavailable_reason;
    EXPECT_TRUE(info.kernels[1].dtypes.empty());
    EXPECT_EQ(info.kernels[2].unavailable_reason, "");

    // Through a worker session, as --list sees it, and running: the known kernel is measured, the others skipped.
    WorkerSession session;
    const auto described = session.handle({{"op", "describe"}, {"plugin", fixture("fixture_unknown_operation")}});
    const PluginInfo listed = described.at("plugin").get<PluginInfo>();
    EXPECT_EQ(listed.error, "");
    ASSERT_EQ(listed.kernels.size(), 3u);
    EXPECT_NE(listed.kernels[0].unavailable_reason, "");
    EXPECT_EQ(listed.kernels[2].unavailable_reason, "");
    Registry registry;
    registry.add(listed);
    EXPECT_NE(registry.format_table().find("unavailable: declares operation 99"), std::string::npos)
        << registry.format_table();
}

TEST(Registry, DuplicateKernelNameNamesBothFiles) {
    Registry registry;
    registry.add(LoadedPlugin::load(fixture("fixture_good")).info());
    PluginInfo first = LoadedPlugin::load(fixture("fixture_duplicate")).info();
    PluginInfo second = first;
    second.path = "/somewhere/else.so";
    registry.add(first);
    registry.add(second);
    ASSERT_EQ(registry.entries().size(), 2u);  // fixture_good and the first "cpu_naive"
    ASSERT_EQ(registry.problems().size(), 1u);
    EXPECT_EQ(registry.problems()[0], "/somewhere/else.so: duplicate kernel name 'cpu_naive' (first from " +
                                          first.path + "); this one is ignored");
}

TEST(Registry, PluginErrorsAreListedNotFatal) {
    Registry registry;
    PluginInfo broken;
    broken.path = "/x/broken.so";
    broken.error = "/x/broken.so: not a shared library (no ELF header)";
    registry.add(broken);
    registry.add(LoadedPlugin::load(fixture("fixture_good")).info());
    EXPECT_EQ(registry.entries().size(), 1u);
    ASSERT_EQ(registry.problems().size(), 1u);
    EXPECT_NE(registry.format_table().find("not a shared library"), std::string::npos);
    EXPECT_EQ(registry.to_json()["kernels"].size(), 1u);
}

Job small_job(const std::string& plugin, const std::string& kernel) {
    Job job;
    job.kernel = kernel;
    job.plugin_path = plugin;
    job.shape = {17, 9, 5};
    job.settings.warmup = 0;
    job.settings.repeats = 2;
    return job;
}

TEST(WorkerSession, CreationFailureBecomesAFailedRowWithThePluginsMessage) {
    WorkerSession session;
    const auto reply =
        session.handle({{"op", "run"}, {"job", small_job(fixture("fixture_create_throws"), "fixture_create_throws")}});
    const Record r = reply.at("record").get<Record>();
    EXPECT_EQ(r.status, RowStatus::failed);
    EXPECT_EQ(r.reason, "creation failed: fixture: constructor refuses to run");
}

TEST(WorkerSession, ExceptionInRunBecomesAFailedRow) {
    WorkerSession session;
    const auto reply =
        session.handle({{"op", "run"}, {"job", small_job(fixture("fixture_throw_in_run"), "fixture_throw_in_run")}});
    const Record r = reply.at("record").get<Record>();
    EXPECT_EQ(r.status, RowStatus::failed);
    EXPECT_NE(r.reason.find("fixture: run_gemm throws"), std::string::npos) << r.reason;
}

TEST(WorkerSession, WrongResultIsCaught) {
    WorkerSession session;
    for (const char* name : {"fixture_wrong_result", "fixture_skips_last_row"}) {
        const auto reply = session.handle({{"op", "run"}, {"job", small_job(fixture(name), name)}});
        const Record r = reply.at("record").get<Record>();
        EXPECT_EQ(r.status, RowStatus::wrong_result) << name << ": " << r.reason;
    }
}

TEST(WorkerSession, GoodKernelIsOkAndMalformedRequestsAreErrors) {
    WorkerSession session;
    const auto reply = session.handle({{"op", "run"}, {"job", small_job(fixture("fixture_good"), "fixture_good")}});
    const Record r = reply.at("record").get<Record>();
    EXPECT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_EQ(r.samples_ms.size(), 2u);
    EXPECT_EQ(session.handle({{"op", "dance"}})["op"], "error");
    EXPECT_EQ(session.handle({{"nothing", 1}})["op"], "error");
    EXPECT_EQ(session.handle({{"op", "run"}, {"job", {{"id", "x"}}}})["op"], "error");
}

TEST(WorkerSession, Abi10AndKnownKernelsOfANewerPluginRun) {
    WorkerSession session;
    for (const auto& [plugin, kernel] : {std::pair<std::string, std::string>{"fixture_abi_1_0", "abi10_gemm_second"},
                                         {"fixture_abi_1_1", "abi11_gemm"},
                                         {"fixture_unknown_operation", "present_gemm"}}) {
        const auto reply = session.handle({{"op", "run"}, {"job", small_job(fixture(plugin), kernel)}});
        const Record r = reply.at("record").get<Record>();
        EXPECT_EQ(r.status, RowStatus::ok) << kernel << ": " << r.reason;
        EXPECT_FALSE(r.extra.variant) << kernel << " names no variant";
    }
    {
        const auto r12 = session.handle({{"op", "run"}, {"job", small_job(fixture("fixture_abi_1_2"), "abi12_gemm")}});
        EXPECT_EQ(r12.at("record").get<Record>().status, RowStatus::ok) << r12.dump();
    }
    const auto reply =
        session.handle({{"op", "run"}, {"job", small_job(fixture("fixture_unknown_operation"), "future_fft")}});
    const Record r = reply.at("record").get<Record>();
    EXPECT_EQ(r.status, RowStatus::skipped);
    EXPECT_NE(r.reason.find("declares operation 99"), std::string::npos) << r.reason;
}

// The generic entry runs every operation: each kernel's row is checked (bit for bit for the transposes) and ok.
TEST(WorkerSession, KernelsOnTheGenericEntryRunAndPass) {
    WorkerSession session;
    const std::string plugin = fixture("fixture_generic_call");
    Job gemm = small_job(plugin, "generic_gemm");
    Job transpose = small_job(plugin, "generic_transpose");
    transpose.operation = Operation::transpose;
    transpose.shape = {17, 9, 0, 0};
    Job block = small_job(plugin, "generic_block_transpose");
    block.operation = Operation::block_transpose;
    block.shape = {12, 8, 0, 4};
    for (const Job& job : {gemm, transpose, block}) {
        const auto reply = session.handle({{"op", "run"}, {"job", job}});
        const Record r = reply.at("record").get<Record>();
        EXPECT_EQ(r.status, RowStatus::ok) << job.kernel << ": " << r.reason;
        EXPECT_TRUE(rate_of(r).has_value()) << job.kernel;
    }
}

TEST(WorkerSession, UnknownKernelInAPluginFails) {
    WorkerSession session;
    const auto reply = session.handle({{"op", "run"}, {"job", small_job(fixture("fixture_good"), "nope")}});
    const Record r = reply.at("record").get<Record>();
    EXPECT_EQ(r.status, RowStatus::failed);
    EXPECT_NE(r.reason.find("has no kernel 'nope'"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace kreg
