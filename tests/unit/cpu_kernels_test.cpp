// The CPU plugins, loaded the way a runner would, checked against the fp64 reference on awkward
// shapes; and the CPU job runner on real and deliberately broken kernels.
#include "fake_kernel.hpp"
#include "record_json.hpp"
#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"
#include "pipeline/job_runner.hpp"

#include <kreg/abi.h>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace kreg {
namespace {

// A plugin .so opened with plain dlopen, its one kernel created; closed in reverse order.
class OpenedKernel {
public:
    explicit OpenedKernel(const std::string& plugin) : path_(std::string(KREG_PLUGIN_DIR) + "/" + plugin + ".so") {
        handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
        auto entry = reinterpret_cast<kreg_plugin_entry_fn>(dlsym(handle_, KREG_ENTRY_POINT_NAME));
        if (entry == nullptr) throw std::runtime_error("no entry point in " + path_);
        descriptor_ = entry();
        if (descriptor_ == nullptr || descriptor_->kernel_count != 1) throw std::runtime_error("bad descriptor");
        info_ = &descriptor_->kernels[0];
        char error[256] = {};
        if (info_->create(&instance_, error, sizeof error) != KREG_STATUS_OK)
            throw std::runtime_error(std::string("create: ") + error);
    }
    ~OpenedKernel() {
        if (instance_ != nullptr) info_->destroy(instance_);
        if (handle_ != nullptr) dlclose(handle_);
    }
    OpenedKernel(const OpenedKernel&) = delete;
    OpenedKernel& operator=(const OpenedKernel&) = delete;

    const kreg_plugin_descriptor& descriptor() const { return *descriptor_; }
    const kreg_kernel_info& info() const { return *info_; }
    LoadedKernel loaded() const { return LoadedKernel{info_, instance_, descriptor_->plugin_name, path_}; }

    kreg_status run(const kreg_gemm_args& args, std::string* message = nullptr) const {
        char error[512] = {};
        const kreg_status status = info_->run_gemm(instance_, &args, error, sizeof error);
        if (message != nullptr) *message = error;
        return status;
    }

private:
    std::string path_;
    void* handle_ = nullptr;
    const kreg_plugin_descriptor* descriptor_ = nullptr;
    const kreg_kernel_info* info_ = nullptr;
    void* instance_ = nullptr;
};

kreg_gemm_args make_args(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, const float* a,
                         const float* b, float* c, double alpha = 1.0, double beta = 0.0) {
    kreg_gemm_args args{};
    args.struct_size = sizeof args;
    args.m = m, args.n = n, args.k = k;
    args.lda = lda, args.ldb = ldb, args.ldc = ldc;
    args.alpha = alpha, args.beta = beta;
    args.dtype = KREG_DTYPE_FP32;
    args.a = a, args.b = b, args.c = c;
    return args;
}

class CpuKernel : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuKernel, DescriptorDescribesTheKernel) {
    OpenedKernel kernel(GetParam());
    const auto& d = kernel.descriptor();
    EXPECT_EQ(d.struct_size, sizeof(kreg_plugin_descriptor));
    EXPECT_EQ(d.abi_major, KREG_ABI_MAJOR);
    EXPECT_STREQ(d.plugin_name, GetParam());
    EXPECT_STREQ(d.plugin_version, "1.0.0");
    const auto& info = kernel.info();
    EXPECT_EQ(info.struct_size, sizeof(kreg_kernel_info));
    EXPECT_STREQ(info.name, GetParam());
    EXPECT_GT(std::strlen(info.description), 0u);
    EXPECT_EQ(info.operation, KREG_OPERATION_GEMM);
    EXPECT_EQ(info.backend, KREG_BACKEND_CPU);
    EXPECT_EQ(info.dtypes, KREG_DTYPE_BIT(KREG_DTYPE_FP32));
    EXPECT_EQ(info.flags, KREG_KERNEL_HONOURS_ALPHA_BETA | KREG_KERNEL_HONOURS_LEADING_DIMS);
    EXPECT_EQ(info.m_multiple, 1);
    EXPECT_EQ(info.max_m, 0);
    ASSERT_NE(info.model_global_bytes, nullptr);
    EXPECT_GE(info.model_global_bytes(64, 64, 64, KREG_DTYPE_FP32), 3.0 * 64 * 64 * 4);
}

