/*
 * kreg plugin ABI, version 1.3 (1.0 plus the transpose and block_transpose operations in 1.1; in 1.2 the
 * optional describe_gemm_variant, by which a kernel that chooses among variants names the one it runs; in 1.3
 * one generic entry, run(instance, const kreg_call*), for every operation, so that a new operation adds a
 * kreg_operation value and its documentation, never another entry or argument struct).
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
 *   - The kernel array's stride is kernels[0].struct_size (the plugin's sizeof(kreg_kernel_info)), so a
 *     plugin of an older minor version, with shorter structs, loads: the fields it lacks read as 0/NULL.
 *   - A kernel whose operation, or all of whose dtypes, the runner does not know (a plugin of a newer
 *     minor version) is listed as unavailable with the reason; the plugin's other kernels load and run.
 *
 * What the runner guarantees a plugin (and what it asks in return):
 *   - Process: a plugin is loaded (RTLD_NOW | RTLD_LOCAL) in a worker process the runner starts; the
 *     runner itself never runs plugin code. The worker may be killed at any moment (a timeout, a crash of
 *     another kernel of the plugin), so destroy() is not guaranteed to run at exit.
 *   - Threads: the entry point and every function of a kernel (create, destroy, run_*, describe_*,
 *     model_global_bytes) are called from one thread of the worker, one call at a time, never
 *     concurrently. A kernel may use threads of its own inside a call, but every one of them must be
 *     done with the call's buffers when the call returns (CPU) or when the stream's work completes
 *     (CUDA); grading counts threads a call leaves running.
 *   - Device: for a CUDA kernel the job's device (runner --device) is the current device when create()
 *     is called, at every run_* and describe_* call, and at destroy(). An instance is created per
 *     (kernel, device) and only ever used on that device, so what create() makes (a handle, a stream,
 *     a workspace) lives where the kernel runs. A kernel must not change the current device.
 *   - Instances: create() is called once per (kernel, device) before the first call of that kernel in a
 *     worker, and the instance is reused for every job of that kernel there; it must not keep results
 *     between calls (every call's inputs differ, and are checked).
 *   - Memory: every matrix pointer is aligned to at least 16 bytes (a float4 / 128-bit access at the start
 *     of a row of an aligned leading dimension is safe); nothing past the matrices belongs to the kernel.
 */
#ifndef KREG_ABI_H
#define KREG_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KREG_ABI_MAJOR 1
#define KREG_ABI_MINOR 3

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
    KREG_STATUS_RUNTIME_ERROR = 4, /* e.g. a CUDA launch error; the message says which */
    KREG_STATUS_INTERNAL_ERROR = 5 /* anything else, including an exception caught by the SDK trampoline */
} kreg_status;

/* Element types. Values are stable; new ones are appended. fp32 is the only one the core verifies today. */
typedef enum kreg_dtype {
    KREG_DTYPE_FP32 = 0,
    KREG_DTYPE_TF32 = 1, /* fp32 storage, tensor-core math with a 10-bit mantissa */
    KREG_DTYPE_BF16 = 2, /* bf16 A and B, fp32 C */
    KREG_DTYPE_FP16 = 3  /* fp16 A and B, fp32 C */
} kreg_dtype;
#define KREG_DTYPE_BIT(d) (1u << (unsigned)(d))

/* Where the kernel runs, and therefore where the pointers in the argument structs live. */
typedef enum kreg_backend {
    KREG_BACKEND_CPU = 0, /* host memory; stream is NULL */
    KREG_BACKEND_CUDA = 1 /* device memory of the current device; stream is a cudaStream_t */
} kreg_backend;

/* The operation a kernel implements. Since 1.3 every operation can be called through the generic entry
 * kreg_kernel_info.run with a kreg_call (the sizes and operands of each operation are documented there);
 * the operations of 1.0 and 1.1 also have their own argument struct and run entry, which 1.0-1.2 plugins use.
 * Values are stable; new ones are appended in later minor versions. A kernel whose operation (or dtype)
 * the runner does not know is listed as unavailable with the reason; the plugin's other kernels load. */
