// cuBLASLt reference kernels: the honest "beyond cuBLAS" baseline (issue 25). cuBLAS's GemmEx runs one default
// algorithm per shape; cuBLASLt's heuristic offers several, and the fastest of them is what a hand-written kernel
// has to beat.
//
//   cublaslt_fp32  fp32 A, B, C, plain fp32 FMA (CUBLAS_COMPUTE_32F: no tensor cores)
//   cublaslt_tf32  fp32 storage, tensor cores with 10-bit-mantissa inputs (CUBLAS_COMPUTE_32F_FAST_TF32)
//   cublaslt_bf16  bf16 A and B, fp32 C, fp32 accumulation (CUBLAS_COMPUTE_32F)
//
// Layout as in ../cublas/cublas.cu: the row-major C (M x N, ldc) is the column-major C^T (N x M, ldc) = B^T A^T, and
// the row-major B and A buffers already are B^T (N x K, ldb) and A^T (K x M, lda) column-major. So cuBLASLt's "A" is
// the B buffer, its "B" the A buffer, no transposes, and alpha, beta and the leading dimensions pass straight through.
//
// Choosing: the first call at a shape (m, n, k, the leading dimensions, whether beta is 0, and each pointer's
// alignment, which decides which algorithms may run) asks the heuristic for its top kCandidates and times every one
// of them on the caller's stream with events, in interleaved rounds (so clock drift does not favour one), then runs
// the fastest for the call itself. The choice is kept in the instance for the later calls at that shape. That first
// call waits for its own events (cudaEventSynchronize, never the device): the runner's first call of a row is its
// untimed checked call (core/src/pipeline/pipeline.cpp), so the wait holds nothing timed. With beta != 0 the
// candidates write into a scratch C of the instance's (stream-ordered cudaMallocAsync, zero-filled), so the call's
// own C is read exactly once, by the chosen algorithm; with beta = 0 they write the call's C, which the chosen
// algorithm then overwrites. The workspace (kWorkspaceBytes, what NVIDIA recommends for Hopper) is the instance's.
//
// The row names the choice (describe_variant, ABI 1.2's describe_gemm_variant: extra.variant, asked after the calls):
// the cuBLASLt version, the algorithm's configuration (ids of cublasLtMatmulAlgoConfigAttributes_t, enough to rebuild
// it with cublasLtMatmulAlgoInit), its rank in the heuristic's list and the median times measured while choosing. The
// plugin's version carries the cuBLASLt it runs on ("1.0.0+cublaslt.13.1.0").
#include <kreg/cuda_check.hpp>
#include <kreg/kernel.hpp>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

constexpr int kCandidates = 8;
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
// Timed rounds while choosing: as many as fit kChooseBudgetMs of candidate calls, within these bounds.
constexpr int kMinRounds = 5, kMaxRounds = 50;
constexpr double kChooseBudgetMs = 50.0;

void check_lt(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw kreg::Error(status == CUBLAS_STATUS_ALLOC_FAILED ? KREG_STATUS_OUT_OF_MEMORY : KREG_STATUS_RUNTIME_ERROR,
                          std::string(call) + " failed: " + cublasLtGetStatusName(status) + " (" +
                              cublasLtGetStatusString(status) + ")");
}
#define KREG_LT_CHECK(call) check_lt((call), #call)

