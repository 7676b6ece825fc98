#include "measure/output_export.hpp"

#include "measure/anticheat.hpp"
#include "measure/sampler.hpp"
#include "verify/random_fill.hpp"
#include "verify/verify_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace kreg {
namespace fs = std::filesystem;
namespace {
std::string call_file(const std::string& dir, uint64_t n) { return dir + "/call-" + std::to_string(n) + ".f32"; }
}  // namespace

void export_call_output(const std::string& dir, uint64_t call_number, const float* c, size_t count) {
    std::ofstream out(call_file(dir, call_number), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(c), std::streamsize(count * sizeof(float)));
    if (!out) throw std::runtime_error("cannot write the output of call " + std::to_string(call_number) + " to " + dir);
}

TrustedCheck check_exported_outputs(const Job& job, const std::string& dir, int expected_calls) {
    TrustedCheck check;
    const int64_t m = job.shape.m, n = job.shape.n, k = job.shape.k;
    const double tolerance = job.settings.tolerance.value_or(default_tolerance(job.dtype));
    std::error_code ec;
    long files = 0;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) ++files;
    if (ec) {
        check.reason = "cannot read the exported outputs in " + dir + ": " + ec.message();
        return check;
    }
    if (files != expected_calls) {
        check.reason = "the worker made " + std::to_string(expected_calls) + " calls but left " + std::to_string(files) +
                       " files in " + dir;
        return check;
    }
    std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
    const int warmup = std::max(0, job.settings.warmup);
    for (int call = 0; call < expected_calls; ++call) {
        const CallSite site = call == 0        ? CallSite{CallSite::Role::checked, 0}
                              : call <= warmup ? CallSite{CallSite::Role::warmup, call - 1}
                                               : CallSite{CallSite::Role::timed, call - 1 - warmup};
        const std::string label = site.label();
        std::ifstream in(call_file(dir, uint64_t(call)), std::ios::binary);
        in.read(reinterpret_cast<char*>(c.data()), std::streamsize(c.size() * sizeof(float)));
        if (!in || in.gcount() != std::streamsize(c.size() * sizeof(float)) || in.peek() != EOF) {
            check.reason = label + ": its output is missing or has the wrong size";
            return check;
        }
        fill_uniform(a.data(), a.size(), job.seed, strict_input_stream(job.id, uint64_t(call), 0));
        fill_uniform(b.data(), b.size(), job.seed, strict_input_stream(job.id, uint64_t(call), 1));
        const VerifyResult v = verify_gemm(a.data(), b.data(), c.data(), m, n, k, k, n, n, tolerance,
                                           job.seed ^ (0x5bd1e995ULL * uint64_t(call + 1)));
        ++check.calls_checked;
        if (std::isfinite(v.max_rel_err)) check.max_rel_err = std::max(check.max_rel_err, v.max_rel_err);
        if (!v.passed) {
            check.reason = label + ": " + v.reason;
            return check;
        }
    }
    check.passed = true;
    return check;
}

}  // namespace kreg
