// One call of a kernel through the entry its plugin has, whatever its ABI minor version: ABI 1.3's generic
// run when the kernel sets it, else its operation's own entry of 1.0 (run_gemm) or 1.1 (the two transposes'),
// with that entry's argument struct made from the call. This is the one place that
// knows each version's entries: the loader asks it whether a kernel can be called, ops/ (for the pipeline
// and the grader) and the profile driver call through it, so a 1.0 or 1.1 binary runs unchanged.
#pragma once

#include <kreg/abi.h>

#include <cstddef>
#include <string>

namespace kreg {

// The kernel's run entry for the call; KREG_STATUS_INTERNAL_ERROR with a message when it has none.
kreg_status run_kernel_call(const kreg_kernel_info& info, void* instance, const kreg_call& call, char* error,
                            size_t error_size);
// The kernel's launch description for the call; KREG_STATUS_UNSUPPORTED when it gives none.
kreg_status describe_kernel_call_launch(const kreg_kernel_info& info, void* instance, const kreg_call& call,
                                        kreg_launch_info& launch, char* error, size_t error_size);
// "" when the kernel has an entry for its operation; else what it lacks, as the end of a sentence
// ("is a transpose kernel without run or run_transpose (ABI 1.1)"). A kernel of an operation this runner does
// not know answers "": the loader lists it as unavailable instead.
std::string missing_run_entry(const kreg_kernel_info& info);

}  // namespace kreg
