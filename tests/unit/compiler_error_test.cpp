// first_compiler_error: the first error of real build logs (gcc, clang, nvcc, the linker, cmake), with its
// context and excerpt, and nothing of the chatter or the follow-on errors.
#include "grade/compiler_error.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kreg {
namespace {

TEST(FirstCompilerError, GccWithContextAndExcerptStopsAtTheNextDiagnostic) {
    const std::string log =
        "-- Configuring done\n"
        "[1/2] Building CXX object CMakeFiles/my_gemm.dir/my_gemm.cpp.o\n"
        "FAILED: CMakeFiles/my_gemm.dir/my_gemm.cpp.o\n"
        "/usr/bin/c++ -Dmy_gemm_EXPORTS -O3 -fPIC -c my_gemm.cpp\n"
        "my_gemm.cpp: In member function 'void X::run()':\n"
        "my_gemm.cpp:4:3: error: 'foo' was not declared in this scope\n"
        "    4 |   foo(1);\n"
        "      |   ^~~\n"
        "my_gemm.cpp:5:11: error: invalid conversion from 'const char*' to 'int'\n"
        "    5 |   int y = \"a\";\n"
        "ninja: build stopped: subcommand failed.\n";
    EXPECT_EQ(first_compiler_error(log),
              "my_gemm.cpp: In member function 'void X::run()':\n"
              "my_gemm.cpp:4:3: error: 'foo' was not declared in this scope\n"
              "    4 |   foo(1);\n"
              "      |   ^~~");
}

TEST(FirstCompilerError, NvccClangLinkerAndCMakeErrorsAreRecognised) {
    EXPECT_EQ(first_compiler_error(
                  "k.cu(12): error: identifier \"foo\" is undefined\n      foo();\n      ^\n\n1 error detected\n"),
              "k.cu(12): error: identifier \"foo\" is undefined\n      foo();\n      ^");
    EXPECT_EQ(first_compiler_error("a.cpp:1:10: fatal error: 'missing.h' file not found\n#include \"missing.h\"\n"),
              "a.cpp:1:10: fatal error: 'missing.h' file not found");
    EXPECT_EQ(
        first_compiler_error("/usr/bin/ld: a.o: in function `main':\na.cpp:(.text+0x5): undefined reference to `f()'\n"
                             "collect2: error: ld returned 1 exit status\n"),
        "/usr/bin/ld: a.o: in function `main':\na.cpp:(.text+0x5): undefined reference to `f()'");
    EXPECT_EQ(first_compiler_error(
                  "-- The CXX compiler identification is GNU\nCMake Error at CMakeLists.txt:3 (find_package):\n"
                  "  Could not find a package configuration file provided by \"kreg\"\n\n-- Configuring incomplete\n"),
              "CMake Error at CMakeLists.txt:3 (find_package):\n  Could not find a package configuration file provided "
              "by \"kreg\"");
}

TEST(FirstCompilerError, NothingRecognisedIsEmptyAndLinesAreBoundedAndPrintable) {
    EXPECT_EQ(first_compiler_error(""), "");
    EXPECT_EQ(first_compiler_error("[1/2] Building\nninja: build stopped: subcommand failed.\n"), "");
    std::string log = "a.cpp:1:1: error: \x1b[31mred\x1b[0m " + std::string(1000, 'x') + "\n";
    for (int i = 0; i < 20; ++i) log += "    | excerpt\n";
    const std::string first = first_compiler_error(log, 3);
    EXPECT_EQ(first.find('\x1b'), std::string::npos) << "a terminal escape from the log reaches the console";
    EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 2) << first;
    EXPECT_LT(first.size(), 400u);
}

TEST(FirstCompilerError, ItsErrorLineAloneAndItsLinesForTheConsole) {
    const std::string lines =
        "a.cpp: In function 'void f()':\na.cpp:4:3: error: 'foo' was not declared\n    4 |   foo(1);";
    EXPECT_EQ(error_line_of(lines), "a.cpp:4:3: error: 'foo' was not declared");
    EXPECT_EQ(error_line_of("no error here"), "");
    EXPECT_EQ(error_excerpt_lines(lines),
              (std::vector<std::string>{"a.cpp: In function 'void f()':", "a.cpp:4:3: error: 'foo' was not declared",
                                        "    4 |   foo(1);"}));
    EXPECT_EQ(error_excerpt_lines("x\x1b[2Jy"), std::vector<std::string>{"x [2Jy"});
}

}  // namespace
}  // namespace kreg
