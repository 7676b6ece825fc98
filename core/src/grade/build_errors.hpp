// The first compiler error of a failed build, read from its log, for the console and the student's feedback:
// the build's own message ("cmake --build exited with code 2") says that it failed, this says why.
#pragma once

#include <string>
#include <vector>

namespace kreg {

// The first diagnostic of log that is an error: the line of the first "error:" / "fatal error:" (GCC, Clang,
// nvcc, the linker's "undefined reference"), or of a "CMake Error", and the lines of context right under it
// (the source line and its caret, CMake's indented explanation), at most max_lines in all. The build's
// scratch folder is cut from paths ("/tmp/kreg-scratch-XXXX/src/my_gemm.cpp:74:1" -> "my_gemm.cpp:74:1").
// Empty when the log holds no such line (a timeout, a memory cap).
std::vector<std::string> first_compiler_error(const std::string& log, size_t max_lines = 4);

}  // namespace kreg
