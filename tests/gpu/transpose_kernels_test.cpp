// Bit-exact correctness of every CUDA transpose and block-transpose kernel in the plugin folder (ABI 1.1).
//
// Plugins are loaded by the runner's own loader (tests/support/plugin_scan.hpp), as the runner sees them. A
// transpose does no arithmetic, so the check is exact: A is filled with random 32-bit patterns (NaNs with
// payloads, infinities and subnormals included, since a kernel must move bits, not values), and every element
// of the result must equal the source bit for bit. B is poisoned with a pattern before the call, so an
// unwritten element fails; the padding columns of B (ldb > M) and of A (lda > N) hold a sentinel that must
// survive, and A must be unchanged by a transpose. Every transpose kernel runs on odd shapes (1x1, 1xN, Nx1,
// 17x33, 4097x1025, ...) with packed and padded leading dimensions; every block-transpose kernel on every
// block it declares (1..max_block, at most 32) at two shapes, packed and padded. Seeds are fixed per case, so
// a failure reproduces. Without a CUDA device every test is skipped with the reason.
//
// cuda_copy is the ceiling reference: its output is A's elements in A's order, not a transpose; it gets
// a test of its own semantics.
#include "cuda_test.hpp"
#include "plugin_scan.hpp"

#include <kreg/abi.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using LoadedKernel = kreg::test::ScannedKernel;
using kreg::test::DeviceBuffer;
using kreg::test::no_device_reason;

struct Registry {
    std::vector<LoadedKernel> transposes, block_transposes;
    std::vector<std::string> load_errors;
};

// The ceiling reference: timed next to the transposes, never verified as one.
bool is_copy_reference(const kreg_kernel_info& k) { return std::string(k.name) == "cuda_copy"; }

const Registry& registry() {
    static const Registry r = [] {
        kreg::test::PluginScan scan = kreg::test::scan_plugins(KREG_PLUGIN_DIR);
        Registry out;
        out.load_errors = std::move(scan.load_errors);
        for (const LoadedKernel& k : scan.kernels) {
            if (k.info->backend != KREG_BACKEND_CUDA) continue;
            if (k.info->operation == KREG_OPERATION_TRANSPOSE) out.transposes.push_back(k);
            if (k.info->operation == KREG_OPERATION_BLOCK_TRANSPOSE) out.block_transposes.push_back(k);
        }
        return out;
    }();
    return r;
}

// ---------------------------------------------------------------------------------------------------
// Helpers

struct Rng {  // splitmix64
    uint64_t state;
    uint32_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return static_cast<uint32_t>((z ^ (z >> 31)) >> 32);
    }
};

constexpr uint32_t kPoison = 0x7fa11a5eu;    // NaN with a payload: B before the call
constexpr uint32_t kSentinel = 0x4640e400u;  // 12345.0f: padding columns, must survive

// rows x ld matrix: random bits in the first cols of each row, the sentinel in the rest.
std::vector<uint32_t> random_matrix(int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
    Rng rng{seed};
    std::vector<uint32_t> v(static_cast<size_t>(rows * ld), kSentinel);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) v[static_cast<size_t>(r * ld + c)] = rng.next();
    return v;
}

// Compares got with want (both rows x ld); reports the count and the first mismatch, naming its role.
void expect_bits_equal(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want, int64_t rows, int64_t cols,
                       int64_t ld, const std::string& what) {
    int64_t wrong = 0, padding = 0;
    std::ostringstream first;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < ld; ++c) {
            const size_t i = static_cast<size_t>(r * ld + c);
            if (got[i] == want[i]) continue;
            if (wrong + padding == 0)
                first << std::hex << (c < cols ? "" : "padding ") << "(" << std::dec << r << ", " << c << ") = 0x"
                      << std::hex << got[i] << ", expected 0x" << want[i]
                      << (got[i] == kPoison ? " (still the poison: never written)" : "");
            (c < cols ? wrong : padding)++;
        }
    EXPECT_EQ(wrong + padding, 0) << what << ": " << wrong << " wrong elements, " << padding
                                  << " padding elements changed; first: " << first.str();
}