typedef enum kreg_operation {
    KREG_OPERATION_GEMM = 0,           /* kreg_gemm_args, run_gemm */
    KREG_OPERATION_TRANSPOSE = 1,      /* since 1.1: kreg_transpose_args, run_transpose */
    KREG_OPERATION_BLOCK_TRANSPOSE = 2 /* since 1.1: kreg_block_transpose_args, run_block_transpose */
} kreg_operation;

/* Capability flags (kreg_kernel_info.flags). */
#define KREG_KERNEL_HONOURS_ALPHA_BETA 0x1u   /* computes C = alpha*A*B + beta*C; else only C = A*B is asked of it */
#define KREG_KERNEL_HONOURS_LEADING_DIMS 0x2u /* accepts lda/ldb/ldc larger than the row length (every operation) */

/*
 * Arguments of one GEMM call: C[M x N] = alpha * A[M x K] * B[K x N] + beta * C.
 * All matrices are row-major: element (i, j) of A is a[i * lda + j].
 * The runner owns every buffer; the kernel must not keep pointers past the call, must not free them,
 * and must not write A or B.
 */
typedef struct kreg_gemm_args {
    uint32_t struct_size;  /* sizeof(kreg_gemm_args) as the runner compiled it; required */
    int64_t m, n, k;       /* >= 1, within the constraints the kernel declared */
    int64_t lda, ldb, ldc; /* leading dimensions in elements; equal to k, n, n unless the kernel sets
                              KREG_KERNEL_HONOURS_LEADING_DIMS */
    double alpha, beta;    /* 1 and 0 unless the kernel sets KREG_KERNEL_HONOURS_ALPHA_BETA */
    kreg_dtype dtype;      /* one of the dtypes the kernel declared */
    const void* a;         /* M x K, element type per dtype */
    const void* b;         /* K x N, element type per dtype */
    void* c;               /* M x N, fp32 for every dtype in this version */
    void* stream;          /* cudaStream_t to launch on (CUDA backend); NULL on the CPU. A CUDA kernel
                              must launch only on this stream and must not synchronize the device. */
} kreg_gemm_args;

/*
 * Since 1.1. Arguments of one transpose call: B[N x M] = A[M x N]^T, that is b[j * ldb + i] = a[i * lda + j]
 * for every 0 <= i < M, 0 <= j < N. Any M, N >= 1 (within the kernel's declared constraints: m_multiple,
 * n_multiple, max_m, max_n). Row-major like GEMM. The result is compared with the exact transpose element
 * by element, bit for bit (a transpose does no arithmetic; NaN payloads must survive too).
 * A and B never overlap. The kernel must not write A, nor B outside its N x M elements.
 */
typedef struct kreg_transpose_args {
    uint32_t struct_size; /* sizeof(kreg_transpose_args) as the runner compiled it; required */
    int64_t m, n;         /* A is M x N, B is N x M; >= 1 */
    int64_t lda, ldb;     /* leading dimensions in elements; equal to n and m unless the kernel sets
                             KREG_KERNEL_HONOURS_LEADING_DIMS (then lda >= n, ldb >= m) */
    kreg_dtype dtype;     /* KREG_DTYPE_FP32 (4-byte elements) in 1.1: the only dtype the runner asks for */
    const void* a;        /* M x N input */
    void* b;              /* N x M output */
    void* stream;         /* as in kreg_gemm_args */
} kreg_transpose_args;

/*
 * Since 1.1. Arguments of one block transpose call, in place: A[M x N] is cut into block x block tiles and
 * every tile is transposed where it stands (the CUDA lecture's BlockTranspose): with
 * r = bi*block + i, c = bj*block + j (0 <= i, j < block), the new a[r * lda + c] is the old
 * a[(bi*block + j) * lda + (bj*block + i)]. The matrix keeps its shape M x N.
 * block is chosen per call by the sweep (not by the kernel). M and N are multiples of block: the runner
 * skips other shapes with the reason and never calls the kernel with them. The kernel constrains block
 * with kreg_kernel_info.block_multiple and max_block (e.g. max_block 32 for one thread per element of a
 * tile). Compared bit for bit, like transpose. Elements of A outside the M x N matrix (lda > N) must be
 * left alone.
 */
