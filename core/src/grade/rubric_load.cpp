// load_rubric: reading a rubric file with the same guarantees as load_sweep_config (unreadable files,
// JSON syntax errors with line and column, keys given twice), through the same reader.
#include "config/json_node.hpp"
#include "grade/rubric.hpp"

namespace kreg {
namespace fs = std::filesystem;

Rubric load_rubric(const fs::path& path) {
    return parse_rubric(config_detail::read_json_document(path, "rubric"), path.string());
}

}  // namespace kreg
