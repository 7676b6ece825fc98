#include "common/argv_words.hpp"

#include <algorithm>

namespace kreg {

std::vector<std::string> option_values(const std::vector<std::string>& args, const std::string& name) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == name && i + 1 < args.size())
            out.push_back(args[++i]);
        else if (args[i].rfind(name + "=", 0) == 0)
            out.push_back(args[i].substr(name.size() + 1));
    }
    return out;
}

bool has_option(const std::vector<std::string>& args, const std::string& name) {
    return std::any_of(args.begin(), args.end(),
                       [&](const std::string& a) { return a == name || a.rfind(name + "=", 0) == 0; });
}

std::vector<std::string> without_option(const std::vector<std::string>& args, const std::string& name,
                                        bool takes_value) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == name) {
            if (takes_value) ++i;
            continue;
        }
        if (args[i].rfind(name + "=", 0) == 0) continue;
        out.push_back(args[i]);
    }
    return out;
}

}  // namespace kreg
