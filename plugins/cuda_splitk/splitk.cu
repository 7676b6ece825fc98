// cuda_splitk: step 9's 128x256 and 64x128 tiles with K split over blocks when the tiles alone do not fill the
// GPU (splitk.cuh has the kernel, the reduction and the policy).
#include "splitk.cuh"

KREG_PLUGIN("cuda_splitk", "1.0.0", kreg_splitk::SplitKFp32)
