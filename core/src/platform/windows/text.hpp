// UTF-8 <-> UTF-16 and the system's error text, for the Windows implementation of the platform layer.
#pragma once

#include <windows.h>

#include <string>
#include <string_view>

namespace kreg::platform::windows {

std::wstring widen(std::string_view utf8);
std::string narrow(std::wstring_view utf16);
// FormatMessage's text for error (GetLastError()), without its trailing line break, and the number.
std::string error_text(DWORD error);

}  // namespace kreg::platform::windows