std::string lt_version() {
    int major = 0, minor = 0, patch = 0;
    if (cublasLtGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
        cublasLtGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
        cublasLtGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
        return "";
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// The largest power of two (up to 256, cuBLASLt's default assumption) that divides the address.
uint32_t alignment_of(const void* p) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    uint32_t alignment = 256;
    while (alignment > 1 && address % alignment != 0) alignment /= 2;
    return alignment;
}

// The descriptors of one shape, made once (their creation is host work a timed call need not repeat).
class Descriptors {
public:
    Descriptors(cublasComputeType_t compute, cudaDataType_t in_type, uint64_t m, uint64_t n, uint64_t k, int64_t lda,
                int64_t ldb, int64_t ldc) {
        try {
            KREG_LT_CHECK(cublasLtMatmulDescCreate(&op_, compute, CUDA_R_32F));
            // Column-major C^T (n x m) = B^T (n x k) * A^T (k x m): cuBLASLt's A is the B buffer.
            KREG_LT_CHECK(cublasLtMatrixLayoutCreate(&lt_a_, in_type, n, k, ldb));
            KREG_LT_CHECK(cublasLtMatrixLayoutCreate(&lt_b_, in_type, k, m, lda));
            KREG_LT_CHECK(cublasLtMatrixLayoutCreate(&lt_c_, CUDA_R_32F, n, m, ldc));
        } catch (...) {
            release();  // a constructor that throws runs no destructor
            throw;
        }
    }
    ~Descriptors() { release(); }
    Descriptors(const Descriptors&) = delete;
    Descriptors& operator=(const Descriptors&) = delete;

    cublasLtMatmulDesc_t op() const { return op_; }
    cublasLtMatrixLayout_t a() const { return lt_a_; }
    cublasLtMatrixLayout_t b() const { return lt_b_; }
    cublasLtMatrixLayout_t c() const { return lt_c_; }

private:
    void release() noexcept {
        if (lt_c_) cublasLtMatrixLayoutDestroy(lt_c_);
        if (lt_b_) cublasLtMatrixLayoutDestroy(lt_b_);
        if (lt_a_) cublasLtMatrixLayoutDestroy(lt_a_);
        if (op_) cublasLtMatmulDescDestroy(op_);
    }
    cublasLtMatmulDesc_t op_ = nullptr;
    cublasLtMatrixLayout_t lt_a_ = nullptr, lt_b_ = nullptr, lt_c_ = nullptr;
};

class Preference {
public:
    Preference(uint32_t align_a, uint32_t align_b, uint32_t align_c) {
        KREG_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
        const uint64_t workspace = kWorkspaceBytes;
        set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
        // cuBLASLt's A is our B (see Descriptors).
        set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b, sizeof align_b);
        set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a, sizeof align_a);
        set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof align_c);
        set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof align_c);
    }
    ~Preference() { cublasLtMatmulPreferenceDestroy(pref_); }
    Preference(const Preference&) = delete;
    Preference& operator=(const Preference&) = delete;
    cublasLtMatmulPreference_t get() const { return pref_; }

private:
    void set(cublasLtMatmulPreferenceAttributes_t attribute, const void* value, size_t size) {
        const cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(pref_, attribute, value, size);
        if (s != CUBLAS_STATUS_SUCCESS) {
            cublasLtMatmulPreferenceDestroy(pref_);
            check_lt(s, "cublasLtMatmulPreferenceSetAttribute");
        }
    }
    cublasLtMatmulPreference_t pref_ = nullptr;
};

// Events of one choosing run, destroyed with it (cudaEventDestroy does not wait for the device).
class EventPool {
public:
    cudaEvent_t make() {
        cudaEvent_t e = nullptr;
        KREG_CUDA_CHECK(cudaEventCreate(&e));
        events_.push_back(e);
        return e;
    }
    ~EventPool() {
        for (cudaEvent_t e : events_) cudaEventDestroy(e);
    }

private:
    std::vector<cudaEvent_t> events_;
};

