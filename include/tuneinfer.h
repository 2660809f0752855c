/*
 * tuneinfer.h: the C ABI of tuneinfer, which predicts MIOpen convolution kernel tuning
 * parameters (libtuneinfer.so / libtuneinfer.a; `cargo build --release`).
 *
 * The answers are those of `tuneinfer predict` and `tuneinfer batch` for the same options:
 *
 *     tuneinfer_options opt = {0};          // zero = the CLI's defaults
 *     opt.arch = "gfx906";                  // --arch (NULL: gfx906)
 *     tuneinfer_predictor *p = NULL;
 *     if (tuneinfer_open(&opt, &p) != TUNEINFER_OK) {
 *         fprintf(stderr, "error: %s\n", tuneinfer_last_error());
 *     }
 *     tuneinfer_results *r = NULL;
 *     int status = tuneinfer_predict(p, "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F",
 *                                    NULL, &r);   // NULL mode = --decode auto
 *     if (status == TUNEINFER_OK) puts(r->items[0].predictions[0].config);
 *     tuneinfer_results_free(r);
 *     tuneinfer_predictor_free(p);
 *
 * Rules of the ABI:
 * - Every function returns a status (TUNEINFER_OK or an error code below) unless it says
 *   otherwise; on failure tuneinfer_last_error() gives the message, per thread.
 * - Error codes are the CLI's exit codes (2 usage ... 9 GPU), plus TUNEINFER_PARTIAL (a batch
 *   in which some problems failed, `batch`'s exit 1), TUNEINFER_ERR_HANDLE and
 *   TUNEINFER_ERR_INTERNAL.
 * - No panic or exception crosses the ABI: an internal failure is TUNEINFER_ERR_INTERNAL.
 * - A NULL argument that must not be NULL is TUNEINFER_ERR_USAGE; a NULL, freed or made-up
 *   predictor handle is TUNEINFER_ERR_HANDLE (handles are registry ids, never dereferenced).
 *   Freeing results twice is TUNEINFER_ERR_HANDLE as long as the memory was not handed out
 *   again for newer results.
 * - Strings in and out are UTF-8, NUL-terminated.
 * - Thread safety: a predictor may be used by any number of threads at once. A predictor
 *   freed while another thread predicts with it finishes that prediction first. Results
 *   belong to the caller until tuneinfer_results_free.
 * - The library prints nothing itself, except the engine's one-line notes on stderr that the
 *   CLI prints too (e.g. "note: no GPU: ...; computing on the CPU" when device "auto" finds no
 *   hardware GPU).
 */
#ifndef TUNEINFER_H
#define TUNEINFER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes; compare with tuneinfer_abi_version() at run time. Bumped
 * whenever a struct, a signature or a meaning changes. */
#define TUNEINFER_ABI_VERSION 2

/* ----- status codes (the CLI's exit codes) ----- */
#define TUNEINFER_OK 0
#define TUNEINFER_PARTIAL 1              /* batch: some problems failed (see each result) */
#define TUNEINFER_ERR_USAGE 2            /* bad argument: NULL, bad option or decode mode */
#define TUNEINFER_ERR_IO 3               /* a file could not be read */
#define TUNEINFER_ERR_FORMAT 4           /* a model file is malformed */
#define TUNEINFER_ERR_PROBLEM 5          /* invalid problem, or the model does not apply */
#define TUNEINFER_ERR_MODEL_NOT_FOUND 6  /* unknown solver, or no model for (arch, solver) */
#define TUNEINFER_ERR_DATABASE 7         /* a perf database could not be read */
#define TUNEINFER_ERR_VERIFY 8           /* a model's test vectors were not reproduced */
#define TUNEINFER_ERR_GPU 9              /* no usable GPU (device "gpu"), or a GPU failure */
#define TUNEINFER_ERR_HANDLE 10          /* NULL, freed or unknown predictor / results */
#define TUNEINFER_ERR_INTERNAL 11        /* a bug inside the library, caught at the boundary */

/* ----- decode modes ----- */
#define TUNEINFER_DECODE_DEFAULT 0  /* --decode auto: MIOpen's walk for MIOpen's models, the
                                       best of a beam of 6 for tuneinfer's; one answer */
#define TUNEINFER_DECODE_GREEDY 1   /* --decode miopen: MIOpen's greedy walk; on failure the
                                       solver's static default (source DEFAULT) */
#define TUNEINFER_DECODE_BEAM 2     /* --beam K --top N: ranked answers */

/* ----- problem fields ----- */
#define TUNEINFER_LAYOUT_NCHW 0
#define TUNEINFER_LAYOUT_NHWC 1
#define TUNEINFER_TYPE_FP32 0
#define TUNEINFER_TYPE_FP16 1
#define TUNEINFER_TYPE_BF16 2