// Creates an instance and destroys it at scope exit.
struct Instance {
    const kreg_kernel_info& info;
    void* ptr = nullptr;
    char error[1024] = "";
    explicit Instance(const kreg_kernel_info& i) : info(i) {
        if (info.create(&ptr, error, sizeof error) != KREG_STATUS_OK) ptr = nullptr;
    }
    ~Instance() {
        if (ptr != nullptr) info.destroy(ptr);
    }
};

struct Stream {
    cudaStream_t s = nullptr;
    Stream() { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
    ~Stream() { cudaStreamDestroy(s); }
};

// Common preconditions: a device, the kernel's compute capability. Returns why not, or "".
std::string cannot_run(const kreg_kernel_info& info) {
    if (std::string why = no_device_reason(); !why.empty()) return why;
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess)
        return "cannot read the device's properties";
    if (prop.major * 10 + prop.minor < info.min_compute_capability)
        return std::string(info.name) + " needs compute capability " + std::to_string(info.min_compute_capability);
    return "";
}

// The launch a kernel describes is one its device function can take (block size, grid limits).
void expect_launch_fits(const kreg_kernel_info& info, const kreg_launch_info& launch) {
    if (launch.device_function == nullptr) return;
    cudaFuncAttributes attr{};
    ASSERT_EQ(cudaFuncGetAttributes(&attr, launch.device_function), cudaSuccess) << info.name;
    EXPECT_LE(launch.block[0] * launch.block[1] * launch.block[2], static_cast<uint32_t>(attr.maxThreadsPerBlock))
        << info.name << ": described block is larger than the kernel allows";
    EXPECT_LE(launch.grid[1], 65535u) << info.name << ": gridDim.y above CUDA's limit";
    EXPECT_LE(launch.grid[2], 65535u) << info.name << ": gridDim.z above CUDA's limit";
}

// ---------------------------------------------------------------------------------------------------
// Transpose

struct TransposeShape {
    int64_t m, n;
    bool padded_ld;  // lda = n + 3, ldb = m + 5: most rows misaligned for 16-byte access
};

const std::vector<TransposeShape>& transpose_shapes() {
    static const std::vector<TransposeShape> s = {
        {1, 1, false},
        {1, 1, true},
        {1, 300, false},
        {300, 1, false},
        {1, 4099, true},
        {17, 33, false},
        {33, 17, true},
        {31, 63, false},
        {64, 64, false},
        {64, 64, true},
        {65, 129, true},
        {4097, 1025, false},
        {1025, 4097, true},
        {1000, 3000, false},
        // Taller than 65535 blocks of 64 rows: the grid's y is capped and the kernels loop over row tiles.
        {4200000, 3, false},
    };
    return s;
}

struct TransposeCase {
    const LoadedKernel* kernel;
    TransposeShape shape;
    uint64_t seed;
};

void PrintTo(const TransposeCase& c, std::ostream* os) {
    *os << c.kernel->info->name << " " << c.shape.m << "x" << c.shape.n << (c.shape.padded_ld ? " padded ld" : "")
        << " seed " << c.seed;
}

std::vector<TransposeCase> transpose_cases() {
    std::vector<TransposeCase> out;
    uint64_t index = 0;
    for (const LoadedKernel& k : registry().transposes)
        if (!is_copy_reference(*k.info))
            for (const TransposeShape& s : transpose_shapes()) out.push_back({&k, s, 0x7472616eull * 7919 + index++});
    return out;
}

std::string sanitize(std::string name) {
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name;
}

std::string transpose_case_name(const testing::TestParamInfo<TransposeCase>& info) {
    const TransposeShape& s = info.param.shape;
    return sanitize(std::string(info.param.kernel->info->name) + "_" + std::to_string(s.m) + "x" + std::to_string(s.n) +
                    (s.padded_ld ? "_ld" : ""));
}

