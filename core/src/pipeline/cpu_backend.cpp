// The host backend of the measurement pipeline: operands in host memory, the host clock, no caches to
// flush (the CPU's are left as they are) and nothing to wait for (a call is synchronous).
//
// Every run places each C, and the storage of each A and B, in a mapping of its own between large
// inaccessible regions (measure/guard_pages.hpp, far_guard_bytes): a write past C's end kills the worker
// at the instruction, wherever it lands, with a line on stderr that says where; a small underrun lands
// in the band before C and becomes the row's reason (checked after every checked call, every call when strict).
// A and B are compared with what was written after every checked call. Strict runs also count the
// threads each call leaves running (measure/anticheat.hpp).
#include "measure/anticheat.hpp"
#include "measure/guard_pages.hpp"
#include "pipeline/job_runner.hpp"
#include "pipeline/pipeline.hpp"
#include "verify/padded_operand.hpp"
#include "verify/random_fill.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace kreg {
namespace {

// The band of guard words before each C (the page slack before it is band too).
constexpr size_t kGuardFloats = 1024;

class CpuBackend final : public MeasureBackend {
public:
    CpuBackend(const kreg_kernel_info& info, void* instance, const OperationDef& op)
        : info_(info), instance_(instance), op_(op) {}

    void allocate(const Job& job, int sets, bool guarded) override {
        shape_ = job.shape;
        dtype_ = job.dtype;
        geometry_ = op_.geometry(job.shape);
        const OperandGeometry& g = geometry_;
        guard_bytes_ = far_guard_bytes(g.c_count * sizeof(float), tile_guard_bytes(g.c_cols));
        (void)guarded;  // every run is guarded now
        for (int i = 0; i < sets; ++i) {
            Set set;
            set.a = PaddedOperand(g.a_count, operand_padding_floats(g.a_cols), kPadBeforeABits, kPadAfterABits,
                                  "A's padding");
            set.b = PaddedOperand(g.b_count, operand_padding_floats(g.b_cols), kPadBeforeBBits, kPadAfterBBits,
                                  "B's padding");
            set.c.emplace(g.c_count, kGuardFloats, guard_bytes_);
            sets_.push_back(std::move(set));
        }
        written_a_.resize(g.a_count);
        written_b_.resize(g.b_count);
        // Faults in the inaccessible regions are explained while the kernel can make them (strict runs: until
        // end_strict, once the threads it left are gone); not once the regions are unmapped.
        std::vector<const GuardedFloats*> mappings;
        for (const Set& s : sets_)
            for (const GuardedFloats* m : {&*s.c, &s.a.storage(), &s.b.storage()}) mappings.push_back(m);
        watch_ = std::make_unique<GuardPageWatch>(mappings);
    }
    void fill_inputs(int set, std::vector<float>& a, std::vector<float>& b) override {
        Set& s = sets_[size_t(set)];
        std::memcpy(s.a.data(), a.data(), a.size() * sizeof(float));
        std::memcpy(s.b.data(), b.data(), b.size() * sizeof(float));
        written_a_ = a;
        written_b_ = b;
    }
    OutputFill poison_output(int set, const OutputFill& fill) override {
        Set& s = sets_[size_t(set)];
        s.c->fill_band();  // checked after every checked call
        if (geometry_.in_place)
            std::memcpy(c_of(s), s.a.data(), c_count() * sizeof(float));
        else
            write_output_fill(fill, c_of(s), c_count());
        return fill;
    }
    void flush_caches() override {}
    void synchronize(const std::string&, bool) override {}
    void copy_output(int set, float* c) override {
        std::memcpy(c, c_of(sets_[size_t(set)]), c_count() * sizeof(float));
    }
    std::string inputs_changed(int set) override {
        const Set& s = sets_[size_t(set)];
        const struct {
            const char* name;
            const std::vector<float>& expected;
            const PaddedOperand& got;
            int64_t cols;
        } inputs[] = {{"A", written_a_, s.a, geometry_.a_cols}, {"B", written_b_, s.b, geometry_.b_cols}};
        for (const auto& input : inputs) {
            std::string change = describe_input_change(input.name, input.expected.data(), input.got.data(),
                                                       input.expected.size(), sizeof(float), input.cols);
            if (!change.empty()) return change;
        }
        return "";
    }
    std::string guard_damage(int set) override {
        const Set& s = sets_[size_t(set)];
        return describe_guard_damage(s.c->band(), s.c->band_elements(), nullptr, 0);
    }
    OutputScan scan_output(int set, const OutputFill& fill, const std::vector<size_t>& sample_at) override {
        const float* c = c_of(sets_[size_t(set)]);
        OutputScan scan;
        for (size_t i = 0, count = c_count(); i < count; ++i) {
            uint32_t word;
            std::memcpy(&word, &c[i], sizeof word);
            if (still_holds_fill(fill, i, word)) {
                if (scan.unwritten++ == 0) scan.first_unwritten = i;
            } else if (!std::isfinite(c[i]) && scan.non_finite++ == 0) {
                scan.first_non_finite = i;
                scan.first_non_finite_value = c[i];
            }
        }
        for (size_t i : sample_at) scan.samples.push_back(c[i]);
        return scan;
    }
    CallOperands operands(int set) override {
        Set& s = sets_[size_t(set)];
        CallOperands o;
        o.a = s.a.data();
        o.b = s.b.data();
        o.c = c_of(s);
        return o;
    }
    void call(const CallOperands& operands) override {
        if (std::string failure = op_.call(info_, instance_, shape_, dtype_, operands); !failure.empty())
            throw KernelFailed{std::move(failure)};
    }
    Timer& timer(bool) override { return timer_; }