/* ----- where an answer came from ----- */
#define TUNEINFER_SOURCE_MODEL 0
#define TUNEINFER_SOURCE_DEFAULT 1  /* the solver's static default (no score) */
#define TUNEINFER_SOURCE_NEIGHBOUR 2  /* the nearest tuned neighbour's config (no score; the CLI's --method) */
#define TUNEINFER_SOURCE_PERF_DB 3  /* the value tuned in MIOpen's system perf db (no score) */

/* How to load a predictor. Zero-initialise it ({0}): every NULL or 0 field takes the CLI's
 * default. The strings are only read during tuneinfer_open. */
typedef struct tuneinfer_options {
    const char *arch;       /* --arch: e.g. "gfx906" (default), "gfx900", "gfx908", "gfx906_64" */
    const char *solver;     /* --solver: e.g. "ConvAsm1x1U" (default), "ConvAsmBwdWrW1x1" */
    const char *models;     /* --models DIR; NULL: $TUNEINFER_MODELS, the models built into the
                               library (feature bundled), the project's weights/, ./weights,
                               /opt/rocm/share/miopen/db */
    const char *device;     /* --device: "auto" (default), "gpu" or "cpu" */
    const char *precision;  /* --precision: "f32" (default) or "f16" (GPU only) */
    const char *catalogue;  /* --catalogue DIR (composable_kernel solvers); NULL: default */
    uint32_t compute_units; /* --cu N; 0: the model's default */
    uint32_t threads;       /* worker threads of batches; 0: all cores */
    const char *method;     /* --method (ABI 2): "best" (NULL, the default), "model", "neighbour"
                               or "default"; the answer is the CLI's */
    const char *system_db;  /* --system-db FILE|none (ABI 2); NULL: MIOpen's installed system
                               perf db, found as the CLI finds it ($MIOPEN_SYSTEM_DB_PATH, ...) */
} tuneinfer_options;

/* How to decode. Zero-initialised (or a NULL pointer) is TUNEINFER_DECODE_DEFAULT. */
typedef struct tuneinfer_decode {
    int32_t kind;        /* TUNEINFER_DECODE_* */
    uint32_t beam_width; /* BEAM only: 1..1024 */
    uint32_t top;        /* BEAM only: the best 1..beam_width answers; 0: all beam_width */
} tuneinfer_decode;

/* One problem as MIOpenDriver's flags describe it (the forward convolution plus the
 * direction tuned). It is checked exactly like the MIOpenDriver line it stands for, e.g.
 * "conv -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 ...". tuneinfer_problem_init fills in
 * MIOpenDriver's defaults. */
typedef struct tuneinfer_problem {
    int64_t n;          /* -n batch size */
    int64_t c;          /* -c input channels (all groups) */
    int64_t h;          /* -H input height */
    int64_t w;          /* -W input width */
    int64_t k;          /* -k output channels (all groups) */
    int64_t y;          /* -y filter height */
    int64_t x;          /* -x filter width */
    int64_t pad_h;      /* -p */
    int64_t pad_w;      /* -q */
    int64_t stride_h;   /* -u */
    int64_t stride_w;   /* -v */
    int64_t dilation_h; /* -l */
    int64_t dilation_w; /* -j */
    int64_t groups;     /* -g */
    int32_t bias;       /* -b: 0 or 1 */
    int32_t layout;     /* TUNEINFER_LAYOUT_* (--in_layout) */
    int32_t data_type;  /* TUNEINFER_TYPE_* (conv / convfp16 / convbfp16) */
    int32_t direction;  /* -F: 1 forward, 2 backward data, 4 backward weights */
} tuneinfer_problem;

/* One predicted configuration. */
typedef struct tuneinfer_prediction {
    const char *config; /* as MIOpen prints it, e.g. "2,8,4,16,1,4,2,2" */
    double score;       /* sum of log-probabilities of the chosen tokens (a float widened
                           exactly: printf("%.6f") prints what the CLI prints) */
    int32_t has_score;  /* 0 for a static default */
    int32_t source;     /* TUNEINFER_SOURCE_* */
} tuneinfer_prediction;

/* The answer to one problem: ranked predictions (best first), or a failure. */
typedef struct tuneinfer_result {
    int status;          /* TUNEINFER_OK or the problem's error code */
    const char *message; /* the failure's message; NULL when status is TUNEINFER_OK */
    size_t count;        /* predictions (1 unless a beam with top > 1 was asked for) */
    const tuneinfer_prediction *predictions;
} tuneinfer_result;

