// Step 11 — Hopper tensor cores: wgmma.mma_async from shared memory, fed by TMA through an mbarrier pipeline.
//
// One kernel, cuda_11_wgmma, bf16 only: A and B bf16 (2-byte), C fp32, fp32 accumulation in the tensor core.
// Hopper-only (sm_90a: wgmma exists nowhere else), so the spec declares compute capability 9.0 and the
// plugin is compiled for sm_90a alone (CMakeLists.txt).
//
// What is new against step 10 (mma.sync, ldmatrix, cp.async):
//   - wgmma: a warpgroup (4 consecutive warps, 128 threads) issues one 64xNx16 product whose operands the
//     tensor core reads straight from shared memory, described by a 64-bit matrix descriptor (address,
//     strides, swizzle). No ldmatrix, no fragments of A or B in registers; only the accumulators are
//     registers (N/2 fp32 per thread). The instruction is asynchronous: wgmma.commit_group closes a group,
//     wgmma.wait_group N waits until at most N groups are still running, so the next stage's products can
//     be issued while the previous ones finish.
//   - TMA (cp.async.bulk.tensor): one thread copies a whole 2D tile global -> shared with one instruction,
//     described by a tensor map (the matrix's base, sizes, strides, the box, the swizzle) that the host
//     encodes and passes as a __grid_constant__ parameter. TMA writes zeros for every element of the box
//     outside the matrix, so ragged M, N and K edges need no code in the main loop.
//   - mbarrier pipeline: each stage has a "full" barrier (TMA's byte count completes it) and an "empty"
//     barrier (each consumer warp arrives when its wgmma reading the stage is done). Thread 0 refills a
//     stage only after it is empty; consumers wait on full. No __syncthreads in the main loop.
//   - 128-byte swizzle instead of padding: a 64-element (128-byte) row of a tile is stored with its
//     16-byte chunks permuted by the row index (chunk ^= row % 8), which TMA does on the way in and wgmma
//     undoes on the way out; the eight rows wgmma reads at once fall in distinct banks.
//
// Tiles: BM = 128 rows of C per block, BN = 256 (or 128 for grids that would not fill the GPU), BK = 64,
// 4 stages. 256 threads = two consumer warpgroups, each owning 64 rows x BN columns of C (one
// wgmma.m64nBNk16 per 16-wide k step, 4 per stage). Thread 0 (a consumer too) also drives TMA; the
// warp-specialised version with a dedicated producer is step 12.
//
// Shared-memory layouts (per stage, bases 1024-byte aligned as the 128-byte swizzle requires):
//   A: 128 rows x 64 k, K-major: row r at r * 128 bytes, swizzled within each 8-row, 1024-byte atom.
//      Descriptor (K-major, SWIZZLE_128B): stride between 8-row groups (SBO) 1024 B, LBO unused (1);
//      the k-th 16-wide slice starts 32 * k bytes further (the swizzle is applied to absolute addresses).
//   B: BN/64 chunks of 64 k x 64 n, N-major ("MN-major", B is row-major in global memory): k row at
//      k * 128 bytes, chunk j at j * 8192. Descriptor (MN-major, SWIZZLE_128B): LBO = 8192 (the next 64
//      columns), SBO = 1024 (the next 8 k rows); the k-th 16-wide slice starts 2048 * k bytes further;
//      wgmma's imm-trans-b = 1 says B is MN-major.
//
// Any M, N, K >= 1, any lda, ldb, ldc: TMA needs a 16-byte aligned base and row pitch (lda, ldb multiples
// of 8 elements). When A or B is not so (odd K as in 517^3, 1000x3000x257, 4097x1025x2049; a padded odd
// ld), the plugin first copies it, on the same stream, into a buffer of its own whose rows are padded to a
// multiple of 8 elements (../cuda_common/tma_operands.cuh), and the tensor map describes that copy. The copy's
// cost is in the measured time. The epilogue writes alpha * acc + beta * C (C read only if beta != 0) as float2
// where aligned and in range, single elements otherwise, nothing outside C.
//
// The tensor map is encoded by cuTensorMapEncodeTiled, a driver API function; the plugin gets it through
// cudaGetDriverEntryPointByVersion so that it does not link libcuda (it still imports that runtime
// function, which the grading audit refuses for student submissions: this is an in-tree plugin).
#include "../cuda_common/gemm_common.cuh"
#include "../cuda_common/sm90.cuh"
#include "../cuda_common/tma_operands.cuh"
#include "../cuda_common/wgmma_ops.cuh"

#include <climits>
#include <cstdint>