struct ShapeCase {
    int64_t m, n, k;
};

TEST_P(CpuKernel, MatchesReferenceOnAwkwardShapes) {
    OpenedKernel kernel(GetParam());
    const ShapeCase shapes[] = {{1, 1, 1},       {1, 37, 1},     {19, 23, 1},      {17, 17, 17}, {33, 65, 17},
                                {100, 200, 300}, {257, 129, 65}, {130, 1030, 300}, {5, 3, 1000}};
    for (const auto& s : shapes) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
        std::vector<float> a(size_t(s.m * s.k)), b(size_t(s.k * s.n)), c(size_t(s.m * s.n));
        fill_uniform(a.data(), a.size(), 11, 0);
        fill_uniform(b.data(), b.size(), 11, 1);
        poison_nan(c.data(), c.size());  // beta == 0: C must be written, never read
        std::string message;
        ASSERT_EQ(kernel.run(make_args(s.m, s.n, s.k, s.k, s.n, s.n, a.data(), b.data(), c.data()), &message),
                  KREG_STATUS_OK)
            << message;
        const VerifyResult r = verify_gemm(a.data(), b.data(), c.data(), s.m, s.n, s.k, s.k, s.n, s.n, 1e-5, 1);
        EXPECT_TRUE(r.passed) << r.reason;
    }
}

TEST_P(CpuKernel, HonoursAlphaBetaAndPaddedLeadingDims) {
    OpenedKernel kernel(GetParam());
    const ShapeCase shapes[] = {{37, 45, 29}, {150, 300, 270}};
    const double alpha = 1.5, beta = -0.75;
    const float sentinel = 12345.0f;
    for (const auto& s : shapes) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
        const int64_t lda = s.k + 3, ldb = s.n + 5, ldc = s.n + 7;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        // Padding of A and B holds NaN: a kernel that reads it produces NaN somewhere.
        std::vector<float> a(size_t(s.m * lda), nan), b(size_t(s.k * ldb), nan), c(size_t(s.m * ldc), sentinel);
        std::vector<float> c0(size_t(s.m * s.n));
        fill_uniform(c0.data(), c0.size(), 13, 2);
        for (int64_t i = 0; i < s.m; ++i) {
            fill_uniform(&a[size_t(i * lda)], size_t(s.k), 13, 100 + uint64_t(i));
            std::copy_n(&c0[size_t(i * s.n)], s.n, &c[size_t(i * ldc)]);
        }
        for (int64_t q = 0; q < s.k; ++q) fill_uniform(&b[size_t(q * ldb)], size_t(s.n), 13, 100000 + uint64_t(q));

        std::string message;
        ASSERT_EQ(
            kernel.run(make_args(s.m, s.n, s.k, lda, ldb, ldc, a.data(), b.data(), c.data(), alpha, beta), &message),
            KREG_STATUS_OK)
            << message;

        // alpha*A*B + beta*C0 is the plain product [alpha*A | beta*C0] * [B ; I], which verify_gemm checks.
        const int64_t k2 = s.k + s.n;
        std::vector<float> a2(size_t(s.m * k2)), b2(size_t(k2 * s.n), 0.0f);
        for (int64_t i = 0; i < s.m; ++i) {
            for (int64_t q = 0; q < s.k; ++q) a2[size_t(i * k2 + q)] = float(alpha * a[size_t(i * lda + q)]);
            for (int64_t j = 0; j < s.n; ++j) a2[size_t(i * k2 + s.k + j)] = float(beta * c0[size_t(i * s.n + j)]);
        }
        for (int64_t q = 0; q < s.k; ++q) std::copy_n(&b[size_t(q * ldb)], s.n, &b2[size_t(q * s.n)]);
        for (int64_t j = 0; j < s.n; ++j) b2[size_t((s.k + j) * s.n + j)] = 1.0f;
        const VerifyResult r = verify_gemm(a2.data(), b2.data(), c.data(), s.m, s.n, k2, k2, s.n, ldc, 1e-5, 1);
        EXPECT_TRUE(r.passed) << r.reason;

        for (int64_t i = 0; i < s.m; ++i)
            for (int64_t j = s.n; j < ldc; ++j)
                ASSERT_EQ(c[size_t(i * ldc + j)], sentinel) << "wrote padding at (" << i << ", " << j << ")";
    }
}