typedef struct kreg_block_transpose_args {
    uint32_t struct_size; /* sizeof(kreg_block_transpose_args) as the runner compiled it; required */
    int64_t m, n;         /* A is M x N; >= 1, multiples of block */
    int64_t lda;          /* equal to n unless the kernel sets KREG_KERNEL_HONOURS_LEADING_DIMS (then >= n) */
    int64_t block;        /* tile edge, >= 1, within block_multiple and max_block */
    kreg_dtype dtype;     /* KREG_DTYPE_FP32 in 1.1 */
    void* a;              /* M x N, read and written in place */
    void* stream;         /* as in kreg_gemm_args */
} kreg_block_transpose_args;

/*
 * Since 1.3. One call of a kernel of any operation, through kreg_kernel_info.run: the tag (operation) says
 * which; sizes[] holds the operation's shape keys in its order, and a, b, c its operands:
 *   GEMM            sizes m, n, k; a M x K (lda), b K x N (ldb), c M x N (ldc); alpha, beta as in
 *                   kreg_gemm_args (and the same rules)
 *   TRANSPOSE       sizes m, n; a M x N (lda), c N x M (ldc): the transpose (kreg_transpose_args' b); b NULL
 *   BLOCK_TRANSPOSE sizes m, n, block; c M x N (ldc), read and transposed tile by tile in place as in
 *                   kreg_block_transpose_args (whose a it is); a and b NULL
 * Sizes past the operation's keys are 0, and so are the leading dimensions of the operands it lacks.
 * Leading dimensions are in elements and equal to the row length unless the kernel sets
 * KREG_KERNEL_HONOURS_LEADING_DIMS. Everything the operation's own struct says (element types, what may be
 * written, alignment, how the result is checked) holds for the call alike. The runner never calls a
 * kernel with another operation than the one it declares.
 */
