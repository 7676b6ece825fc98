#include "measure/host_ceiling.hpp"

#include "common/operation_table.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kreg {
namespace {

using Clock = std::chrono::steady_clock;

// One run of a multiply-add loop: `iterations` rounds over independent accumulators held in registers,
// returning their sum (so the work has a result the compiler must produce). acc = acc * mul + add with
// mul just below 1 converges to add / (1 - mul): no overflow, no subnormals, whatever the count.
using ChunkFn = float (*)(uint64_t iterations, float mul, float add);

struct Variant {
    const char* isa;
    ChunkFn chunk;
    double flops_per_iteration;
};

#if defined(__x86_64__)
// Written out, not as an array: an array of vectors may be kept in memory at -O2, and a loop through
// memory measures store forwarding instead of the FMA units. 16 accumulators cover FMA latency (4-5
// cycles) times FMA ports (2) with room to spare.
#define KREG_ACC16(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define KREG_ACC12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((target("avx512f"))) float chunk_avx512(uint64_t iterations, float mul, float add) {
    const __m512 m = _mm512_set1_ps(mul), a = _mm512_set1_ps(add);
#define DECLARE(i) __m512 acc##i = _mm512_set1_ps(float(i) * 0.01f);
#define STEP(i) acc##i = _mm512_fmadd_ps(acc##i, m, a);
#define SUM(i) sum = _mm512_add_ps(sum, acc##i);
    KREG_ACC16(DECLARE)
    for (uint64_t it = 0; it < iterations; ++it) {
        KREG_ACC16(STEP)
    }
    __m512 sum = _mm512_setzero_ps();
    KREG_ACC16(SUM)
#undef DECLARE
#undef STEP
#undef SUM
    float lanes[16];  // not _mm512_reduce_add_ps: GCC 12's header warns of an uninitialized temporary
    _mm512_storeu_ps(lanes, sum);
    float total = 0;
    for (float v : lanes) total += v;
    return total;
}

// 12 accumulators: with the two constants that is 14 of AVX2's 16 registers.
__attribute__((target("avx2,fma"))) float chunk_avx2(uint64_t iterations, float mul, float add) {
    const __m256 m = _mm256_set1_ps(mul), a = _mm256_set1_ps(add);
#define DECLARE(i) __m256 acc##i = _mm256_set1_ps(float(i) * 0.01f);
#define STEP(i) acc##i = _mm256_fmadd_ps(acc##i, m, a);
#define SUM(i) sum = _mm256_add_ps(sum, acc##i);
    KREG_ACC12(DECLARE)
    for (uint64_t it = 0; it < iterations; ++it) {
        KREG_ACC12(STEP)
    }
    __m256 sum = _mm256_setzero_ps();
    KREG_ACC12(SUM)
#undef DECLARE
#undef STEP
#undef SUM
    float lanes[8];
    _mm256_storeu_ps(lanes, sum);
    float total = 0;
    for (float v : lanes) total += v;
    return total;
}

// Baseline x86-64: no FMA, so a multiply and an add (two FLOPs) per lane, as any kernel there has.
float chunk_sse(uint64_t iterations, float mul, float add) {
    const __m128 m = _mm_set1_ps(mul), a = _mm_set1_ps(add);
#define DECLARE(i) __m128 acc##i = _mm_set1_ps(float(i) * 0.01f);
#define STEP(i) acc##i = _mm_add_ps(_mm_mul_ps(acc##i, m), a);
#define SUM(i) sum = _mm_add_ps(sum, acc##i);
    KREG_ACC12(DECLARE)
    for (uint64_t it = 0; it < iterations; ++it) {
        KREG_ACC12(STEP)
    }
    __m128 sum = _mm_setzero_ps();
    KREG_ACC12(SUM)
#undef DECLARE
#undef STEP
#undef SUM
    float lanes[4];
    _mm_storeu_ps(lanes, sum);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#undef KREG_ACC16
#undef KREG_ACC12

std::vector<Variant> variants() {
    std::vector<Variant> v;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) v.push_back({"avx512f", chunk_avx512, 16 * 16 * 2});
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        v.push_back({"avx2+fma", chunk_avx2, 12 * 8 * 2});
    if (v.empty()) v.push_back({"sse", chunk_sse, 12 * 4 * 2});
    return v;
}
#else
std::vector<Variant> variants() { return {}; }
#endif