namespace {

using namespace kreg_cuda::sm90;
using kreg_cuda::store_pair;  // the alpha/beta epilogue of steps 10-12 (gemm_common.cuh)

// Kernel parameters besides the two tensor maps (which hold A's and B's addresses, sizes and strides).
struct WgmmaGemm {
    float* c;
    int m, n, k;
    int ldc;
    float alpha, beta;
};

template <int BN_>
struct Config {
    static constexpr int BM = 128, BN = BN_, BK = 64;
    static constexpr int kConsumerWarpgroups = 2;  // each owns 64 rows of the tile
    static constexpr int kThreads = kConsumerWarpgroups * 128;
    static constexpr int kConsumerWarps = kThreads / 32;
    static constexpr int kStages = 4;
    static constexpr int kABytes = BM * BK * 2;       // 16 KiB
    static constexpr int kBChunkBytes = 64 * BK * 2;  // 64 columns x 64 k: 8 KiB
    static constexpr int kBBytes = BK * BN * 2;
    static constexpr int kStageBytes = kABytes + kBBytes;  // what TMA delivers per stage
    static constexpr int kBarrierBytes = 2 * kStages * 8;
    static constexpr int kSmemBytes = 1024 + kStages * kStageBytes + kBarrierBytes;  // 1024: alignment slack
    static constexpr int kAcc = BN / 2;                                              // fp32 accumulators per thread
    static constexpr int kGroupM = 8;  // block rows per grid swizzle group
    static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "stage parts must keep 1024-byte alignment");
    static_assert(BN % 64 == 0 && BK == 64, "a 128-byte swizzle row is 64 bf16");
};

// ---------------------------------------------------------------------------------------------------
// Device helpers of this step (the mbarrier, TMA and wgmma primitives are in ../cuda_common/sm90.cuh)

template <int N>
__device__ __forceinline__ void wgmma_bf16(float (&acc)[N / 2], uint64_t desc_a, uint64_t desc_b) {
    if constexpr (N == 256)
        wgmma_m64n256k16_bf16(acc, desc_a, desc_b, 1);
    else
        wgmma_m64n128k16_bf16(acc, desc_a, desc_b, 1);
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      WgmmaGemm p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ uint8_t smem_raw[];
    // Dynamic shared memory is only 16-byte aligned for sure; the swizzled tiles need 1024.
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const uint32_t bars = base + C::kStages * C::kStageBytes;
    auto full = [&](int s) { return bars + 8u * s; };
    auto empty = [&](int s) { return bars + 8u * (C::kStages + s); };
    auto stage_a = [&](int s) { return base + static_cast<uint32_t>(s) * C::kStageBytes; };
    auto stage_b = [&](int s) { return stage_a(s) + C::kABytes; };

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wg = tid / 128;  // consumer warpgroup: rows wg * 64 .. wg * 64 + 63 of the tile

    // Grouped block order (as in steps 9 and 10): consecutive blocks walk down kGroupM block rows.
    const int tiles_m = (p.m + C::BM - 1) / C::BM, tiles_n = (p.n + C::BN - 1) / C::BN;
    const int blocks_per_group = C::kGroupM * tiles_n;
    const int group = blockIdx.x / blocks_per_group;
    const int first_tile_m = group * C::kGroupM;
    const int group_rows = min(tiles_m - first_tile_m, C::kGroupM);
    const int in_group = blockIdx.x % blocks_per_group;
    const int row0 = (first_tile_m + in_group % group_rows) * C::BM;
    const int col0 = (in_group / group_rows) * C::BN;

    const int k_tiles = (p.k + C::BK - 1) / C::BK;

    // Copies k tile `tile` (A: rows row0.., k tile*64..; B: k rows tile*64.., columns col0..) into stage s.
    auto issue = [&](int s, int tile) {
        mbar_arrive_expect_tx(full(s), C::kStageBytes);
        tma_load_2d(stage_a(s), &map_a, full(s), tile * C::BK, row0);
#pragma unroll
        for (int j = 0; j < C::BN / 64; ++j)
            tma_load_2d(stage_b(s) + j * C::kBChunkBytes, &map_b, full(s), col0 + j * 64, tile * C::BK);
    };

    if (tid == 0) {
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_a)) : "memory");
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_b)) : "memory");
        for (int s = 0; s < C::kStages; ++s) {
            mbar_init(full(s), 1);                   // thread 0's arrive.expect_tx, plus TMA's bytes
            mbar_init(empty(s), C::kConsumerWarps);  // one arrival per consumer warp
        }
        // The initialisations must be visible to the TMA unit (the async proxy) before it signals them.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (tid == 0)
        for (int s = 0; s < C::kStages && s < k_tiles; ++s) issue(s, s);

    float acc[C::kAcc];