TEST_P(CpuKernel, RejectsWhatItDoesNotSupport) {
    OpenedKernel kernel(GetParam());
    std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 0.0f);
    std::string message;
    auto args = make_args(4, 4, 4, 4, 4, 4, a.data(), b.data(), c.data());
    args.dtype = KREG_DTYPE_BF16;
    EXPECT_EQ(kernel.run(args, &message), KREG_STATUS_UNSUPPORTED);
    EXPECT_FALSE(message.empty());
    args = make_args(4, 4, 4, 3, 4, 4, a.data(), b.data(), c.data());
    EXPECT_EQ(kernel.run(args, &message), KREG_STATUS_INVALID_ARGUMENT);
    EXPECT_FALSE(message.empty());
    args = make_args(0, 4, 4, 4, 4, 4, a.data(), b.data(), c.data());
    EXPECT_EQ(kernel.run(args, &message), KREG_STATUS_INVALID_ARGUMENT);
}

Job small_job(const std::string& kernel, uint64_t id = 3) {
    Job job;
    job.id = id;
    job.kernel = kernel;
    job.shape = Shape{64, 48, 40};
    job.seed = 42;
    job.settings.warmup = 1;
    job.settings.repeats = 5;
    return job;
}

TEST_P(CpuKernel, JobRunnerProducesACompleteRecord) {
    OpenedKernel kernel(GetParam());
    const Job job = small_job(GetParam());
    const Record r = run_cpu_gemm_job(job, kernel.loaded());
    EXPECT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_TRUE(r.reason.empty());
    EXPECT_EQ(r.job_id, 3u);
    EXPECT_EQ(r.kernel, GetParam());
    EXPECT_EQ(r.plugin, GetParam());
    EXPECT_EQ(r.backend, Backend::cpu);
    EXPECT_EQ(r.shape, job.shape);
    EXPECT_EQ(r.timer, "host");
    EXPECT_EQ(r.samples_ms.size(), 5u);
    ASSERT_TRUE(r.stats.has_value());
    EXPECT_EQ(r.stats->count, 5);
    EXPECT_GT(r.stats->median_ms, 0.0);
    EXPECT_LE(r.stats->min_ms, r.stats->median_ms);
    ASSERT_TRUE(r.gflops.has_value());
    EXPECT_GT(*r.gflops, 0.0);
    ASSERT_TRUE(r.max_rel_err.has_value());
    EXPECT_LT(*r.max_rel_err, 1e-5);
    ASSERT_TRUE(r.tolerance.has_value());
    EXPECT_EQ(*r.tolerance, 1e-5);
    ASSERT_TRUE(extra_json(r).contains("model_bytes"));
    EXPECT_GT(extra_json(r)["model_bytes"].get<double>(), 0.0);
}

TEST_P(CpuKernel, JobRunnerSkipsDtypesOtherThanFp32) {
    OpenedKernel kernel(GetParam());
    Job job = small_job(GetParam());
    job.dtype = DType::bf16;
    const Record r = run_cpu_gemm_job(job, kernel.loaded());
    EXPECT_EQ(r.status, RowStatus::skipped);
    EXPECT_NE(r.reason.find("bf16"), std::string::npos) << r.reason;
    EXPECT_TRUE(r.samples_ms.empty());
}

INSTANTIATE_TEST_SUITE_P(Plugins, CpuKernel, ::testing::Values("cpu_naive", "cpu_blocked"),
                         [](const auto& info) { return std::string(info.param); });