// The FLOP/s of `variant` on this host: every hardware thread runs chunks for `warm` (clocks ramp up),
// then for `window`, timing each chunk; the fastest chunk of any thread, times the number of hardware
// threads, is the answer. Not the threads' summed rates: on a busy host (other jobs, other graders) a
// thread gets a share of a core and the sum would understate the peak, making an honest kernel look
// faster than physics; a 10 us chunk, though, mostly runs uninterrupted, and an interrupted one is only
// slower. Where two hardware threads share a core's FMA units this can overstate the peak up to 2x,
// the safe direction for a ceiling.
double measure_variant(const Variant& variant, Clock::duration warm, Clock::duration window) {
    constexpr uint64_t kIterations = 4096;  // ~10 us a chunk
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    // Read through volatile, so the constants are unknown at compile time and nothing folds.
    volatile float mul_source = 0.9999f, add_source = 1e-4f;
    const float mul = mul_source, add = add_source;
    const double chunk_flops = double(kIterations) * variant.flops_per_iteration;
    std::atomic<bool> go{false};
    std::vector<double> best_rates(threads, 0.0);
    std::vector<float> sums(threads, 0.0f);
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            float sum = 0;
            const Clock::time_point warm_end = Clock::now() + warm;
            while (Clock::now() < warm_end) sum += variant.chunk(kIterations, mul, add);
            Clock::time_point before = Clock::now();
            const Clock::time_point end = before + window;
            double best = 0;
            while (before < end) {
                sum += variant.chunk(kIterations, mul, add);
                const Clock::time_point after = Clock::now();
                const double seconds = std::chrono::duration<double>(after - before).count();
                if (seconds > 0) best = std::max(best, chunk_flops / seconds);
                before = after;
            }
            best_rates[t] = best;
            sums[t] = sum;
        });
    }
    go.store(true, std::memory_order_release);
    for (std::thread& t : pool) t.join();
    volatile float sink = 0;
    for (float s : sums) sink = sink + s;
    return *std::max_element(best_rates.begin(), best_rates.end()) * double(threads);
}

}  // namespace

double measure_host_fp32_flops() {
    const std::vector<Variant> candidates = variants();
    if (candidates.empty()) return 0.0;
    // ~150 ms in all, shared by the variants.
    const auto window = std::chrono::milliseconds(130 / int(candidates.size()));
    double best = 0;
    for (const Variant& v : candidates)
        best = std::max(best, measure_variant(v, std::chrono::milliseconds(10), window));
    return best;
}

void annotate_cpu_roofline(Record& r, double host_flops) {
    if (r.status != RowStatus::ok || !r.stats || !(r.stats->median_ms > 0)) return;
    if (!(host_flops > 0) || !std::isfinite(host_flops)) {
        RooflineEvidence unmeasured;
        unmeasured.ceiling = "host_fp32";
        unmeasured.unavailable = "the host's fp32 peak could not be measured";
        r.extra.roofline = std::move(unmeasured);
        return;
    }
    const double flops = work_flops(r.operation, r.shape);
    const double median_ms = r.stats->median_ms;
    const double achieved_tflops = flops / (median_ms * 1e-3) / 1e12;
    const double peak_tflops = host_flops / 1e12;
    const double floor_ms = kCpuFloorSafety * flops / host_flops * 1e3;
    RooflineEvidence roof;
    roof.ceiling = "host_fp32";
    roof.flops = flops;
    if (std::isfinite(achieved_tflops)) roof.achieved_tflops = achieved_tflops;
    roof.measured_peak_tflops = peak_tflops;
    if (std::isfinite(achieved_tflops / peak_tflops)) roof.fraction_of_measured_peak = achieved_tflops / peak_tflops;
    roof.peak_tflops = peak_tflops;
    roof.safety_factor = kCpuFloorSafety;
    roof.floor_ms = floor_ms;
    roof.faster_than_floor = median_ms < floor_ms;
    r.extra.roofline = std::move(roof);
}

}  // namespace kreg
