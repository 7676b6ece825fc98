// Every sweep report a test program leaves in its scratch folders is checked against
// configs/schema/report.schema.json when the program ends: a test folder registered here (the e2e
// tests' fresh_dir does) is walked, and each .json in it that is a report (an object with meta,
// records and summary) must validate. A violation fails the test program, naming the file and the path.
#pragma once

#include "json_schema.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace kreg::test {

class ReportSchemaCheck : public ::testing::Environment {
public:
    static ReportSchemaCheck& instance() {
        // Owned by gtest once added; added when the program starts, so its TearDown runs at the end.
        static ReportSchemaCheck* check = [] {
            auto* c = new ReportSchemaCheck;
            ::testing::AddGlobalTestEnvironment(c);
            return c;
        }();
        return *check;
    }
    void watch(const std::filesystem::path& dir) {
        std::lock_guard<std::mutex> lock(mutex_);
        dirs_.push_back(dir);
    }
    void TearDown() override {
        const JsonSchema schema = JsonSchema::load(std::string(KREG_SOURCE_DIR) + "/configs/schema/report.schema.json");
        for (const auto& dir : dirs_) {
            std::error_code ec;
            for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
                 !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
                if (!it->is_regular_file() || it->path().extension() != ".json") continue;
                std::ifstream in(it->path());
                const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
                if (!doc.is_object() || !doc.contains("meta") || !doc.contains("records") || !doc.contains("summary"))
                    continue;
                std::string why;
                for (const std::string& e : schema.validate(doc)) why += "\n  " + e;
                if (!why.empty())
                    ADD_FAILURE() << it->path() << " does not match configs/schema/report.schema.json:" << why;
            }
        }
    }

private:
    std::mutex mutex_;
    std::vector<std::filesystem::path> dirs_;
};

// Registers the checker at program start in every test program that includes this header.
inline const bool kReportSchemaCheckRegistered = (ReportSchemaCheck::instance(), true);

}  // namespace kreg::test
