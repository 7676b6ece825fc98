// The corpus tests of the config formats (sweep configs, rubrics): every <dir>/X.json must fail to load
// with a ConfigError that names the file, the JSON pointer and a message given by <dir>/X.expect
// ({"json_path": ..., "message_contains": ...}), and every .expect file must have its .json.
#pragma once

#include "config/sweep_config.hpp"  // ConfigError

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace kreg::test {

// Returns how many .json files were checked, so the caller can insist the corpus is not empty.
inline int check_bad_corpus(const std::filesystem::path& dir,
                            const std::function<void(const std::filesystem::path&)>& load) {
    namespace fs = std::filesystem;
    int checked = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        const fs::path file = entry.path();
        if (file.extension() == ".expect") {
            fs::path json_file = file;
            EXPECT_TRUE(fs::exists(json_file.replace_extension(".json"))) << file << " has no .json file";
            continue;
        }
        if (file.extension() != ".json") continue;
        SCOPED_TRACE(file.filename().string());
        fs::path expect_file = file;
        expect_file.replace_extension(".expect");
        if (!fs::exists(expect_file)) {
            ADD_FAILURE() << "every corpus file needs its .expect file";
            continue;
        }
        std::ifstream in(expect_file);
        std::stringstream text;
        text << in.rdbuf();
        const nlohmann::json expect = nlohmann::json::parse(text.str());
        try {
            load(file);
            ADD_FAILURE() << "loaded without error";
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.file(), file.string());
            EXPECT_EQ(e.json_path(), expect.at("json_path").get<std::string>()) << e.what();
            EXPECT_NE(e.message().find(expect.at("message_contains").get<std::string>()), std::string::npos)
                << e.what();
            EXPECT_EQ(std::string(e.what()).rfind(file.string() + ": ", 0), 0u) << e.what();
        }
        ++checked;
    }
    return checked;
}

}  // namespace kreg::test