#define KREG_CALL_MAX_SIZES 4
typedef struct kreg_call {
    uint32_t struct_size;               /* sizeof(kreg_call) as the runner compiled it; required */
    kreg_operation operation;           /* the tag: the kernel's own operation */
    kreg_dtype dtype;                   /* one of the dtypes the kernel declared */
    int64_t sizes[KREG_CALL_MAX_SIZES]; /* the operation's shape keys in order (above); the rest 0 */
    int64_t lda, ldb, ldc;              /* leading dimensions of a, b and c in elements; 0 for an absent one */
    double alpha, beta;                 /* GEMM: 1 and 0 unless the kernel sets KREG_KERNEL_HONOURS_ALPHA_BETA */
    const void* a;                      /* the first input (NULL when the operation has none) */
    const void* b;                      /* the second input (NULL when the operation has fewer) */
    void* c;                            /* the output (in place: the operand itself) */
    void* stream;                       /* as in kreg_gemm_args */
} kreg_call;

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
    uint32_t struct_size;                       /* sizeof(kreg_kernel_info) as the plugin compiled it; required */
    const char* name;                           /* unique across all loaded plugins, [A-Za-z0-9_.-]+; required */
    const char* description;                    /* one line; required (may be "") */
    kreg_operation operation;                   /* required */
    kreg_backend backend;                       /* required */
    uint32_t dtypes;                            /* bit set of KREG_DTYPE_BIT(...); required, non-zero */
    int32_t min_compute_capability;             /* CUDA: major*10+minor (e.g. 80 for sm_80); 0 for none / CPU */
    int64_t m_multiple, n_multiple, k_multiple; /* shapes must be multiples of these; 1 means any
                                                   (transposes: m and n of A; k_multiple is ignored) */
    int64_t max_m, max_n, max_k;                /* 0 means unbounded (transposes: max_k is ignored) */
    uint32_t flags;                             /* KREG_KERNEL_* bits */

    /* Optional (may be NULL): global-memory bytes the kernel moves for one call, by its own traffic
     * model, used for the modelled arithmetic intensity on the roofline. Must not throw.
     * k is K for GEMM, 0 for transpose, the call's block for block_transpose: the call's sizes[0], [1], [2]. */
    double (*model_global_bytes)(int64_t m, int64_t n, int64_t k, kreg_dtype dtype);

    /* Required: make an instance. On failure return non-OK, write a NUL-terminated message into
     * error (capacity error_size, owned by the runner) and leave *instance untouched. */
    kreg_status (*create)(void** instance, char* error, size_t error_size);
    /* Required: destroy what create made. Never fails. */
    void (*destroy)(void* instance);
    /* GEMM kernels: required unless run (1.3) is set; run one GEMM. Asynchronous on CUDA (the runner
     * synchronizes the stream). Other operations: may be NULL (never called). */
    kreg_status (*run_gemm)(void* instance, const kreg_gemm_args* args, char* error, size_t error_size);
    /* Optional (may be NULL): fill *info with the launch configuration run_gemm would use for args. */
    kreg_status (*describe_launch)(void* instance, const kreg_gemm_args* args, kreg_launch_info* info, char* error,
                                   size_t error_size);

    /* ---- Since 1.1. A 1.0 plugin's structs end above; the runner reads these fields as NULL / 0. ---- */

    /* Transpose kernels: required unless run (1.3) is set. Asynchronous on CUDA, like run_gemm. */
    kreg_status (*run_transpose)(void* instance, const kreg_transpose_args* args, char* error, size_t error_size);
    /* Optional: the launch configuration run_transpose would use. */
    kreg_status (*describe_transpose_launch)(void* instance, const kreg_transpose_args* args, kreg_launch_info* info,
                                             char* error, size_t error_size);
    /* Block transpose kernels: required unless run (1.3) is set. Asynchronous on CUDA, like run_gemm. */
    kreg_status (*run_block_transpose)(void* instance, const kreg_block_transpose_args* args, char* error,
                                       size_t error_size);
    /* Optional: the launch configuration run_block_transpose would use. */
    kreg_status (*describe_block_transpose_launch)(void* instance, const kreg_block_transpose_args* args,
                                                   kreg_launch_info* info, char* error, size_t error_size);
    /* Block transpose kernels: the blocks the kernel accepts are multiples of block_multiple (0 or 1: any)
     * and at most max_block (0: unbounded). A sweep's block outside them is skipped with the reason. */
    int64_t block_multiple, max_block;

    /* ---- Since 1.2. A 1.0 or 1.1 plugin's structs end above; the runner reads this field as NULL. ---- */

    /* GEMM kernels, optional (may be NULL): name the variant run_gemm runs for args, as NUL-terminated text
     * in buffer (capacity buffer_size, owned by the runner), e.g. a dispatch kernel's "cpu_blocked (rule 2
     * of embedded table.json ...)". It must describe what run_gemm does for the same args: a kernel that
     * decides per call decides from args alone. Return KREG_STATUS_UNSUPPORTED when there is nothing to
     * name. The runner calls it once per row, before the first call, and records the text in the row's
     * evidence (extra.variant); outside strict runs it asks again after the row's calls, so a kernel that chooses
     * in its first call at a shape (cuBLASLt's timed heuristic) names its choice, not "not chosen yet". */
    kreg_status (*describe_gemm_variant)(void* instance, const kreg_gemm_args* args, char* buffer, size_t buffer_size);

    /* ---- Since 1.3. A 1.0, 1.1 or 1.2 plugin's structs end above; the runner reads these fields as NULL. ---- */

    /* The generic entry, for every operation: run one call (see kreg_call). Asynchronous on CUDA, like
     * run_gemm. Required for an operation that has no entry of its own (every one after 1.1); when it is set
     * the runner calls it instead of the operation's own entry (run_gemm, run_transpose, ...), which may then
     * be NULL. */
    kreg_status (*run)(void* instance, const kreg_call* call, char* error, size_t error_size);
    /* Optional: the launch configuration run would use for call. */
    kreg_status (*describe_call_launch)(void* instance, const kreg_call* call, kreg_launch_info* info, char* error,
                                        size_t error_size);
} kreg_kernel_info;

/* What the entry point returns. Owned by the plugin; valid until the library is unloaded. */
typedef struct kreg_plugin_descriptor {
    uint32_t struct_size;       /* sizeof(kreg_plugin_descriptor) as the plugin compiled it; required */
    uint16_t abi_major;         /* KREG_ABI_MAJOR the plugin was built with; must equal the runner's */
    uint16_t abi_minor;         /* KREG_ABI_MINOR the plugin was built with; informational */
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
