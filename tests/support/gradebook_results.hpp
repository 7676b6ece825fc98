// A gradebook's results by student, for the tests that grade a class, change something and grade it again.
#pragma once

#include "grade/gradebook.hpp"

#include <filesystem>
#include <map>
#include <string>

namespace kreg::test {

inline std::map<std::string, StudentResult> results_by_student(const std::filesystem::path& out) {
    std::map<std::string, StudentResult> by_student;
    for (const auto& r : Gradebook(out).all()) by_student[r.student] = r;
    return by_student;
}

}  // namespace kreg::test
