// cuda_splitk: step 9's 128x256 and 64x128 tiles with K split over blocks when the tiles alone do not fill the
// GPU (splitk.cuh has the kernel, the reduction and the policy).
#include "splitk.cuh"

namespace {

struct SplitKName {
    static constexpr const char* name = "cuda_splitk";
    static constexpr const char* description =
        "step 9's 128x256 / 64x128 warp tiles, K split over blocks by a wave model (up to 256 slices), "
        "deterministic fixed-order reduction of the slices";
};

//                                                    efficiency %  resident blocks per SM
using LargeTile = kreg_splitk::Tile<kreg_warptiled::LargeConfig, 100, 1>;
using SmallTile = kreg_splitk::Tile<kreg_warptiled::SmallConfig, 90, 3>;

using SplitKFp32 = kreg_splitk::SplitKGemm<SplitKName, LargeTile, SmallTile>;

}  // namespace

KREG_PLUGIN("cuda_splitk", "1.0.0", SplitKFp32)
