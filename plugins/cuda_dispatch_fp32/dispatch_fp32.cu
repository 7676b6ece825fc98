// cuda_dispatch_fp32: one fp32 GEMM that runs, per call, the kernel the dispatch table chose for the device and the
// shape (README.md). The kernels are compiled in from their own headers, so this .so opens nothing at run time
// but the table override, and its code for each class is exactly what the table measured.
#include "../09_warptiled/warptiled.cuh"
#include "../cuda_gemv/gemv.cuh"
#include "../cuda_small_tile/small_tile.cuh"
#include "../cuda_splitk/splitk.cuh"
#include "router.hpp"

#include <memory>
#include <string>

// A named namespace, not an anonymous one: describe_variant has no caller in this build until the ABI's
// describe_gemm_variant (1.2) calls it, and must not be dropped as unreferenced.
namespace kreg_dispatch_fp32 {

inline std::string describe_split(const kreg_splitk::SplitPlan& plan, int64_t bm, int64_t bn) {
    return "; " + std::to_string(bm) + "x" + std::to_string(bn) + " tiles, K in " + std::to_string(plan.splits) +
           " slice(s) of " + std::to_string(plan.k_per_split);
}

class DispatchFp32 final : public kreg::IKernel {
public:
    static kreg::KernelSpec spec() {
        static const std::string description = [] {
            const std::string origin = kreg_dispatch_fp32::embedded_table_origin();
            return "fp32 dispatch over " + kreg_dispatch_fp32::variant_names() + " by " +
                   (origin.empty() ? std::string("the built-in fallback (no table embedded)") : origin) +
                   "; KREG_DISPATCH_TABLE overrides";
        }();
        return kreg_cuda::simt_spec("cuda_dispatch_fp32", description.c_str(), 80, &model_bytes);
    }

    void run_gemm(const kreg_gemm_args& args) override {
        kreg_cuda::fp32_gemm(args);  // the checks, before any routing
        kernel_for(route(args).variant).run_gemm(args);
    }

    bool describe_launch(const kreg_gemm_args& args, kreg_launch_info& info) override {
        kreg_cuda::fp32_gemm(args);
        return kernel_for(route(args).variant).describe_launch(args, info);
    }

    // The row's evidence (kreg::IKernel::describe_variant from ABI 1.2 on; until then, for tests): the kernel
    // this call runs, the rule or fallback that chose it, the table, and the split kernels' plan.
    std::string describe_variant(const kreg_gemm_args& args) {
        const Fp32Gemm_ p = kreg_cuda::fp32_gemm(args);
        const Route r = route(args);
        std::string text = std::string(kreg_dispatch_fp32::variant_name(r.variant)) + " (" + r.reason + "; " +
                           router().table_description() + ")";
        if (r.variant == Variant::splitk) {
            const kreg_splitk::SplitPlan plan = kreg_splitk::SplitKFp32::plan_for(p, sms_.get());
            text += plan.config == 0 ? describe_split(plan, 128, 256) : describe_split(plan, 64, 128);
        } else if (r.variant == Variant::small_tile) {
            const kreg_splitk::SplitPlan plan = kreg_small_tile::SmallTileFp32::plan_for(p, sms_.get());
            text += plan.config == 0 ? describe_split(plan, 64, 64) : describe_split(plan, 32, 64);
        } else if (r.variant == Variant::gemv) {
            const kreg_gemv::GemvPlan plan = kreg_gemv::plan_gemv(p.m, p.n, p.k, sms_.get());
            text += std::string("; ") +
                    (plan.columns ? "a warp per row" : std::to_string(plan.rows_per_block) + " row(s) per block") +
                    ", K in " + std::to_string(plan.splits) + " slice(s) of " + std::to_string(plan.k_per_split);
        }
        return text;
    }

private:
    using Fp32Gemm_ = kreg_cuda::Fp32Gemm;

    Route route(const kreg_gemm_args& args) { return router().route(args.m, args.n, args.k); }

    // The table is read at the first call, not in create(): the device's name picks the entry, and an instance is
    // made (and its arguments checked) before any device is touched, as for every kernel of the lab.
    Router& router() {
        if (!router_) {
            int device = 0;
            KREG_CUDA_CHECK(cudaGetDevice(&device));
            cudaDeviceProp prop{};
            KREG_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
            router_ = std::make_unique<Router>(prop.name);
        }
        return *router_;
    }

    kreg::IKernel& kernel_for(Variant v) {
        switch (v) {
            case Variant::warptiled:
                return warptiled_;
            case Variant::small_tile:
                return small_tile_;
            case Variant::gemv:
                return gemv_;
            case Variant::splitk:
                break;
        }
        return splitk_;
    }

    // The traffic of the kernel the embedded table (or the fallback) picks for an H200; without a device the
    // model cannot know the GPU, so it assumes the one the table was made for.
    static double model_bytes(int64_t m, int64_t n, int64_t k, kreg_dtype dtype) {
        static const kreg_dispatch_fp32::Router h200("NVIDIA H200");
        switch (h200.route(m, n, k).variant) {
            case Variant::warptiled:
                return kreg_warptiled::Warptiled::spec().model_global_bytes(m, n, k, dtype);
            case Variant::small_tile:
                return kreg_small_tile::SmallTileFp32::spec().model_global_bytes(m, n, k, dtype);
            case Variant::gemv:
                return kreg_gemv::Gemv::spec().model_global_bytes(m, n, k, dtype);
            case Variant::splitk:
                break;
        }
        return kreg_splitk::SplitKFp32::spec().model_global_bytes(m, n, k, dtype);
    }

    std::unique_ptr<Router> router_;
    kreg_cuda::SmCount sms_;
    kreg_warptiled::Warptiled warptiled_;
    kreg_splitk::SplitKFp32 splitk_;
    kreg_small_tile::SmallTileFp32 small_tile_;
    kreg_gemv::Gemv gemv_;
};

}  // namespace kreg_dispatch_fp32

KREG_PLUGIN("cuda_dispatch_fp32", "1.0.0", kreg_dispatch_fp32::DispatchFp32)
