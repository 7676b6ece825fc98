// The first bytes of libraries built for other systems, as their linkers write them: what a student who builds
// on a Windows or macOS laptop would hand to kreg on Linux (tests of common/library_format and of grading).
#pragma once

#include <string>

namespace kreg::test {

// A 64-bit Windows DLL: the DOS header ("MZ", e_lfanew at 0x3c), the "PE\0\0" signature and a COFF header for
// x86-64 with the DLL characteristic, then zeros.
inline std::string windows_dll_bytes() {
    std::string bytes(0x40, '\0');
    bytes[0] = 'M';
    bytes[1] = 'Z';
    bytes[0x3c] = 0x40;
    bytes += std::string("PE\0\0", 4);
    bytes += std::string("\x64\x86\x03\x00", 4);  // Machine IMAGE_FILE_MACHINE_AMD64, three sections
    bytes += std::string(12, '\0');
    bytes += std::string("\xf0\x00\x22\x20", 4);  // optional header size, IMAGE_FILE_DLL | EXECUTABLE_IMAGE
    return bytes + std::string(256, '\0');
}

// A 64-bit Mach-O dylib's header (MH_MAGIC_64 little-endian, x86-64, MH_DYLIB), then zeros.
inline std::string macos_dylib_bytes() {
    std::string bytes("\xcf\xfa\xed\xfe\x07\x00\x00\x01\x03\x00\x00\x00\x06\x00\x00\x00", 16);
    return bytes + std::string(256, '\0');
}

}  // namespace kreg::test
