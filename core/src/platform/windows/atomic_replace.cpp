#include "platform/atomic_replace.hpp"

#include "platform/windows/text.hpp"

#include <atomic>

namespace kreg::platform {
namespace {

std::string failed(const char* step, DWORD error) { return std::string(step) + ": " + windows::error_text(error); }

// A name no other writer uses, next to the target (MoveFileEx replaces atomically only within a volume),
// unique by process id and a counter; CREATE_NEW catches anything left over from a dead process.
HANDLE create_temporary(const std::filesystem::path& path, std::filesystem::path& temp) {
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
        temp = path.parent_path() / (L"." + path.filename().wstring() + L".tmp-" +
                                     std::to_wstring(GetCurrentProcessId()) + L"-" + std::to_wstring(counter++));
        const HANDLE file = CreateFileW(temp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                                        FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_TEMPORARY, nullptr);
        if (file != INVALID_HANDLE_VALUE || GetLastError() != ERROR_FILE_EXISTS) return file;
    }
    SetLastError(ERROR_FILE_EXISTS);
    return INVALID_HANDLE_VALUE;
}

bool write_all(HANDLE file, std::string_view content) {
    while (!content.empty()) {
        const DWORD chunk = DWORD(std::min<size_t>(content.size(), 1u << 30));
        DWORD written = 0;
        if (!WriteFile(file, content.data(), chunk, &written, nullptr)) return false;
        if (written == 0) {
            SetLastError(ERROR_WRITE_FAULT);
            return false;
        }
        content.remove_prefix(written);
    }
    return true;
}

}  // namespace

std::string replace_file(const std::filesystem::path& path, std::string_view content) {
    std::filesystem::path temp;
    const HANDLE file = create_temporary(path, temp);
    if (file == INVALID_HANDLE_VALUE) return failed("cannot create a temporary file next to it", GetLastError());

    const char* failed_step = nullptr;
    DWORD error = 0;
    if (!write_all(file, content)) {
        failed_step = "write failed";
        error = GetLastError();
    } else if (!FlushFileBuffers(file)) {
        failed_step = "FlushFileBuffers failed";
        error = GetLastError();
    }
    if (!CloseHandle(file) && !failed_step) {
        failed_step = "close failed";
        error = GetLastError();
    }
    if (failed_step) {
        DeleteFileW(temp.c_str());
        return failed(failed_step, error);
    }
    // The hidden attribute was the temporary name's; the report itself is an ordinary file.
    SetFileAttributesW(temp.c_str(), FILE_ATTRIBUTE_NORMAL);
    if (!MoveFileExW(temp.c_str(), path.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
        error = GetLastError();
        DeleteFileW(temp.c_str());
        return failed("cannot rename the temporary file over it", error);
    }
    return "";
}

}  // namespace kreg::platform
