// cuda_small_tile: step 9's tiles at 64x64 and 32x64 for shapes of a wave or less (small_tile.cuh says why).
#include "small_tile.cuh"

KREG_PLUGIN("cuda_small_tile", "1.0.0", kreg_small_tile::SmallTileFp32)