// Deliberately broken kernels, as bare ABI structs: the runner must report each one correctly.
void naive_product(const kreg_gemm_args* args, int64_t skipped_k) {
    const auto* a = static_cast<const float*>(args->a);
    const auto* b = static_cast<const float*>(args->b);
    auto* c = static_cast<float*>(args->c);
    for (int64_t i = 0; i < args->m; ++i)
        for (int64_t j = 0; j < args->n; ++j) {
            float sum = 0;
            for (int64_t q = 0; q < args->k; ++q)
                if (q != skipped_k) sum += a[i * args->lda + q] * b[q * args->ldb + j];
            c[i * args->ldc + j] = sum;
        }
}

kreg_status skips_one_k_term(void*, const kreg_gemm_args* args, char*, size_t) {
    naive_product(args, args->k / 2);
    return KREG_STATUS_OK;
}
// Correct on its first call, writes nothing afterwards (as if it cached "the answer").
kreg_status lazy_after_first_call(void* instance, const kreg_gemm_args* args, char*, size_t) {
    if ((*static_cast<int*>(instance))++ == 0) naive_product(args, -1);
    return KREG_STATUS_OK;
}
kreg_status fails_at_runtime(void*, const kreg_gemm_args*, char* error, size_t size) {
    std::snprintf(error, size, "boom");
    return KREG_STATUS_RUNTIME_ERROR;
}
kreg_status fails_on_third_call(void* instance, const kreg_gemm_args* args, char* error, size_t size) {
    if (++*static_cast<int*>(instance) >= 3) {
        std::snprintf(error, size, "ran out of luck");
        return KREG_STATUS_INTERNAL_ERROR;
    }
    naive_product(args, -1);
    return KREG_STATUS_OK;
}

// A fake kernel at a shape with a long K, so skipping one K term is well above the fp32 tolerance.
Record run_fake(decltype(kreg_kernel_info::run_gemm) run, bool verify = true) {
    Job job = small_job("fake");
    job.shape = Shape{24, 20, 512};
    job.settings.verify = verify;
    return test::run_fake(run, job);
}

TEST(CpuJobRunner, ReportsWrongResultForASkippedKTerm) {
    const Record r = run_fake(&skips_one_k_term);
    EXPECT_EQ(r.status, RowStatus::wrong_result);
    EXPECT_NE(r.reason.find("first call: error"), std::string::npos) << r.reason;
    ASSERT_TRUE(r.max_rel_err.has_value());
    EXPECT_GT(*r.max_rel_err, 1e-5);
    EXPECT_TRUE(r.samples_ms.empty());  // not timed
}

TEST(CpuJobRunner, VerifyOffDoesNotCheck) {
    const Record r = run_fake(&skips_one_k_term, false);
    EXPECT_EQ(r.status, RowStatus::ok) << r.reason;
    EXPECT_FALSE(r.max_rel_err.has_value());
    EXPECT_EQ(r.samples_ms.size(), 5u);
}

TEST(CpuJobRunner, CatchesAKernelThatStopsWritingWhenTimed) {
    const Record r = run_fake(&lazy_after_first_call);
    EXPECT_EQ(r.status, RowStatus::wrong_result);
    // Caught at the first call that skips, not only by the last timed call's check.
    // (0, 0) when C started as NaN; with a finite fill, the first element whose fill no result can equal.
    EXPECT_NE(r.reason.find("warm-up call 1: unwritten element at ("), std::string::npos) << r.reason;
}

TEST(CpuJobRunner, ReportsKernelErrorsWithTheirMessage) {
    Record r = run_fake(&fails_at_runtime);
    EXPECT_EQ(r.status, RowStatus::failed);
    EXPECT_EQ(r.reason, "first call: kernel returned RUNTIME_ERROR: boom");
    EXPECT_EQ(r.plugin, "fakes");
    EXPECT_EQ(r.plugin_path, "/nowhere/fakes.so");

    r = run_fake(&fails_on_third_call);
    EXPECT_EQ(r.status, RowStatus::failed);
    EXPECT_EQ(r.reason, "timed call 1: kernel returned INTERNAL_ERROR: ran out of luck");
}

}  // namespace
}  // namespace kreg