    void start_strict(StrictEvidence& evidence) override {
        evidence.threads_left_running = false;
        evidence.guard_band_elements = kGuardFloats;
        evidence.guard_page_bytes = guard_bytes_;
        threads_at_start_ = count_threads();
    }
    void end_strict() override {
        // A thread the kernel left running may still write into these buffers: give it a moment to end
        // before they are freed (a legitimate thread pool just outlasts the wait).
        if (threads_at_start_ >= 0 && count_threads() > threads_at_start_)
            wait_for_threads(threads_at_start_, std::chrono::milliseconds(500));
        watch_.reset();
    }
    void before_call() override { threads_before_ = count_threads(); }
    void after_call(StrictEvidence& evidence) override {
        const int threads_after = count_threads();
        if (threads_before_ >= 0 && threads_after > threads_before_) {
            evidence.threads_left_running = true;
            evidence.max_threads_left = std::max(evidence.max_threads_left, threads_after - threads_before_);
        }
    }

private:
    struct Set {
        PaddedOperand a, b;  // NaN padding around each: a read outside them is diagnosed (verify_gemm.hpp)
        std::optional<GuardedFloats> c;
    };
    static float* c_of(Set& s) { return s.c->data(); }
    static const float* c_of(const Set& s) { return s.c->data(); }
    size_t c_count() const { return geometry_.c_count; }

    const kreg_kernel_info& info_;
    void* instance_;
    const OperationDef& op_;
    Shape shape_;
    DType dtype_ = DType::fp32;
    OperandGeometry geometry_;
    size_t guard_bytes_ = 0;
    std::vector<Set> sets_;
    std::vector<float> written_a_, written_b_;  // what fill_inputs wrote last
    HostTimer timer_;
    int threads_at_start_ = -1, threads_before_ = -1;
    std::unique_ptr<GuardPageWatch> watch_;  // after sets_: destroyed before the buffers it watches
};

}  // namespace

Record run_cpu_gemm_job(const Job& job, const LoadedKernel& kernel, CallChannel* channel) {
    JobStart start = start_job(job, kernel, Backend::cpu, "host");
    if (!start.usable) return start.record;
    Record record = std::move(start.record);
    if (job.dtype != DType::fp32) {
        record.status = RowStatus::skipped;
        record.reason = "the CPU runner only runs fp32; " + std::string(to_string(job.dtype)) + " was requested";
        return record;
    }
    if (job.settings.checked_outside && channel == nullptr) {
        record.reason = "checked_outside needs a channel";
        return record;
    }
    try {
        CpuBackend backend(*kernel.info, kernel.instance, operation_def(job.operation));
        run_pipeline(job, kernel, backend, record, job.settings.checked_outside ? channel : nullptr);
    } catch (const std::bad_alloc&) {
        record.status = RowStatus::failed;
        record.reason = "out of host memory for the operands of " + to_string(job.shape);
        record.stats.reset();
        record.gflops.reset();
        record.gbps.reset();
    }
    return record;
}

}  // namespace kreg
