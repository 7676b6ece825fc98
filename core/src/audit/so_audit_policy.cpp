// The grading policy: what a student's GEMM plugin may link and call. The line it draws: a kernel may
// allocate, copy, use threads, launch CUDA kernels on the runner's stream and report errors; it may not
// borrow someone else's GEMM, time itself, change device-wide state that later measurements depend on,
// leave the process (children, programs, network, other processes) or reach code the audit cannot see.
//
// Deliberately allowed (a legitimate SIMT or CPU kernel needs them): malloc/new/free, memcpy/memset,
// pthread_create/std::thread, printf, the C++ runtime; and from the CUDA runtime cudaMalloc/cudaFree,
// cudaMemcpy*/cudaMemset* (sync or async), cudaLaunchKernel and the __cudaRegister*/__cuda*CallConfiguration
// calls nvcc emits for <<<>>>, cudaFuncSetAttribute / cudaFuncGetAttributes (large dynamic shared
// memory), cudaGetLastError / cudaPeekAtLastError / cudaGetErrorString, cudaGetDevice /
// cudaGetDeviceProperties / cudaDeviceGetAttribute, cudaStreamSynchronize and cudaDeviceSynchronize
// (the ABI asks a kernel not to synchronise, but doing so only costs the student time, it cannot flatter
// a result, and student code checks errors that way).
#include "audit/so_audit.hpp"

namespace kreg {

const std::vector<std::string>& static_libstdcxx_imports() {
    // Seen in plugins the H200 image's GCC 13.3 links (libstdc++ static): syscall (futex waits), getentropy
    // (std::random_device), open and ioctl (random_device's /dev/urandom fallback).
    static const std::vector<std::string> names = {"syscall", "getentropy", "open", "ioctl"};
    return names;
}

namespace {

// Symbols that borrow a GEMM, time the kernel or change what the runner measures next.
std::vector<std::string> denied_borrowing_timing_and_device_state() {
    return {
        // Someone else's GEMM. The library rule already refuses libcublas.so as DT_NEEDED, but a plugin
        // can import the names without naming the library: the runner itself links cuBLAS for its
        // reference, so an unqualified cublasSgemm_v2 would bind to the runner's copy. cublas* also
        // covers cublasLt* and cublasXt*. (CUTLASS is header-only: nothing to import, so no symbol rule
        // can see it; that is for review or a sandbox.)
        "cublas*",
        "cudnn*",
        "cutensor*",
        // Timing is the runner's job. A kernel has no use for events: the ABI says launch on the given
        // stream only, so there is nothing to order between streams either.
        "cudaEvent*",
        // CUPTI is the runner's kernel clock (cuda/cupti_timer.hpp): turning its records off, flushing them or
        // subscribing to its callbacks is tampering with the timer. The library rule refuses libcupti as
        // DT_NEEDED; this catches the names imported without it.
        "cupti*",
        // Device-wide or stream state that outlives the call and changes what the runner measures next:
        // stack/heap/persisting-L2 limits, cache and shared-memory preferences, an L2 access-policy window
        // on the runner's stream, another device (spreading one GEMM over several GPUs), and a reset that
        // destroys the runner's context and buffers.
        "cudaDeviceSetLimit",
        "cudaDeviceSetCacheConfig",
        "cudaDeviceSetSharedMemConfig",
        "cudaStreamSetAttribute",
        "cudaSetDevice",
        "cudaSetDeviceFlags",
        "cudaDeviceReset",
        // The driver API (cuCtx*, cuEvent*, cuLaunchKernel, cuGetProcAddress, ...) and the runtime's doors
        // into it hand out arbitrary entry points the audit cannot see; the runtime API covers every
        // legitimate need. The bracket keeps cublas*/cudnn*/cuda* (lower case after "cu") out of this rule.
        "cu[A-Z]*",
        "cudaGetDriverEntryPoint*",
        "cudaGetExportTable",
    };
}

// Symbols that reach code the audit cannot see or leave the process: loading, children, the network, other
// processes, raw system calls and executable memory.
std::vector<std::string> denied_escapes() {
    return {
        // Loading code at run time, or looking names up by string, bypasses this audit: dlsym with
        // RTLD_DEFAULT finds cuBLAS when the runner has it loaded. dl_iterate_phdr/dlinfo walk the loaded
        // libraries to the same end; _dl_* and __libc_dl* are glibc's private spellings of the same calls.
        "dlopen",
        "dlmopen",
        "dlsym",
        "dlvsym",
        "dlinfo",
        "dl_iterate_phdr",
        "_dl_*",
        "__libc_dl*",
        // New processes and programs: a child escapes the worker's limits and timeouts, and a program
        // can be anything (cuBLAS-backed python, a network client). Includes glibc's aliases.
        "fork",
        "_Fork",
        "__fork",
        "__libc_fork",
        "forkpty",
        "vfork",
        "__vfork",
        "clone",
        "clone3",
        "__clone*",
        "exec*",
        "fexecve",
        "posix_spawn*",
        "pidfd_*",
        "system",
        "__libc_system",
        "popen",
        // The network: a GEMM has nothing to send or fetch (fetching a precomputed answer is the cheat).
        "socket",
        "connect",
        "bind",
        "listen",
        "accept",
        "accept4",
        "sendto",
        "sendmsg",
        "sendmmsg",
        "getaddrinfo",
        "gethostbyname*",
        // Other processes: reading or writing the parent's memory, or signalling the grader.
        "ptrace",
        "process_vm_*",
        "kill",
        "killpg",
        "tgkill",
        // Raw system calls bypass every symbol rule, so syscall() itself is refused. mmap/mprotect are
        // refused because executable memory lets a plugin run code (and syscalls) this audit never saw;
        // malloc and new do not need them in the plugin (libc calls mmap internally, not via the plugin).
        "syscall",
        "mmap",
        "mmap64",
        "__mmap",
        "mprotect",
        "__mprotect",
        "pkey_mprotect",
        "memfd_create",
    };
}

}  // namespace

AuditPolicy default_grading_policy() {
    AuditPolicy policy;
    // System runtime libraries plus the CUDA runtime. Not cuBLAS, cuBLASLt, cuDNN, cuTENSOR (a borrowed
    // GEMM), not libcuda (the driver API: see cu[A-Z]* below), not OpenMP's libgomp (ask for it if a
    // CPU assignment wants it; it is harmless but not in the assignment's toolset).
    policy.allowed_libraries = {"libc.so.*",      "libm.so.*",       "libstdc++.so.*",
                                "libgcc_s.so.*",  "libpthread.so.*", "ld-linux-x86-64.so.*",
                                "libcudart.so.*", "libdl.so.*",      "librt.so.*"};

    policy.denied_symbols = denied_borrowing_timing_and_device_state();
    for (std::string& name : denied_escapes()) policy.denied_symbols.push_back(std::move(name));
    return policy;
}

}  // namespace kreg
