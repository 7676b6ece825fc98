// Split-K on step 9's warp tiles, with a deterministic reduction and a wave model that picks the tile and the
// split count per shape. A header so that cuda_small_tile and the dispatch plugin compile the same code into their
// own .so; splitk.cu exports it as cuda_splitk.
//
// The problem it solves: a block of cuda_09_warptiled owns one tile of C and walks all of K, so the grid has
// ceil(M / BM) x ceil(N / BN) blocks whatever K is. At 517³ that is 45 blocks of 64x128 for 132 SMs (a third of the
// GPU idle), at 4097x1025x2049 it is 33 x 5 = 165 blocks of 128x256, two waves of which the second is a quarter full,
// and a deep K with a narrow N (4096 x 64 x 16384) gets 64 blocks each walking 16384 k. Splitting K into S slices
// multiplies the blocks by S: block (t, s) computes tile t over k in [s * kps, (s + 1) * kps) and writes its partial
// tile to slice s of a workspace; kreg_cuda::reduce_splits then adds the S slices in a fixed order and applies alpha
// and beta (split_reduce.cuh says why not atomics). S = 1 writes C directly, with no workspace and no second launch.
//
// The policy (SplitPlanner::choose): for every tile configuration offered and every S up to kMaxSplits, the time
// of the busiest SM, in waves of resident blocks, plus the workspace traffic and the reduction's launch:
//     busiest  = ceil(tiles * S / SMs) blocks, run in rounds of up to `resident` blocks at a time
//     compute  = sum over rounds of blocks * 2 * BM * BN * (kps + kBlockOverheadK)
//                                   / (per-SM rate * tile efficiency * utilisation(blocks in the round))
//     reduce   = S > 1 ? (2 * 4 * S * M * ld + 4 * M * N) / bandwidth + launch : 0
// where utilisation is the share of the SM's rate the round's warps reach (full from 8 warps on).
// and the smallest wins. The rates are a model, not a measurement: the large and 64x128 tiles' ratio is step 9's
// (0.9, measured at 4096³ and 8192³); the small tiles' efficiencies in small_tile.cu are estimates from their
// shared-load ratio. The dispatch table (runner tune) measures which variant wins per class; this policy only has
// to be right within a variant.
//
// The K-heavy class (K >= 3 x max(M, N), deep K with narrow N, K in the millions) is this policy, not a separate
// kernel: with few tiles, S grows until the blocks fill the SMs, and kps is never below kMinSplitK so the
// prologue of a slice stays small against its work.
//
// Edges: any M, N, K >= 1 and leading dimensions, as step 9 (a slice is a Fp32Gemm whose A and B start at its
// first k, which keeps B's 16-byte alignment since kps is a multiple of 16). K < 2 x kMinSplitK never splits.
#pragma once

#include "../09_warptiled/warptiled.cuh"
#include "../cuda_common/gemm_common.cuh"
#include "../cuda_common/split_reduce.cuh"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

