// cuda_small_tile (exported by small_tile.cu): step 9's warp-tile kernel at 64x64 and 32x64 block tiles, for shapes of
// one wave or less.
//
// The class: M x N so small that even step 9's 64x128 tiles leave SMs idle (256 x 256 is 8 blocks on 132 SMs;
// 517 x 517 is 45), or whose N or M is narrow enough that a 128-wide tile is mostly padding (N = 64 computes
// twice the work it keeps). Smaller tiles give more blocks and less padding at the price of a lower ratio of FMAs
// to shared loads (64x64 tiles with 8x8 per lane: 64 FMAs for 4 LDS.128, against step 9's 128 for 6) and of twice
// the global traffic per FLOP. The same split-K planner as cuda_splitk (splitk.cuh) chooses the tile and splits
// K when the tiles still do not fill the GPU, so a small deep problem (128 x 128 x 8192) fills it too.
//
// The efficiencies below are estimates from that load ratio (64x64: 16 FMAs per shared load against step 9's
// 21, times the smaller tile's extra L2 traffic; 32x64 one warp per block lower again), not measurements; the
// dispatch table measures the variants against each other on the H200.
#pragma once

#include "../cuda_splitk/splitk.cuh"

namespace kreg_small_tile {

using kreg_warptiled::Config;

//                        BM  BN  BK  WM  WN  TN stages min blocks/SM
using Tile64x64 = Config<64, 64, 16, 64, 32, 8, 3, 6>;  // 2 warps of 64x32, 8x8 per lane, 25,344 B, 167 registers
using Tile32x64 = Config<32, 64, 16, 32, 64, 8, 3, 8>;  // 1 warp of 32x64, 8x8 per lane, 19,200 B, 215 registers

struct SmallTileName {
    static constexpr const char* name = "cuda_small_tile";
    static constexpr const char* description =
        "step 9's warp tiles at 64x64 / 32x64 block tiles for shapes of a wave or less, K split over blocks by "
        "the split-K wave model, deterministic reduction";
};

//                                      efficiency %  resident blocks per SM
using Small64 = kreg_splitk::Tile<Tile64x64, 70, 6>;
using Small32 = kreg_splitk::Tile<Tile32x64, 55, 9>;

using SmallTileFp32 = kreg_splitk::SplitKGemm<SmallTileName, Small64, Small32>;

}  // namespace kreg_small_tile