// "algo 66 tile 27 stages 19 splitK 1 reduction 0 swizzle 0 custom 0 inner 0 cluster 0": the configuration's ids.
std::string describe_algo(const cublasLtMatmulAlgo_t& algo) {
    auto u32 = [&](cublasLtMatmulAlgoConfigAttributes_t attribute) -> long long {
        uint32_t v = 0;
        size_t written = 0;
        return cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS
                   ? static_cast<long long>(v)
                   : -1;
    };
    auto i32 = [&](cublasLtMatmulAlgoConfigAttributes_t attribute) -> long long {
        int32_t v = 0;
        size_t written = 0;
        return cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS
                   ? static_cast<long long>(v)
                   : -1;
    };
    auto u16 = [&](cublasLtMatmulAlgoConfigAttributes_t attribute) -> long long {
        uint16_t v = 0;
        size_t written = 0;
        return cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS
                   ? static_cast<long long>(v)
                   : -1;
    };
    return "algo " + std::to_string(i32(CUBLASLT_ALGO_CONFIG_ID)) + " tile " +
           std::to_string(u32(CUBLASLT_ALGO_CONFIG_TILE_ID)) + " stages " +
           std::to_string(u32(CUBLASLT_ALGO_CONFIG_STAGES_ID)) + " splitK " +
           std::to_string(i32(CUBLASLT_ALGO_CONFIG_SPLITK_NUM)) + " reduction " +
           std::to_string(u32(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)) + " swizzle " +
           std::to_string(u32(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)) + " custom " +
           std::to_string(u32(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)) + " inner " +
           std::to_string(u16(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID)) + " cluster " +
           std::to_string(u16(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
}

std::string format_ms(double ms) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", ms);
    return text;
}

// What a call needs to run: the shape's descriptors and the algorithm chosen for it.
struct Choice {
    std::unique_ptr<Descriptors> descriptors;
    cublasLtMatmulAlgo_t algo{};
    std::string variant;  // for the row
};

enum class Flavour { Fp32, Tf32, Bf16 };

template <Flavour F>
class CublasLt final : public kreg::IKernel {
public:
    static constexpr kreg_dtype kDtype = F == Flavour::Fp32   ? KREG_DTYPE_FP32
                                         : F == Flavour::Tf32 ? KREG_DTYPE_TF32
                                                              : KREG_DTYPE_BF16;
    static constexpr cublasComputeType_t kCompute =
        F == Flavour::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    static constexpr cudaDataType_t kInType = F == Flavour::Bf16 ? CUDA_R_16BF : CUDA_R_32F;

    static kreg::KernelSpec spec() {
        kreg::KernelSpec s;
        s.name = F == Flavour::Fp32 ? "cublaslt_fp32" : F == Flavour::Tf32 ? "cublaslt_tf32" : "cublaslt_bf16";
        s.description =
            F == Flavour::Fp32
                ? "cuBLASLt, fp32 FMA; fastest of the heuristic's top 8, timed at each shape's first call"
            : F == Flavour::Tf32
                ? "cuBLASLt, fp32 data, TF32 tensor cores; fastest of the heuristic's top 8 per shape"
                : "cuBLASLt, bf16 A and B, fp32 C and accumulation; fastest of the heuristic's top 8 per shape";
        s.backend = KREG_BACKEND_CUDA;
        s.dtypes = KREG_DTYPE_BIT(kDtype);
        s.min_compute_capability = F == Flavour::Fp32 ? 70 : 80;
        s.flags = KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS;
        return s;
    }

    CublasLt() : version_(lt_version()) {
        KREG_LT_CHECK(cublasLtCreate(&handle_));
        const cudaError_t e = cudaMalloc(&workspace_, kWorkspaceBytes);
        if (e != cudaSuccess) {
            cublasLtDestroy(handle_);
            (void)cudaGetLastError();
            throw kreg::Error(KREG_STATUS_OUT_OF_MEMORY,
                              std::string("cudaMalloc of the cuBLASLt workspace failed: ") + cudaGetErrorName(e));
        }
    }
    ~CublasLt() override {
        choices_.clear();  // descriptors before the handle
        cudaFree(workspace_);
        cublasLtDestroy(handle_);
    }
    CublasLt(const CublasLt&) = delete;
    CublasLt& operator=(const CublasLt&) = delete;

    void run_gemm(const kreg_gemm_args& args) override {
        check(args);
        const auto stream = static_cast<cudaStream_t>(args.stream);
        const float alpha = static_cast<float>(args.alpha), beta = static_cast<float>(args.beta);
        auto found = choices_.find(key_of(args));
        if (found == choices_.end()) found = choices_.emplace(key_of(args), choose(args, alpha, beta, stream)).first;
        const Choice& choice = found->second;
        KREG_LT_CHECK(matmul(choice, choice.algo, args, alpha, beta, args.c, stream));
    }

    // The row's extra.variant (ABI 1.2): the choice for these args once it is made.
    std::string describe_variant(const kreg_gemm_args& args) override {
        check(args);
        const auto found = choices_.find(key_of(args));
        if (found != choices_.end()) return found->second.variant;
        return "cuBLASLt " + version_ + ": not chosen yet (the first call at this shape times the heuristic's top " +
               std::to_string(kCandidates) + ")";
    }

private:
    // Everything the heuristic's answer depends on.
    using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, uint32_t, uint32_t, uint32_t>;
    static Key key_of(const kreg_gemm_args& a) {
        return {
            a.m, a.n, a.k, a.lda, a.ldb, a.ldc, a.beta == 0.0, alignment_of(a.a), alignment_of(a.b), alignment_of(a.c)};
    }

    static void check(const kreg_gemm_args& args) {
        if (args.struct_size < sizeof(kreg_gemm_args))
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT,
                              "kreg_gemm_args.struct_size is smaller than this plugin's ABI");
        if (args.dtype != kDtype) throw kreg::Error(KREG_STATUS_UNSUPPORTED, "dtype not declared by this kernel");
        if (args.m < 1 || args.n < 1 || args.k < 1)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "m, n and k must be >= 1");
        if (args.lda < args.k || args.ldb < args.n || args.ldc < args.n)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "leading dimensions must be >= the row length");
        if (args.a == nullptr || args.b == nullptr || args.c == nullptr)
            throw kreg::Error(KREG_STATUS_INVALID_ARGUMENT, "null matrix pointer");
    }

    cublasStatus_t matmul(const Choice& choice, const cublasLtMatmulAlgo_t& algo, const kreg_gemm_args& args,
                          float alpha, float beta, void* c, cudaStream_t stream) const {
        const Descriptors& d = *choice.descriptors;
        return cublasLtMatmul(handle_, d.op(), &alpha, args.b, d.a(), args.a, d.b(), &beta, c, d.c(), c, d.c(), &algo,
                              workspace_, kWorkspaceBytes, stream);
    }

    Choice choose(const kreg_gemm_args& args, float alpha, float beta, cudaStream_t stream) {
        Choice choice;
        choice.descriptors = std::make_unique<Descriptors>(kCompute, kInType, uint64_t(args.m), uint64_t(args.n),
                                                           uint64_t(args.k), args.lda, args.ldb, args.ldc);
        const Preference pref(alignment_of(args.a), alignment_of(args.b), alignment_of(args.c));
        cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
        int returned = 0;
        const Descriptors& d = *choice.descriptors;
        KREG_LT_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_, d.op(), d.a(), d.b(), d.c(), d.c(), pref.get(),
                                                     kCandidates, results, &returned));
        std::vector<int> candidates;  // indices into results, in the heuristic's order
        for (int i = 0; i < returned; ++i)
            if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= kWorkspaceBytes)
                candidates.push_back(i);
        if (candidates.empty())
            throw kreg::Error(KREG_STATUS_UNSUPPORTED,
                              "cuBLASLt " + version_ + "'s heuristic offers no algorithm for " +
                                  std::to_string(args.m) + "x" + std::to_string(args.n) + "x" + std::to_string(args.k));

        // With beta != 0 the candidates must not accumulate into the call's C: they write a scratch C.
        void* target = args.c;
        void* scratch = nullptr;
        const size_t c_bytes = size_t(args.m) * size_t(args.ldc) * sizeof(float);
        if (beta != 0.0f) {
            KREG_CUDA_CHECK(cudaMallocAsync(&scratch, c_bytes, stream));
            KREG_CUDA_CHECK(cudaMemsetAsync(scratch, 0, c_bytes, stream));
            target = scratch;
        }
        struct ScratchGuard {
            void* p;
            cudaStream_t s;
            ~ScratchGuard() {
                if (p) cudaFreeAsync(p, s);
            }
        } scratch_guard{scratch, stream};

        // One untimed call each (a candidate that fails here is dropped), then one timed call each to size the rounds.
        EventPool events;
        std::vector<int> runnable;
        std::string first_failure;
        for (int i : candidates) {
            const cublasStatus_t s = matmul(choice, results[i].algo, args, alpha, beta, target, stream);
            if (s == CUBLAS_STATUS_SUCCESS)
                runnable.push_back(i);
            else if (first_failure.empty())
                first_failure = cublasLtGetStatusName(s);
        }
        if (runnable.empty())
            throw kreg::Error(KREG_STATUS_RUNTIME_ERROR,
                              "no candidate of cuBLASLt " + version_ + "'s heuristic ran: " + first_failure);
        std::vector<std::vector<std::pair<cudaEvent_t, cudaEvent_t>>> timed(runnable.size());
        auto time_round = [&] {
            for (size_t c = 0; c < runnable.size(); ++c) {
                const cudaEvent_t start = events.make(), stop = events.make();
                KREG_CUDA_CHECK(cudaEventRecord(start, stream));
                KREG_LT_CHECK(matmul(choice, results[runnable[c]].algo, args, alpha, beta, target, stream));
                KREG_CUDA_CHECK(cudaEventRecord(stop, stream));
                timed[c].emplace_back(start, stop);
            }
        };
        auto elapsed = [](const std::pair<cudaEvent_t, cudaEvent_t>& p) {
            float ms = 0;
            KREG_CUDA_CHECK(cudaEventElapsedTime(&ms, p.first, p.second));
            return double(ms);
        };
        time_round();
        KREG_CUDA_CHECK(cudaEventSynchronize(timed.back().back().second));
        double round_ms = 0;
        for (const auto& t : timed) round_ms += elapsed(t.back());
        const int rounds =
            std::clamp(round_ms > 0 ? int(kChooseBudgetMs / round_ms) : kMaxRounds, kMinRounds, kMaxRounds);
        for (int r = 1; r < rounds; ++r) time_round();
        KREG_CUDA_CHECK(cudaEventSynchronize(timed.back().back().second));

        std::vector<double> medians(runnable.size());
        for (size_t c = 0; c < runnable.size(); ++c) {
            std::vector<double> ms;
            for (const auto& p : timed[c]) ms.push_back(elapsed(p));
            std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
            medians[c] = ms[ms.size() / 2];
        }
        const size_t best = size_t(std::min_element(medians.begin(), medians.end()) - medians.begin());
        choice.algo = results[runnable[best]].algo;
        choice.variant =
            "cuBLASLt " + version_ + " " + describe_algo(choice.algo) + "; heuristic's #" +
            std::to_string(runnable[best] + 1) + " of " + std::to_string(returned) + ", fastest of " +
            std::to_string(runnable.size()) + " timed (" + std::to_string(rounds) + " rounds, median " +
            format_ms(medians[best]) + " ms; heuristic's " +
            (runnable[0] == 0 ? std::string("first ") : "first runnable, #" + std::to_string(runnable[0] + 1) + ", ") +
            format_ms(medians[0]) + " ms)";
        return choice;
    }

    std::string version_;
    cublasLtHandle_t handle_ = nullptr;
    void* workspace_ = nullptr;
    std::map<Key, Choice> choices_;
};

// "1.0.0+cublaslt.MAJOR.MINOR.PATCH" of the libcublasLt actually loaded; plain "1.0.0" where it cannot say.
const char* plugin_version() {
    static const std::string version = [] {
        const std::string v = lt_version();
        return v.empty() ? std::string("1.0.0") : "1.0.0+cublaslt." + v;
    }();
    return version.c_str();
}

using CublasLtFp32 = CublasLt<Flavour::Fp32>;
using CublasLtTf32 = CublasLt<Flavour::Tf32>;
using CublasLtBf16 = CublasLt<Flavour::Bf16>;

}  // namespace

KREG_PLUGIN("cublaslt_reference", plugin_version(), CublasLtFp32, CublasLtTf32, CublasLtBf16)