namespace kreg_splitk {

using kreg_cuda::Fp32Gemm;
using kreg_cuda::SplitWorkspace;

// One tile configuration of step 9 offered to the planner, with its throughput per SM relative to step 9's large
// tile (percent) and how many of its blocks an SM holds at once (by registers and shared memory, from -Xptxas -v).
template <class Config_, int EfficiencyPercent, int Resident>
struct Tile {
    using Config = Config_;
    static constexpr double kEfficiency = EfficiencyPercent / 100.0;
    static constexpr int kResident = Resident;
    static_assert(Resident >= Config_::kMinBlocks, "an SM holds at least the blocks __launch_bounds__ asks for");
};

constexpr int kMaxSplits = 256;
constexpr int kMinSplitK = 64;             // k per slice at least: a slice's prologue is 2 tiles of 16
constexpr int kSplitKMultiple = 16;        // kps is a multiple of BK, so slices start tile-aligned
constexpr double kBlockOverheadK = 32;     // prologue, epilogue and launch of a block, as k of work
constexpr double kSmFlops = 0.37e12;       // step 9's large tile per H200 SM (48.8 TFLOP/s / 132)
constexpr double kBandwidth = 3.0e12;      // workspace bytes per second (about 70 % of the copy rate)
constexpr double kLaunchSeconds = 2.5e-6;  // the reduction's launch and tail
constexpr double kWarpsToSaturate = 8;     // resident warps an SM needs to reach a tile's full rate
constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;

// The partial results of slice blockIdx.y of tile blockIdx.x: step 9's tile over k in [k0, k0 + kps), into slice
// blockIdx.y of the workspace, or into C with alpha and beta when there is one slice.
template <class C>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    splitk_partial(Fp32Gemm p, SplitWorkspace w, int k_per_split) {
    extern __shared__ __align__(16) float smem[];
    const int k0 = static_cast<int>(blockIdx.y) * k_per_split;
    Fp32Gemm slice = p;
    slice.a = p.a + k0;
    slice.b = p.b + static_cast<size_t>(k0) * p.ldb;
    slice.k = min(k_per_split, p.k - k0);
    if (w.splits > 1) {
        slice.c = w.data + static_cast<size_t>(blockIdx.y) * w.rows * w.ld;
        slice.ldc = w.ld;
        slice.alpha = 1.0f;
        slice.beta = 0.0f;
    }
    kreg_warptiled::compute_tile<C>(slice, smem, static_cast<int>(blockIdx.x));
}

// What one call runs: which configuration (index into the planner's list), how many slices of how many k.
struct SplitPlan {
    int config = 0;
    int splits = 1;
    int k_per_split = 0;
    int64_t tiles = 0;
    double model_seconds = 0;
};

inline int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The share of an SM's FMA rate that `blocks` resident blocks of C reach: full from kWarpsToSaturate warps on.
// (An estimate: step 9's large tile, 8 warps, reaches its measured rate with one block per SM.)
template <class C>
double utilisation(int64_t blocks) {
    return std::min(1.0, static_cast<double>(blocks * C::kWarps) / kWarpsToSaturate);
}

// The model above for one configuration and one requested split count; kps rounds up, so the slices that
// result may be fewer than asked (every slice has at least one k).
template <class T>
SplitPlan model_plan(int64_t m, int64_t n, int64_t k, int requested_splits, int sms, bool beta_nonzero) {
    using C = typename T::Config;
    SplitPlan plan;
    plan.tiles = ceil_div64(m, C::BM) * ceil_div64(n, C::BN);
    const int64_t kps = ceil_div64(ceil_div64(k, requested_splits), kSplitKMultiple) * kSplitKMultiple;
    plan.k_per_split = static_cast<int>(std::min<int64_t>(kps, k));
    plan.splits = static_cast<int>(ceil_div64(k, plan.k_per_split));
    // The busiest SM's blocks, run kResident at a time; a round of b blocks goes at the SM's rate times
    // utilisation(b), so a lone 4-warp block is charged for the latency it cannot hide.
    const int64_t busiest = ceil_div64(plan.tiles * plan.splits, sms);
    const int64_t full_rounds = busiest / T::kResident, remainder = busiest % T::kResident;
    const double block_flops = 2.0 * C::BM * C::BN * (plan.k_per_split + kBlockOverheadK);
    const double sm_rate = kSmFlops * T::kEfficiency;
    double compute =
        static_cast<double>(full_rounds) * T::kResident * block_flops / (sm_rate * utilisation<C>(T::kResident));
    if (remainder > 0) compute += static_cast<double>(remainder) * block_flops / (sm_rate * utilisation<C>(remainder));
    double reduce = 0;
    if (plan.splits > 1) {
        const double ld = static_cast<double>(kreg_cuda::workspace_ld(static_cast<int>(n)));
        reduce = (8.0 * plan.splits * m * ld + 4.0 * m * n * (beta_nonzero ? 2 : 1)) / kBandwidth + kLaunchSeconds;
    }
    plan.model_seconds = compute + reduce;
    return plan;
}

inline size_t workspace_bytes(const SplitPlan& plan, int64_t m, int64_t n) {
    return plan.splits > 1 ? size_t(plan.splits) * size_t(m) * size_t(kreg_cuda::workspace_ld(static_cast<int>(n))) * 4
                           : 0;
}

// Chooses the fastest (configuration, split count) by the model, over the tiles Ts... in order (ties go to the
// earlier tile and the fewer slices).
template <class... Ts>
class SplitPlanner {
public:
    static SplitPlan choose(int64_t m, int64_t n, int64_t k, int sms, bool beta_nonzero) {
        SplitPlan best;
        best.model_seconds = -1;
        int index = 0;
        (consider<Ts>(index++, m, n, k, sms, beta_nonzero, best), ...);
        return best;
    }

private:
    template <class T>
    static void consider(int index, int64_t m, int64_t n, int64_t k, int sms, bool beta_nonzero, SplitPlan& best) {
        // Slices of fewer than kMinSplitK k are not worth their prologue; K < 2 kMinSplitK stays whole.
        const int64_t most = std::max<int64_t>(1, std::min<int64_t>(kMaxSplits, k / kMinSplitK));
        int last_splits = 0;
        for (int s = 1; s <= most; ++s) {
            SplitPlan plan = model_plan<T>(m, n, k, s, sms, beta_nonzero);
            if (plan.splits == last_splits) continue;  // the same plan as the previous s after rounding
            last_splits = plan.splits;
            if (workspace_bytes(plan, m, n) > kMaxWorkspaceBytes) break;
            plan.config = index;
            if (best.model_seconds < 0 || plan.model_seconds < best.model_seconds) best = plan;
        }
    }
};

// A split-K GEMM over the tiles Ts... (step 9's configurations). Name gives the kernel's registered name and
// description (static members name and description).
template <class Name, class... Ts>
class SplitKGemm final : public kreg::IKernel {
public:
    SplitKGemm() {
        for (int& device : configured_device_) device = -1;
    }

