#include "merge/shard.hpp"

#include <stdexcept>

namespace kreg {

uint64_t jobs_in_shard(uint64_t plan_size, int index, int count) {
    const uint64_t first = uint64_t(index - 1);
    return plan_size > first ? (plan_size - first + uint64_t(count) - 1) / uint64_t(count) : 0;
}

std::string shard_tag(int index, int count) {
    return "shard-" + std::to_string(index) + "-of-" + std::to_string(count);
}

std::string with_shard_tag(std::string path_template, const std::string& tag) {
    static const std::string placeholder = "{shard}";
    for (size_t at = path_template.find(placeholder); at != std::string::npos;
         at = path_template.find(placeholder, at + tag.size()))
        path_template.replace(at, placeholder.size(), tag);
    return path_template;
}

std::vector<std::string> argv_with_shard(const std::vector<std::string>& argv, int index, int count) {
    const std::string value = std::to_string(index) + "/" + std::to_string(count);
    std::vector<std::string> out;
    bool replaced = false;
    for (size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] == "--shard" && i + 1 < argv.size()) {
            out.push_back("--shard");
            out.push_back(value);
            ++i;
            replaced = true;
        } else if (argv[i].rfind("--shard=", 0) == 0) {
            out.push_back("--shard=" + value);
            replaced = true;
        } else {
            out.push_back(argv[i]);
        }
    }
    if (!replaced) {
        out.push_back("--shard");
        out.push_back(value);
    }
    return out;
}

namespace {
// One word for a POSIX shell, quoted only where it must be.
std::string quoted(const std::string& word) {
    const bool plain = !word.empty() && word.find_first_not_of(
                                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                            "_-./=:,+@%") == std::string::npos;
    if (plain) return word;
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}
}  // namespace

std::string shell_command(const std::string& cwd, const std::vector<std::string>& argv) {
    std::string out = cwd.empty() ? "" : "cd " + quoted(cwd) + " && ";
    for (size_t i = 0; i < argv.size(); ++i) out += (i ? " " : "") + quoted(argv[i]);
    return out;
}

}  // namespace kreg
