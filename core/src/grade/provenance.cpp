#include "grade/provenance.hpp"

#include "common/sha256.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace kreg {
namespace fs = std::filesystem;

std::string submission_sha256(const fs::path& submission) {
    if (!fs::is_directory(submission)) return sha256_file_hex(submission);
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(submission))
        if (entry.is_regular_file() && !entry.is_symlink()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::string all;
    for (const fs::path& file : files) {
        std::ifstream in(file, std::ios::binary);
        if (!in) throw std::runtime_error("cannot read " + file.string());
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        all += fs::relative(file, submission).generic_string();
        all += '\0';
        all += std::to_string(bytes.size());
        all += '\0';
        all += bytes;
    }
    return sha256_hex(all);
}

std::string rubric_sha256(const Rubric& rubric) {
    nlohmann::json content = rubric.to_json();
    content.erase("sources");
    content.erase("leaderboard");  // who is on the class page's board changes no grade
    return sha256_hex(content.dump());
}

nlohmann::json provenance(const std::string& submission_hash, const std::string& rubric_hash, uint64_t secret) {
    nlohmann::json p = {
        {"submission_sha256", submission_hash}, {"rubric_sha256", rubric_hash}, {"kreg_version", KREG_VERSION}};
    p["secret_sha256"] =
        secret ? nlohmann::json(sha256_hex("kreg secret seed " + std::to_string(secret))) : nlohmann::json(nullptr);
    return p;
}

std::string what_changed(const nlohmann::json& stored, const nlohmann::json& current) {
    if (!stored.is_object() || !stored.contains("submission_sha256")) return "no record of what it was computed from";
    std::string changed;
    const std::pair<const char*, const char*> fields[] = {{"submission_sha256", "submission changed"},
                                                          {"rubric_sha256", "rubric changed"},
                                                          {"secret_sha256", "secret seed changed"},
                                                          {"kreg_version", "kreg version changed"}};
    for (const auto& [key, words] : fields)
        if (stored.value(key, nlohmann::json()) != current.value(key, nlohmann::json()))
            changed += (changed.empty() ? "" : ", ") + std::string(words);
    return changed;
}

}  // namespace kreg
