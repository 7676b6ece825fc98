// The ABI's launch record (kreg_launch_info) filled from a plugin's launch plan, so that the report shows
// exactly what ran. Every CUDA plugin's plan has the same four members: kernel, grid, block, dynamic_smem.
#pragma once

#include <kreg/abi.h>

namespace kreg_cuda {

template <class Plan>
void fill_launch_info(const Plan& plan, kreg_launch_info& info) {
    info.device_function = reinterpret_cast<const void*>(plan.kernel);
    info.grid[0] = plan.grid.x;
    info.grid[1] = plan.grid.y;
    info.grid[2] = plan.grid.z;
    info.block[0] = plan.block.x;
    info.block[1] = plan.block.y;
    info.block[2] = plan.block.z;
    info.dynamic_shared_bytes = plan.dynamic_smem;
}

}  // namespace kreg_cuda
