// --devices taken out of a grade command line (grade_shards.hpp), on every system.
#include "run/grade_shards.hpp"

namespace kreg {

std::vector<std::string> without_devices_option(const std::vector<std::string>& args, std::string& value) {
    std::vector<std::string> kept;
    value.clear();
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--devices" && i + 1 < args.size()) {
            value = args[++i];
            continue;
        }
        if (args[i].rfind("--devices=", 0) == 0) {
            value = args[i].substr(10);
            continue;
        }
        kept.push_back(args[i]);
    }
    return kept;
}

}  // namespace kreg
