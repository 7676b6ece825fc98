// Finding the submissions of a run (submission.hpp), on every system; building one is submission.cpp's.
#include "grade/submission.hpp"

#include "common/library_format.hpp"
#include "grade/gradebook.hpp"

#include <algorithm>
#include <stdexcept>

namespace kreg {
namespace fs = std::filesystem;

std::vector<Submission> find_submissions(const std::vector<fs::path>& files, const std::optional<fs::path>& directory,
                                         std::vector<std::string>& ignored) {
    std::vector<Submission> out;
    for (const auto& f : files) out.push_back({student_id_from_path(f), f, fs::is_directory(f)});
    if (directory) {
        if (!fs::is_directory(*directory))
            throw std::runtime_error(directory->string() + ": not a folder of submissions");
        for (const auto& entry : fs::directory_iterator(*directory)) {
            const fs::path p = entry.path();
            if (entry.is_directory() && fs::exists(p / "CMakeLists.txt"))
                out.push_back({student_id_from_path(p), p, true});
            // Another system's library (a .dll or .dylib on Linux, a .so on Windows) is the student's work built
            // elsewhere: graded (the audit refuses it with what it is and what to build), so the student has a
            // row saying why, not no row at all.
            else if (entry.is_regular_file() &&
                     (p.extension() == native_plugin_suffix() || has_foreign_library_suffix(p)))
                out.push_back({student_id_from_path(p), p, false});
            else
                ignored.push_back(p.string() + ": neither a " + std::string(native_plugin_suffix()) +
                                  " nor a folder with a CMakeLists.txt");
        }
    }
    std::sort(out.begin(), out.end(), [](const Submission& a, const Submission& b) { return a.student < b.student; });
    for (size_t i = 1; i < out.size(); ++i)
        if (out[i].student == out[i - 1].student)
            throw std::runtime_error("two submissions for student '" + out[i].student +
                                     "': " + out[i - 1].path.string() + " and " + out[i].path.string());
    return out;
}

}  // namespace kreg