    static kreg::KernelSpec spec() { return kreg_cuda::simt_spec(Name::name, Name::description, 80, &model_bytes); }

    void run_gemm(const kreg_gemm_args& args) override {
        const Fp32Gemm p = kreg_cuda::fp32_gemm(args);
        const cudaStream_t stream = static_cast<cudaStream_t>(args.stream);
        const int sms = sm_count_.get();
        const SplitPlan plan = plan_for(p, sms);
        SplitWorkspace w{nullptr, plan.splits, p.m, kreg_cuda::workspace_ld(p.n)};
        if (plan.splits > 1) w.data = workspace_.get(workspace_bytes(plan, p.m, p.n), stream);
        launch_partial(plan, p, w, stream);
        if (plan.splits > 1) kreg_cuda::launch_reduce_splits(p, w, sms, stream);
    }

    // The first launch (the partial products, or the whole GEMM when the plan has one slice): where the time goes.
    bool describe_launch(const kreg_gemm_args& args, kreg_launch_info& info) override {
        const Fp32Gemm p = kreg_cuda::fp32_gemm(args);
        const SplitPlan plan = plan_for(p, sm_count_.get());
        LaunchPlan launch = launch_plan(plan, p);
        kreg_cuda::fill_launch_info(launch, info);
        return true;
    }

    // The plan a call of this shape runs on `sms` SMs (for tests and the dispatch plugin's evidence).
    static SplitPlan plan_for(const Fp32Gemm& p, int sms) {
        return SplitPlanner<Ts...>::choose(p.m, p.n, p.k, sms, p.beta != 0.0f);
    }

private:
    struct LaunchPlan {
        void (*kernel)(Fp32Gemm, SplitWorkspace, int);
        dim3 grid;
        dim3 block;
        unsigned dynamic_smem;
    };

    template <class T>
    LaunchPlan launch_plan_of(const SplitPlan& plan) {
        using C = typename T::Config;
        if (C::kSmemBytes > 48 * 1024)
            kreg_cuda::allow_dynamic_smem(reinterpret_cast<const void*>(&splitk_partial<C>), C::kSmemBytes, Name::name,
                                          configured_device_[index_of<T>()]);
        if (plan.tiles > INT_MAX)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, std::string(Name::name) + ": " +
                                                                std::to_string(plan.tiles) +
                                                                " tiles exceed the 1D grid this kernel uses");
        return {&splitk_partial<C>, dim3(static_cast<unsigned>(plan.tiles), static_cast<unsigned>(plan.splits)),
                dim3(C::kThreads), static_cast<unsigned>(C::kSmemBytes)};
    }

    LaunchPlan launch_plan(const SplitPlan& plan, const Fp32Gemm& /*p*/) {
        LaunchPlan out{};
        int index = 0;
        ((index++ == plan.config ? (out = launch_plan_of<Ts>(plan), 0) : 0), ...);
        return out;
    }

    void launch_partial(const SplitPlan& plan, const Fp32Gemm& p, const SplitWorkspace& w, cudaStream_t stream) {
        const LaunchPlan launch = launch_plan(plan, p);
        launch.kernel<<<launch.grid, launch.block, launch.dynamic_smem, stream>>>(p, w, plan.k_per_split);
        KREG_CUDA_CHECK_LAUNCH();
    }

    template <class T>
    static constexpr int index_of() {
        int index = 0, found = 0;
        ((std::is_same_v<T, Ts> ? (found = index, ++index) : ++index), ...);
        return found;
    }

    // Traffic by the model for the H200's SM count: the chosen tile's panel reads, plus the workspace written and
    // read back when the plan splits.
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) {
        const SplitPlan plan = SplitPlanner<Ts...>::choose(m, n, k, kreg_cuda::kModelSmCount, false);
        double bytes = 0;
        int index = 0;
        ((index++ == plan.config
              ? (bytes = kreg_cuda::block_tile_bytes<Ts::Config::BM, Ts::Config::BN>(m, n, k, dtype), 0)
              : 0),
         ...);
        return bytes + 2.0 * static_cast<double>(workspace_bytes(plan, m, n)) + (plan.splits > 1 ? 4.0 * m * n : 0);
    }

    kreg_cuda::SmCount sm_count_;
    kreg_cuda::Workspace workspace_;
    int configured_device_[sizeof...(Ts)];
};

// cuda_splitk: step 9's two tiles.
struct SplitKName {
    static constexpr const char* name = "cuda_splitk";
    static constexpr const char* description =
        "step 9's 128x256 / 64x128 warp tiles, K split over blocks by a wave model (up to 256 slices), "
        "deterministic fixed-order reduction of the slices";
};

//                                                  efficiency %  resident blocks per SM (ptxas -v: 255 and 168
//                                                  registers)
using LargeTile = Tile<kreg_warptiled::LargeConfig, 100, 1>;
using SmallTile = Tile<kreg_warptiled::SmallConfig, 90, 3>;
using SplitKFp32 = SplitKGemm<SplitKName, LargeTile, SmallTile>;

}  // namespace kreg_splitk
