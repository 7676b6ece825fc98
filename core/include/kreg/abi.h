/*
 * kreg plugin ABI, version 1.
 *
 * This is the whole contract between the kreg runner and a kernel plugin (.so). It is plain C so that
 * a plugin built with another compiler or standard library still loads. C++ authors normally do not
 * use it directly: <kreg/kernel.hpp> wraps it in a class and one export macro.
 *
 * The contract, in short:
 *   - A plugin exports exactly one symbol, KREG_ENTRY_POINT_NAME ("kreg_plugin_entry"), an
 *     extern "C" function returning a pointer to a kreg_plugin_descriptor.
 *   - The runner checks abi_major == KREG_ABI_MAJOR (else the plugin is rejected with a message that
 *     names both numbers); abi_minor may differ in either direction. Structs carry their own size so a
 *     newer side can tell which trailing fields the older side knows about.
 *   - Nothing allocated on one side is freed on the other. No C++ exception crosses the boundary:
 *     every function returns a kreg_status and writes a message into a buffer the caller owns.
 *   - Every pointer in the descriptor (strings, the kernel array, function pointers) is owned by the
 *     plugin and must stay valid until the library is unloaded.
 */
#ifndef KREG_ABI_H
#define KREG_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KREG_ABI_MAJOR 1
#define KREG_ABI_MINOR 0

/* The one symbol every plugin exports. Its name never changes between ABI versions, so that a plugin
 * built for another major version is reported as such instead of as "no entry point". */
#define KREG_ENTRY_POINT_NAME "kreg_plugin_entry"

/* Visibility for the exported entry point (plugins are built with hidden visibility by default). */
#if defined(_WIN32)
#define KREG_EXPORT __declspec(dllexport)
#else
#define KREG_EXPORT __attribute__((visibility("default")))
#endif

/* Status returned by every plugin function. Anything other than KREG_STATUS_OK comes with a message. */
typedef enum kreg_status {
    KREG_STATUS_OK = 0,
    KREG_STATUS_INVALID_ARGUMENT = 1, /* arguments the kernel does not accept (e.g. a shape it declared unsupported) */
    KREG_STATUS_UNSUPPORTED = 2,      /* a dtype, flag or device feature this kernel lacks */
    KREG_STATUS_OUT_OF_MEMORY = 3,
    KREG_STATUS_RUNTIME_ERROR = 4,    /* e.g. a CUDA launch error; the message says which */
    KREG_STATUS_INTERNAL_ERROR = 5    /* anything else, including an exception caught by the SDK trampoline */
} kreg_status;

/* Element types. Values are stable; new ones are appended. fp32 is the only one the core verifies today. */
typedef enum kreg_dtype {
    KREG_DTYPE_FP32 = 0,
    KREG_DTYPE_TF32 = 1, /* fp32 storage, tensor-core math with a 10-bit mantissa */
    KREG_DTYPE_BF16 = 2, /* bf16 A and B, fp32 C */
    KREG_DTYPE_FP16 = 3  /* fp16 A and B, fp32 C */
} kreg_dtype;
#define KREG_DTYPE_BIT(d) (1u << (unsigned)(d))

/* Where the kernel runs, and therefore where the pointers in kreg_gemm_args live. */
typedef enum kreg_backend {
    KREG_BACKEND_CPU = 0,  /* host memory; stream is NULL */
    KREG_BACKEND_CUDA = 1  /* device memory of the current device; stream is a cudaStream_t */
} kreg_backend;

/* The operation a kernel implements. The runner only knows GEMM today; others get their own argument
 * struct and run function pointer in a later minor version. */
typedef enum kreg_operation {
    KREG_OPERATION_GEMM = 0
} kreg_operation;

/* Capability flags (kreg_kernel_info.flags). */
#define KREG_KERNEL_HONOURS_ALPHA_BETA 0x1u   /* computes C = alpha*A*B + beta*C; else only C = A*B is asked of it */
#define KREG_KERNEL_HONOURS_LEADING_DIMS 0x2u /* accepts lda/ldb/ldc larger than the row length */

/*
 * Arguments of one GEMM call: C[M x N] = alpha * A[M x K] * B[K x N] + beta * C.
 * All matrices are row-major: element (i, j) of A is a[i * lda + j].
 * The runner owns every buffer; the kernel must not keep pointers past the call, must not free them,
 * and must not write A or B.
 */