#pragma unroll
    for (int i = 0; i < C::kAcc; ++i) acc[i] = 0.0f;

    const uint32_t a_offset = static_cast<uint32_t>(wg) * 64u * 128u;  // this warpgroup's 64 rows of A
    for (int t = 0; t < k_tiles; ++t) {
        const int s = t % C::kStages;
        mbar_wait(full(s), (t / C::kStages) & 1);
        fence_accumulators(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < C::BK / 16; ++kk) {
            const uint64_t da = smem_desc(stage_a(s) + a_offset + kk * 32u, 16u, 1024u);
            const uint64_t db = smem_desc(stage_b(s) + kk * 2048u, static_cast<uint32_t>(C::kBChunkBytes), 1024u);
            wgmma_bf16<C::BN>(acc, da, db);
        }
        wgmma_commit();
        // At most one group (this tile's) still running: the group of tile t - 1 is done reading its stage.
        wgmma_wait<1>();
        fence_accumulators(acc);
        if (t > 0) {
            const int done = t - 1, ds = done % C::kStages;
            if (lane == 0) mbar_arrive(empty(ds));
            if (tid == 0 && done + C::kStages < k_tiles) {
                mbar_wait(empty(ds), (done / C::kStages) & 1);
                issue(ds, done + C::kStages);
            }
            __syncwarp();
        }
    }
    wgmma_wait<0>();
    fence_accumulators(acc);

    // Accumulator layout of wgmma m64nN (per warp 16 rows, like mma.sync's 16x8 C fragment repeated along N):
    // acc[4j + 0..1] at (g, 8j + 2t .. +1), acc[4j + 2..3] at (g + 8, 8j + 2t .. +1), g = lane / 4, t = lane % 4.
    const int g = lane >> 2, t4 = lane & 3;
    const int row = row0 + wg * 64 + (warp % 4) * 16 + g;
#pragma unroll
    for (int j = 0; j < C::BN / 8; ++j) {
        const int col = col0 + 8 * j + 2 * t4;
        store_pair(p, row, col, acc[4 * j], acc[4 * j + 1]);
        store_pair(p, row + 8, col, acc[4 * j + 2], acc[4 * j + 3]);
    }
#else
    __trap();  // built for sm_90a only (CMakeLists.txt); never reached elsewhere
#endif
}

// ---------------------------------------------------------------------------------------------------
// Host side

WgmmaGemm wgmma_gemm(const kreg_gemm_args& args) {
    kreg_cuda::check_gemm_args(args, KREG_DTYPE_BIT(KREG_DTYPE_BF16), "cuda_11_wgmma computes bf16 only");
    WgmmaGemm p;
    p.c = static_cast<float*>(args.c);
    p.m = static_cast<int>(args.m);
    p.n = static_cast<int>(args.n);
    p.k = static_cast<int>(args.k);
    p.ldc = static_cast<int>(args.ldc);
    p.alpha = static_cast<float>(args.alpha);
    p.beta = static_cast<float>(args.beta);
    return p;
}

// A row-major bf16 matrix of `rows` x `cols` with pitch `ld` elements, read in boxes of box_cols x box_rows
// with the 128-byte swizzle; TMA fills the parts of a box outside the matrix with zeros.
CUtensorMap make_tensor_map(const void* base, int64_t rows, int64_t cols, int64_t ld, uint32_t box_cols,
                            uint32_t box_rows, const char* which) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 2};  // bytes, dimension 1 only
    const cuuint32_t box[2] = {box_cols, box_rows};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = tensor_map_encoder("cuda_11_wgmma")(
        &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, element_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        throw kreg::Error(KREG_STATUS_RUNTIME_ERROR, std::string("cuda_11_wgmma: cuTensorMapEncodeTiled failed for ") +
                                                         which + " (CUresult " + std::to_string(static_cast<int>(r)) +
                                                         ")");
    return map;
}

using WideConfig = Config<256>;
using NarrowConfig = Config<128>;

struct LaunchPlan {
    void (*kernel)(CUtensorMap, CUtensorMap, WgmmaGemm);
    int bn;
    dim3 grid, block;
    unsigned dynamic_smem;
};