/* What a predict call returns: one result per problem, in order. Allocated by the library
 * (more private fields follow): never copy, allocate or free it yourself. */
typedef struct tuneinfer_results {
    size_t count;
    const tuneinfer_result *items;
} tuneinfer_results;

/* An opaque, thread-safe predictor handle. */
typedef struct tuneinfer_predictor tuneinfer_predictor;

/* The ABI version of the library (TUNEINFER_ABI_VERSION of the header it was built with). */
uint32_t tuneinfer_abi_version(void);

/* The library's version, e.g. "0.1.0" (static). */
const char *tuneinfer_version(void);

/* The message of this thread's last failed call; "" after a successful call. Valid until
 * the thread's next call into the library. Never NULL. */
const char *tuneinfer_last_error(void);

/* A status code's name, e.g. "TUNEINFER_ERR_PROBLEM" (static; never NULL). */
const char *tuneinfer_status_name(int status);

/* Fills *problem with MIOpenDriver's defaults (n 100, c 3, H 32, W 32, k 32, y 3, x 3, pads 0,
 * strides and dilations 1, 1 group, no bias, NCHW, FP32) and the forward direction. */
int tuneinfer_problem_init(tuneinfer_problem *problem);

/* Loads the model of (arch, solver) for the device (options NULL: every default) and stores
 * a new handle in *out (NULL on failure). Finding and checking the model, the device choice
 * and the errors are `tuneinfer predict`'s. */
int tuneinfer_open(const tuneinfer_options *options, tuneinfer_predictor **out);

/* Frees a predictor; NULL is a no-op, a freed or unknown handle TUNEINFER_ERR_HANDLE. */
int tuneinfer_predictor_free(tuneinfer_predictor *predictor);

/* The solver's name as MIOpen spells it, e.g. "ConvAsm1x1U"; NULL for a bad handle. Valid
 * until the predictor is freed. */
const char *tuneinfer_predictor_solver(const tuneinfer_predictor *predictor);

/* "cpu", or the GPU adapter the predictor runs on; NULL for a bad handle. Valid until the
 * predictor is freed. */
const char *tuneinfer_predictor_device(const tuneinfer_predictor *predictor);

/* The note `tuneinfer predict` prints on stderr after loading (device "auto" without a
 * hardware GPU computing on the CPU), or NULL when there is none. The library itself prints
 * nothing. Valid until the predictor is freed. */
const char *tuneinfer_predictor_note(const tuneinfer_predictor *predictor);

/* The decode mode TUNEINFER_DECODE_DEFAULT stands for on this predictor: GREEDY for MIOpen's
 * models, BEAM with beam_width 6 and top 1 for tuneinfer's own. */
int tuneinfer_predictor_default_decode(const tuneinfer_predictor *predictor,
                                       tuneinfer_decode *out);

/* Predicts one problem, given as a MIOpen perf-db key
 * ("2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F") or a MIOpenDriver line
 * ("convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -F 1"). mode NULL: the default.
 * On TUNEINFER_OK, *out holds one result; on failure *out is NULL and the status and
 * tuneinfer_last_error() are those of the problem (e.g. TUNEINFER_ERR_PROBLEM, "invalid
 * problem '...': ..."), the message `tuneinfer predict` prints after "error: ". */
int tuneinfer_predict(const tuneinfer_predictor *predictor, const char *problem,
                      const tuneinfer_decode *mode, tuneinfer_results **out);

/* Predicts count problems given as texts (as tuneinfer_predict), batched over the worker
 * threads. Returns TUNEINFER_OK when every problem was predicted, TUNEINFER_PARTIAL when some
 * failed (each result has its status and message; a NULL entry fails as TUNEINFER_ERR_USAGE);
 * *out is then set either way. Any other status is a failure of the whole call (*out NULL). */
int tuneinfer_predict_batch(const tuneinfer_predictor *predictor, const char *const *problems,
                            size_t count, const tuneinfer_decode *mode, tuneinfer_results **out);

/* tuneinfer_predict for a problem struct. */
int tuneinfer_predict_problem(const tuneinfer_predictor *predictor,
                              const tuneinfer_problem *problem, const tuneinfer_decode *mode,
                              tuneinfer_results **out);

/* tuneinfer_predict_batch for an array of count problem structs. */
int tuneinfer_predict_problems(const tuneinfer_predictor *predictor,
                               const tuneinfer_problem *problems, size_t count,
                               const tuneinfer_decode *mode, tuneinfer_results **out);

/* Frees results; NULL is a no-op, results that are not live TUNEINFER_ERR_HANDLE. */
int tuneinfer_results_free(tuneinfer_results *results);

#ifdef __cplusplus
}
#endif

#endif /* TUNEINFER_H */
