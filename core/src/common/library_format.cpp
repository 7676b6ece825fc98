#include "common/library_format.hpp"

#include "platform/library_naming.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>

namespace kreg {
namespace {

uint32_t little_endian_u32(const unsigned char* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

LibraryFormat library_format_of(std::string_view first_bytes) {
    if (first_bytes.size() < 2) return LibraryFormat::other;
    if (first_bytes.substr(0, 4) == std::string_view("\x7f"
                                                     "ELF",
                                                     4))
        return LibraryFormat::elf;
    // Every Windows image (a PE .dll or .exe, or a bare DOS program) starts with the DOS header's "MZ".
    if (first_bytes.substr(0, 2) == "MZ") return LibraryFormat::windows_pe;
    if (first_bytes.size() < 4) return LibraryFormat::other;
    const uint32_t word = little_endian_u32(reinterpret_cast<const unsigned char*>(first_bytes.data()));
    // Mach-O thin images in either byte order, 32 and 64 bit (0xfeedface, 0xfeedfacf), and the universal
    // header (0xcafebabe, stored big-endian).
    for (const uint32_t m : {0xfeedfaceu, 0xfeedfacfu, 0xcefaedfeu, 0xcffaedfeu, 0xbebafecau})
        if (word == m) return LibraryFormat::macos_mach_o;
    return LibraryFormat::other;
}

LibraryFormat library_format(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return LibraryFormat::unreadable;
    char first[4] = {};
    in.read(first, 4);
    if (in.bad()) return LibraryFormat::unreadable;
    return library_format_of(std::string_view(first, std::size_t(in.gcount())));
}

std::string_view native_plugin_suffix() { return platform::plugin_suffix(); }

LibraryFormat native_library_format() {
    return platform::plugin_suffix() == ".dll" ? LibraryFormat::windows_pe : LibraryFormat::elf;
}

namespace {

// This runner on Windows (docs/WINDOWS.md): a Linux or macOS plugin is the foreign one.
std::string advice_on_windows(LibraryFormat format) {
    switch (format) {
        case LibraryFormat::elf:
            return "a Linux plugin (an ELF shared object, what a .so is), and this runner on Windows loads only "
                   "Windows libraries (.dll, PE): build the plugin on Windows as a .dll (the same CMakeLists.txt "
                   "with kreg_add_plugin writes one), or run the Linux runner in WSL2";
        case LibraryFormat::macos_mach_o:
            return "a macOS library (Mach-O, what a .dylib is), and this runner on Windows loads only Windows "
                   "libraries (.dll, PE): build the plugin on Windows as a .dll (the same CMakeLists.txt with "
                   "kreg_add_plugin writes one)";
        case LibraryFormat::windows_pe:
        case LibraryFormat::other:
        case LibraryFormat::unreadable:
            break;
    }
    return {};
}

}  // namespace

std::string foreign_library_advice(LibraryFormat format) {
    if (native_library_format() == LibraryFormat::windows_pe) return advice_on_windows(format);
    switch (format) {
        case LibraryFormat::windows_pe:
            return "a Windows library (PE format, what a .dll is), and this runner on Linux loads only Linux "
                   "shared objects (.so, ELF): build the plugin on Linux, or in WSL2, as a .so (the same "
                   "CMakeLists.txt with kreg_add_plugin writes one)";
        case LibraryFormat::macos_mach_o:
            return "a macOS library (Mach-O, what a .dylib is), and this runner on Linux loads only Linux shared "
                   "objects (.so, ELF): build the plugin on Linux as a .so (the same CMakeLists.txt with "
                   "kreg_add_plugin writes one)";
        case LibraryFormat::elf:
        case LibraryFormat::other:
        case LibraryFormat::unreadable:
            break;
    }
    return {};
}

bool has_foreign_library_suffix(const std::filesystem::path& file) {
    std::string ext = file.extension().string();
    for (char& c : ext) c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (native_library_format() == LibraryFormat::windows_pe) return ext == ".so" || ext == ".dylib";
    return ext == ".dll" || ext == ".dylib";
}

}  // namespace kreg