class Wgmma final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = "cuda_11_wgmma";
        s.description =
            "Hopper wgmma.mma_async bf16 from shared memory, TMA loads with 128B swizzle, 4-stage mbarrier "
            "pipeline; 128x256 block (two consumer warpgroups)";
        s.backend = KREG_BACKEND_CUDA;
        s.dtypes = KREG_DTYPE_BIT(KREG_DTYPE_BF16);
        s.min_compute_capability = 90;  // wgmma and TMA; built for sm_90a, which runs on 9.0 only
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        s.model_global_bytes = &model_bytes;
        return s;
    }

    void run_gemm(const kreg_gemm_args& args) override {
        const WgmmaGemm p = wgmma_gemm(args);
        const LaunchPlan plan = make_plan(p);
        const cudaStream_t stream = static_cast<cudaStream_t>(args.stream);

        // TMA wants a 16-byte aligned base and row pitch; otherwise work from padded copies (see the top).
        const kreg_cuda::TmaOperands ops = padded_.prepare(args, 2, stream);
        const void* a = ops.a;
        const void* b = ops.b;
        const int64_t lda = ops.lda, ldb = ops.ldb;
        const CUtensorMap map_a = make_tensor_map(a, args.m, args.k, lda, 64, 128, "A");
        const CUtensorMap map_b = make_tensor_map(b, args.k, args.n, ldb, 64, 64, "B");
        plan.kernel<<<plan.grid, plan.block, plan.dynamic_smem, stream>>>(map_a, map_b, p);
        KREG_CUDA_CHECK_LAUNCH();
    }

    bool describe_launch(const kreg_gemm_args& args, kreg_launch_info& info) override {
        const LaunchPlan plan = make_plan(wgmma_gemm(args));
        kreg_cuda::fill_launch_info(plan, info);
        return true;
    }

private:
    template <class C>
    LaunchPlan plan_for(const WgmmaGemm& p, int& configured_device) {
        kreg_cuda::allow_dynamic_smem(reinterpret_cast<const void*>(&wgmma_gemm_kernel<C>), C::kSmemBytes,
                                      "cuda_11_wgmma", configured_device);
        const int64_t blocks = int64_t{kreg_cuda::ceil_div(p.m, C::BM)} * kreg_cuda::ceil_div(p.n, C::BN);
        if (blocks > INT_MAX)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "cuda_11_wgmma: " + std::to_string(blocks) +
                                                                " blocks exceed the 1D grid this kernel uses");
        return {&wgmma_gemm_kernel<C>, C::BN, dim3(static_cast<unsigned>(blocks)), dim3(C::kThreads),
                static_cast<unsigned>(C::kSmemBytes)};
    }

    LaunchPlan make_plan(const WgmmaGemm& p) {
        int device = 0;
        KREG_CUDA_CHECK(cudaGetDevice(&device));
        if (device != sm_device_) {
            int major = 0, minor = 0;
            KREG_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
            KREG_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
            if (major != 9 || minor != 0)
                throw kreg::Error(KREG_STATUS_UNSUPPORTED,
                                  "cuda_11_wgmma is built for sm_90a (wgmma), which runs on compute capability 9.0 "
                                  "only; device " +
                                      std::to_string(device) + " is " + std::to_string(major) + "." +
                                      std::to_string(minor));
            KREG_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
            sm_device_ = device;
        }
        // 128x256 tiles halve B's re-reads against 128x128, but when they would not give every SM a block,
        // the narrower tiles keep more of the GPU busy (1024^3: 32 wide tiles against 64 narrow ones).
        const int64_t wide_blocks =
            int64_t{kreg_cuda::ceil_div(p.m, WideConfig::BM)} * kreg_cuda::ceil_div(p.n, WideConfig::BN);
        return wide_blocks >= sms_ ? plan_for<WideConfig>(p, wide_device_) : plan_for<NarrowConfig>(p, narrow_device_);
    }

    // Block-tile traffic of the 128x256 configuration: A read ceil(N/256) times, B ceil(M/128) times, in bf16;
    // C written once in fp32 (the small-grid 128x128 configuration and the repack of misaligned inputs are
    // not modelled).
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype /*dtype*/) {
        const double reads_of_a = static_cast<double>((n + 255) / 256);
        const double reads_of_b = static_cast<double>((m + 127) / 128);
        return 2.0 * (static_cast<double>(m) * k * reads_of_a + static_cast<double>(k) * n * reads_of_b) +
               4.0 * static_cast<double>(m) * n;
    }

    kreg_cuda::PaddedOperands padded_;  // copies of A and B that TMA cannot read as they are
    int sm_device_ = -1;
    int sms_ = 0;
    int wide_device_ = -1;
    int narrow_device_ = -1;
};

}  // namespace

KREG_PLUGIN("cuda_11_wgmma", "1.0.0", Wgmma)
