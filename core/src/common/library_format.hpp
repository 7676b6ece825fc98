// What kind of library a file is, from its first bytes. kreg on Linux loads ELF shared objects; a Windows
// DLL or a macOS dylib handed to it (a student who builds on their laptop) gets a sentence that says what the
// file is and what to build instead, from the loader, plugin folders and grading alike.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kreg {

enum class LibraryFormat {
    elf,           // \x7fELF: what this runner loads
    windows_pe,    // MZ (and a PE header): a .dll or .exe
    macos_mach_o,  // a Mach-O image or a universal (fat) binary: a .dylib
    other,         // anything else, and files too short to tell
    unreadable,    // could not be opened or read
};

LibraryFormat library_format(const std::filesystem::path& file);
// What this runner loads: elf on Linux, windows_pe on Windows (platform/library_naming.hpp), and the file
// suffix its plugins have (".so", ".dll").
LibraryFormat native_library_format();
std::string_view native_plugin_suffix();
LibraryFormat library_format_of(std::string_view first_bytes);  // the file's first bytes (4 are enough)

// For a library built for another system: what it is and what to do (no trailing full stop); empty for
// the native format, other and unreadable, which the caller describes itself.
std::string foreign_library_advice(LibraryFormat format);

// A file name another system's plugin build writes (on Linux .dll, .dylib; on Windows .so, .dylib): worth a word where
// a folder of plugins or submissions is scanned for .so files, instead of passing over it in silence.
bool has_foreign_library_suffix(const std::filesystem::path& file);

}  // namespace kreg