// Runs one transpose of A (m x n, lda) into B (n x m, ldb); returns B and A as they are after the call.
void run_transpose(const kreg_kernel_info& info, int64_t m, int64_t n, int64_t lda, int64_t ldb,
                   const std::vector<uint32_t>& a, std::vector<uint32_t>& b_out, std::vector<uint32_t>& a_out) {
    std::vector<uint32_t> b0(static_cast<size_t>(n * ldb), kSentinel);
    for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < m; ++c) b0[static_cast<size_t>(r * ldb + c)] = kPoison;
    DeviceBuffer d_a(a.size() * 4), d_b(b0.size() * 4);
    ASSERT_FALSE(testing::Test::HasFailure());
    CUDA_ASSERT(cudaMemcpy(d_a.ptr, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaMemcpy(d_b.ptr, b0.data(), b0.size() * 4, cudaMemcpyHostToDevice));
    // A copy from pageable memory may still be landing when cudaMemcpy returns, and the kernel runs on a
    // non-blocking stream, which does not wait for it: wait here.
    CUDA_ASSERT(cudaDeviceSynchronize());
    Stream stream;
    Instance instance(info);
    ASSERT_NE(instance.ptr, nullptr) << info.name << ": create failed: " << instance.error;
    kreg_transpose_args args{};
    args.struct_size = sizeof args;
    args.m = m;
    args.n = n;
    args.lda = lda;
    args.ldb = ldb;
    args.dtype = KREG_DTYPE_FP32;
    args.a = d_a.ptr;
    args.b = d_b.ptr;
    args.stream = stream.s;
    char error[1024] = "";
    if (info.describe_transpose_launch != nullptr) {
        kreg_launch_info launch{};
        launch.struct_size = sizeof launch;
        if (info.describe_transpose_launch(instance.ptr, &args, &launch, error, sizeof error) == KREG_STATUS_OK)
            expect_launch_fits(info, launch);
    }
    ASSERT_EQ(info.run_transpose(instance.ptr, &args, error, sizeof error), KREG_STATUS_OK)
        << info.name << ": run_transpose failed: " << error;
    CUDA_ASSERT(cudaStreamSynchronize(stream.s));
    CUDA_ASSERT(cudaGetLastError());
    b_out.resize(b0.size());
    a_out.resize(a.size());
    CUDA_ASSERT(cudaMemcpy(b_out.data(), d_b.ptr, b0.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_ASSERT(cudaMemcpy(a_out.data(), d_a.ptr, a.size() * 4, cudaMemcpyDeviceToHost));
}

class CudaTransposeTest : public testing::TestWithParam<TransposeCase> {};

TEST_P(CudaTransposeTest, BitExact) {
    const TransposeCase& tc = GetParam();
    const kreg_kernel_info& info = *tc.kernel->info;
    const TransposeShape& s = tc.shape;
    if (const std::string why = cannot_run(info); !why.empty()) GTEST_SKIP() << why;
    if (s.m % info.m_multiple || s.n % info.n_multiple || (info.max_m && s.m > info.max_m) ||
        (info.max_n && s.n > info.max_n))
        GTEST_SKIP() << info.name << " declares a shape constraint this shape breaks";
    if (s.padded_ld && !(info.flags & KREG_KERNEL_HONOURS_LEADING_DIMS))
        GTEST_SKIP() << info.name << " does not declare leading-dimension support";

    const int64_t m = s.m, n = s.n, lda = s.padded_ld ? n + 3 : n, ldb = s.padded_ld ? m + 5 : m;
    const std::vector<uint32_t> a = random_matrix(m, n, lda, tc.seed);
    std::vector<uint32_t> b, a_after;
    run_transpose(info, m, n, lda, ldb, a, b, a_after);
    if (HasFatalFailure()) return;

    std::vector<uint32_t> want(static_cast<size_t>(n * ldb), kSentinel);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) want[static_cast<size_t>(j * ldb + i)] = a[static_cast<size_t>(i * lda + j)];
    const std::string what = std::string(info.name) + " " + std::to_string(m) + "x" + std::to_string(n) +
                             " lda=" + std::to_string(lda) + " ldb=" + std::to_string(ldb) + " B";
    expect_bits_equal(b, want, n, m, ldb, what);
    expect_bits_equal(a_after, a, m, n, lda, std::string(info.name) + " A (must not be written)");
}

INSTANTIATE_TEST_SUITE_P(AllCudaTransposes, CudaTransposeTest, testing::ValuesIn(transpose_cases()),
                         transpose_case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaTransposeTest);

// The ceiling reference writes A's M*N elements, in A's order, into B's N rows of M.
TEST(CudaCopyReference, CopiesElementsInOrder) {
    const LoadedKernel* copy = nullptr;
    for (const LoadedKernel& k : registry().transposes)
        if (is_copy_reference(*k.info)) copy = &k;
    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_NE(copy, nullptr) << "cuda_copy not found in " << KREG_PLUGIN_DIR;
    struct Shape {
        int64_t m, n, lda, ldb;
    };
    uint64_t seed = 99;
    for (const Shape& s : {Shape{1, 1, 1, 1}, Shape{17, 33, 33, 17}, Shape{1024, 1024, 1024, 1024},
                           Shape{4097, 1025, 1025, 4097}, Shape{33, 17, 20, 40}, Shape{1, 301, 301, 1}}) {
        const std::vector<uint32_t> a = random_matrix(s.m, s.n, s.lda, seed++);
        std::vector<uint32_t> b, a_after;
        run_transpose(*copy->info, s.m, s.n, s.lda, s.ldb, a, b, a_after);
        if (HasFatalFailure()) return;
        std::vector<uint32_t> want(static_cast<size_t>(s.n * s.ldb), kSentinel);
        for (int64_t e = 0; e < s.m * s.n; ++e)
            want[static_cast<size_t>((e / s.m) * s.ldb + e % s.m)] =
                a[static_cast<size_t>((e / s.n) * s.lda + e % s.n)];
        expect_bits_equal(b, want, s.n, s.m, s.ldb,
                          "cuda_copy " + std::to_string(s.m) + "x" + std::to_string(s.n) +
                              " lda=" + std::to_string(s.lda) + " ldb=" + std::to_string(s.ldb));
    }
}

// ---------------------------------------------------------------------------------------------------
// Block transpose

struct BlockCase {
    const LoadedKernel* kernel;
    int64_t block, m, n, lda;
    uint64_t seed;
};

void PrintTo(const BlockCase& c, std::ostream* os) {
    *os << c.kernel->info->name << " block " << c.block << " " << c.m << "x" << c.n << " lda " << c.lda << " seed "
        << c.seed;
}

std::vector<BlockCase> block_cases() {
    std::vector<BlockCase> out;
    uint64_t index = 0;
    for (const LoadedKernel& k : registry().block_transposes) {
        const int64_t max_block = k.info->max_block > 0 ? std::min<int64_t>(k.info->max_block, 32) : 32;
        const int64_t multiple = std::max<int64_t>(k.info->block_multiple, 1);
        for (int64_t b = multiple; b <= max_block; b += multiple) {
            out.push_back({&k, b, 3 * b, 5 * b, 5 * b, 0x626c6bull * 131 + index++});         // packed, odd tile counts
            out.push_back({&k, b, 37 * b, 23 * b, 23 * b + 3, 0x626c6bull * 131 + index++});  // lda > n
        }
        // More than 65535 block rows: the grid's y is capped and the kernel loops.
        if (multiple == 1) out.push_back({&k, 1, 70001, 3, 3, 0x626c6bull * 131 + index++});
    }
    return out;
}

std::string block_case_name(const testing::TestParamInfo<BlockCase>& info) {
    const BlockCase& c = info.param;
    return sanitize(std::string(c.kernel->info->name) + "_block" + std::to_string(c.block) + "_" + std::to_string(c.m) +
                    "x" + std::to_string(c.n) + (c.lda > c.n ? "_ld" : ""));
}

class CudaBlockTransposeTest : public testing::TestWithParam<BlockCase> {};

TEST_P(CudaBlockTransposeTest, BitExact) {
    const BlockCase& tc = GetParam();
    const kreg_kernel_info& info = *tc.kernel->info;
    if (const std::string why = cannot_run(info); !why.empty()) GTEST_SKIP() << why;
    if (tc.lda > tc.n && !(info.flags & KREG_KERNEL_HONOURS_LEADING_DIMS))
        GTEST_SKIP() << info.name << " does not declare leading-dimension support";
    const int64_t m = tc.m, n = tc.n, lda = tc.lda, bs = tc.block;
    const std::vector<uint32_t> a = random_matrix(m, n, lda, tc.seed);

    DeviceBuffer d_a(a.size() * 4);
    ASSERT_FALSE(HasFailure());
    CUDA_ASSERT(cudaMemcpy(d_a.ptr, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaDeviceSynchronize());  // as in run_transpose: the copy may still be landing
    Stream stream;
    Instance instance(info);
    ASSERT_NE(instance.ptr, nullptr) << info.name << ": create failed: " << instance.error;
    kreg_block_transpose_args args{};
    args.struct_size = sizeof args;
    args.m = m;
    args.n = n;
    args.lda = lda;
    args.block = bs;
    args.dtype = KREG_DTYPE_FP32;
    args.a = d_a.ptr;
    args.stream = stream.s;
    char error[1024] = "";
    if (info.describe_block_transpose_launch != nullptr) {
        kreg_launch_info launch{};
        launch.struct_size = sizeof launch;
        if (info.describe_block_transpose_launch(instance.ptr, &args, &launch, error, sizeof error) == KREG_STATUS_OK)
            expect_launch_fits(info, launch);
    }
    ASSERT_EQ(info.run_block_transpose(instance.ptr, &args, error, sizeof error), KREG_STATUS_OK)
        << info.name << ": run_block_transpose failed: " << error;
    CUDA_ASSERT(cudaStreamSynchronize(stream.s));
    CUDA_ASSERT(cudaGetLastError());
    std::vector<uint32_t> got(a.size());
    CUDA_ASSERT(cudaMemcpy(got.data(), d_a.ptr, a.size() * 4, cudaMemcpyDeviceToHost));

    std::vector<uint32_t> want = a;  // padding columns unchanged
    for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) {
            const int64_t bi = r / bs, i = r % bs, bj = c / bs, j = c % bs;
            want[static_cast<size_t>(r * lda + c)] = a[static_cast<size_t>((bi * bs + j) * lda + bj * bs + i)];
        }
    expect_bits_equal(got, want, m, n, lda,
                      std::string(info.name) + " block " + std::to_string(bs) + " " + std::to_string(m) + "x" +
                          std::to_string(n) + " lda=" + std::to_string(lda));
}

INSTANTIATE_TEST_SUITE_P(AllCudaBlockTransposes, CudaBlockTransposeTest, testing::ValuesIn(block_cases()),
                         block_case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaBlockTransposeTest);

// Every kernel of the lab is there, and the block transposes cover the lecture's 1..20; without this a
// missing plugin would only mean fewer parameterised tests.
TEST(CudaTransposeRegistry, LabKernelsAreLoaded) {
    if (const std::string why = no_device_reason(); !why.empty()) GTEST_SKIP() << why;
    const Registry& r = registry();
    for (const std::string& e : r.load_errors) ADD_FAILURE() << "plugin failed to load: " << e;
    std::set<std::string> names;
    for (const LoadedKernel& k : r.transposes) names.insert(k.info->name);
    for (const char* expected : {"cuda_t1_naive", "cuda_t2_smem", "cuda_t3_padded", "cuda_t3_padded_dynamic",
                                 "cuda_t4_vectorized", "cuda_copy"})
        EXPECT_EQ(names.count(expected), 1u) << expected << " not found in " << KREG_PLUGIN_DIR;
    std::set<std::string> blocks;
    for (const LoadedKernel& k : r.block_transposes) {
        blocks.insert(k.info->name);
        EXPECT_GE(k.info->max_block, 20) << k.info->name << " must accept every block of the lecture, 1..20";
        EXPECT_LE(k.info->block_multiple, 1) << k.info->name << " must accept every block of the lecture, 1..20";
    }
    for (const char* expected : {"cuda_block_transpose", "cuda_block_transpose_padded"})
        EXPECT_EQ(blocks.count(expected), 1u) << expected << " not found in " << KREG_PLUGIN_DIR;
}

}  // namespace