typedef struct kreg_gemm_args {
    uint32_t struct_size;   /* sizeof(kreg_gemm_args) as the runner compiled it; required */
    int64_t m, n, k;        /* >= 1, within the constraints the kernel declared */
    int64_t lda, ldb, ldc;  /* leading dimensions in elements; equal to k, n, n unless the kernel sets
                               KREG_KERNEL_HONOURS_LEADING_DIMS */
    double alpha, beta;     /* 1 and 0 unless the kernel sets KREG_KERNEL_HONOURS_ALPHA_BETA */
    kreg_dtype dtype;       /* one of the dtypes the kernel declared */
    const void* a;          /* M x K, element type per dtype */
    const void* b;          /* K x N, element type per dtype */
    void* c;                /* M x N, fp32 for every dtype in this version */
    void* stream;           /* cudaStream_t to launch on (CUDA backend); NULL on the CPU. A CUDA kernel
                               must launch only on this stream and must not synchronize the device. */
} kreg_gemm_args;

/* Launch configuration a CUDA kernel reports for the record (optional, see describe_launch). */
typedef struct kreg_launch_info {
    uint32_t struct_size;
    const void* device_function; /* the __global__ function, for cudaFuncGetAttributes; may be NULL */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dynamic_shared_bytes;
} kreg_launch_info;

/* Per-kernel metadata and entry points. Strings and function pointers are owned by the plugin. */
typedef struct kreg_kernel_info {
    uint32_t struct_size;        /* sizeof(kreg_kernel_info) as the plugin compiled it; required */
    const char* name;            /* unique across all loaded plugins, [A-Za-z0-9_.-]+; required */
    const char* description;     /* one line; required (may be "") */
    kreg_operation operation;    /* required */
    kreg_backend backend;        /* required */
    uint32_t dtypes;             /* bit set of KREG_DTYPE_BIT(...); required, non-zero */
    int32_t min_compute_capability; /* CUDA: major*10+minor (e.g. 80 for sm_80); 0 for none / CPU */
    int64_t m_multiple, n_multiple, k_multiple; /* shapes must be multiples of these; 1 means any */
    int64_t max_m, max_n, max_k; /* 0 means unbounded */
    uint32_t flags;              /* KREG_KERNEL_* bits */

    /* Optional (may be NULL): global-memory bytes the kernel moves for one call, by its own traffic
     * model, used for the modelled arithmetic intensity on the roofline. Must not throw. */
    double (*model_global_bytes)(int64_t m, int64_t n, int64_t k, kreg_dtype dtype);

    /* Required: make an instance. On failure return non-OK, write a NUL-terminated message into
     * error (capacity error_size, owned by the runner) and leave *instance untouched. */
    kreg_status (*create)(void** instance, char* error, size_t error_size);
    /* Required: destroy what create made. Never fails. */
    void (*destroy)(void* instance);
    /* Required: run one GEMM. Asynchronous on CUDA (the runner synchronizes the stream). */
    kreg_status (*run_gemm)(void* instance, const kreg_gemm_args* args, char* error, size_t error_size);
    /* Optional (may be NULL): fill *info with the launch configuration run_gemm would use for args. */
    kreg_status (*describe_launch)(void* instance, const kreg_gemm_args* args, kreg_launch_info* info,
                                   char* error, size_t error_size);
} kreg_kernel_info;

/* What the entry point returns. Owned by the plugin; valid until the library is unloaded. */
typedef struct kreg_plugin_descriptor {
    uint32_t struct_size;   /* sizeof(kreg_plugin_descriptor) as the plugin compiled it; required */
    uint16_t abi_major;     /* KREG_ABI_MAJOR the plugin was built with; must equal the runner's */
    uint16_t abi_minor;     /* KREG_ABI_MINOR the plugin was built with; informational */
    const char* plugin_name;    /* required */
    const char* plugin_version; /* required, free-form (semver suggested) */
    uint32_t kernel_count;      /* number of entries in kernels; may be 0 */
    const kreg_kernel_info* kernels;
} kreg_plugin_descriptor;

/* The entry point's type. It must not fail; it is called once per load. */
typedef const kreg_plugin_descriptor* (*kreg_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* KREG_ABI_H */
