// Step 9 — warp tiling, tuned for the H200. The kernel and its launch policy live in warptiled.cuh (shared with
// the kernels that reuse its tiles); this file exports them as the plugin cuda_09_warptiled.
#include "warptiled.cuh"

KREG_PLUGIN("cuda_09_warptiled", "1.0.0", kreg_warptiled::Warptiled)
