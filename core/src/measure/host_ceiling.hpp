// The CPU's roofline for grading: a measured fp32 FLOP/s ceiling of this host, and the evidence that
// flags a CPU row faster than that ceiling allows, in the same shape as the CUDA one (roofline.hpp), so
// judge_performance (grade/verdict.hpp) treats both alike.
#pragma once

#include "common/job.hpp"

namespace kreg {

// Peak fp32 FLOP/s of this host, measured: every hardware thread runs a register-only loop of
// independent multiply-adds (16 accumulators, far more than FMA latency times FMA ports) for ~150 ms
// in all, in the widest vector ISA the CPU has (x86-64: AVX-512F, AVX2+FMA, else SSE; AVX2 is also
// measured where AVX-512 exists, since a core with one 512-bit FMA unit may clock AVX2 higher). The
// result is the fastest ~10 us chunk any thread ran, times the hardware threads: a busy host (other
// graders, the workers) slows threads down but not an uninterrupted chunk, so the ceiling does not
// drop under load. An upper bound on what a GEMM can sustain (up to 2x over where SMT threads share
// FMA units), as the ceiling of a "faster than physics" check must be. 0 where no loop exists for the
// architecture (not x86-64).
double measure_host_fp32_flops();

// For a CPU row with status ok and timing stats, sets r.extra.roofline (RooflineEvidence) to:
//   ceiling                "host_fp32"
//   flops                  2 M N K
//   achieved_tflops        flops / median
//   measured_peak_tflops   host_flops / 1e12; peak_tflops the same (the roof)
//   fraction_of_measured_peak  achieved / measured peak
//   safety_factor          kCpuFloorSafety
//   floor_ms               kCpuFloorSafety * flops / host_flops: the time at the measured peak, halved
//                          for turbo and measurement error
//   faster_than_floor      median < floor_ms
// host_flops <= 0 (unmeasured) sets only ceiling and unavailable ("...") instead, so the evidence says the check was
// not made. Rows that are not ok, or have no timing, are left untouched.
inline constexpr double kCpuFloorSafety = 0.5;
void annotate_cpu_roofline(Record& r, double host_flops);

}  // namespace kreg
