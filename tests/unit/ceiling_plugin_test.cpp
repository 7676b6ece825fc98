// The GPU's ceilings are measured with the cuBLAS plugin of the runner's own plugin folder and no other:
// a plugin named like it on KREG_PLUGIN_PATH or in a --plugin-dir folder (a user's, or an attacker's
// planted fake that would make every row look close to the hardware's limit) is never the source.
// The runs on a GPU are in tests/e2e/gpu_ceilings_test.cpp.
#include "plugin/discovery.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace kreg {
namespace {

namespace fs = std::filesystem;

const test::ScratchRoot& scratch() {
    static const test::ScratchRoot root("kreg_ceiling_plugin_test");
    return root;
}

void touch(const fs::path& file) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "not loaded by this test";
}

// An install tree <root>/bin/runner, <root>/lib/kreg/plugins, and a planted cublas_reference.so in a
// folder KREG_PLUGIN_PATH names (as an attacker would place it).
struct Tree {
    fs::path runner, own_dir, planted;
    explicit Tree(const std::string& name) {
        const fs::path root = scratch().fresh_dir(name);
        runner = root / "bin" / "runner";
        touch(runner);
        own_dir = root / "lib" / "kreg" / "plugins";
        fs::create_directories(own_dir);
        planted = root / "planted" / kCeilingPluginFile;
        touch(planted);
        ::setenv("KREG_PLUGIN_PATH", planted.parent_path().c_str(), 1);
    }
    ~Tree() { ::unsetenv("KREG_PLUGIN_PATH"); }
};

TEST(CeilingPlugin, ComesFromTheRunnersOwnPluginFolder) {
    const Tree tree("own");
    touch(tree.own_dir / kCeilingPluginFile);
    const CeilingPluginSource source = ceiling_plugin_source(tree.runner);
    EXPECT_EQ(source.path, tree.own_dir / kCeilingPluginFile);
    EXPECT_TRUE(source.unavailable.empty()) << source.unavailable;
}

TEST(CeilingPlugin, APlantedPluginIsNotUsedWhenTheOwnFolderHasNone) {
    const Tree tree("planted-only");
    const CeilingPluginSource source = ceiling_plugin_source(tree.runner);
    EXPECT_TRUE(source.path.empty()) << "took " << source.path << " as the ceiling source";
    EXPECT_NE(source.path, tree.planted);
    // The reason names the file that was looked for, in the runner's own folder, and what it means.
    EXPECT_NE(source.unavailable.find((tree.own_dir / kCeilingPluginFile).string()), std::string::npos)
        << source.unavailable;
    EXPECT_NE(source.unavailable.find("GEMM ceilings not measured"), std::string::npos) << source.unavailable;
    EXPECT_EQ(source.unavailable.find(tree.planted.parent_path().string()), std::string::npos) << source.unavailable;
}

TEST(CeilingPlugin, APlantedPluginDoesNotReplaceTheOwnOne) {
    const Tree tree("planted-and-own");
    touch(tree.own_dir / kCeilingPluginFile);
    // Discovery for the sweep finds both (the planted folder is on KREG_PLUGIN_PATH) ...
    PluginSearch search;
    search.directories = {tree.planted.parent_path(), tree.own_dir};  // the attacker's folder even first
    std::vector<std::string> problems;
    EXPECT_EQ(find_plugin_files(search, problems).size(), 2u);
    // ... the ceilings are the own folder's all the same.
    EXPECT_EQ(ceiling_plugin_source(tree.runner).path, tree.own_dir / kCeilingPluginFile);
}

TEST(CeilingPlugin, AFolderNamedLikeThePluginIsNotAPlugin) {
    const Tree tree("folder");
    fs::create_directories(tree.own_dir / kCeilingPluginFile);
    EXPECT_TRUE(ceiling_plugin_source(tree.runner).path.empty());
}

}  // namespace
}  // namespace kreg
