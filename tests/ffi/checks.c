/*
 * checks.c: the C ABI's error handling, problem structs, thread safety and struct layouts,
 * driven by tests/ffi_c.rs (which compares every line with the header's codes and the CLI).
 * Also run under valgrind by tools/ffi_valgrind.sh.
 *
 * Prints one line per check: "NAME STATUS MESSAGE" (STATUS the returned code), "config NAME
 * CONFIG" for answers, "layout NAME VALUE" for sizes and offsets.
 * Usage: checks [MODELS_DIR]  (MIOpen's models, for the gfx908 checks)
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuneinfer.h"

static void report(const char *name, int status) {
    printf("%s %d %s\n", name, status, tuneinfer_last_error());
}

#define LAYOUT(T, F) printf("layout " #T "." #F " %zu\n", offsetof(T, F))
#define SIZE(T) printf("layout " #T " %zu\n", sizeof(T))

static const char *KEY = "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-F";

struct job {
    tuneinfer_predictor *p;
    int same; /* answers equal to `expected` */
    const char *expected;
};

static void *worker(void *arg) {
    struct job *j = arg;
    tuneinfer_decode beam = {TUNEINFER_DECODE_BEAM, 4, 2};
    for (int i = 0; i < 20; i++) {
        tuneinfer_results *r = NULL;
        if (tuneinfer_predict(j->p, KEY, &beam, &r) == TUNEINFER_OK && r->items[0].count == 2 &&
            strcmp(r->items[0].predictions[0].config, j->expected) == 0)
            j->same++;
        tuneinfer_results_free(r);
    }
    return NULL;
}

int main(int argc, char **argv) {
    const char *models = argc > 1 ? argv[1] : "../shared/miopen/models";
    printf("abi %u %d\n", tuneinfer_abi_version(), TUNEINFER_ABI_VERSION);

    SIZE(tuneinfer_options);
    LAYOUT(tuneinfer_options, catalogue);
    LAYOUT(tuneinfer_options, compute_units);
    LAYOUT(tuneinfer_options, threads);
    LAYOUT(tuneinfer_options, method);
    LAYOUT(tuneinfer_options, system_db);
    SIZE(tuneinfer_decode);
    LAYOUT(tuneinfer_decode, beam_width);
    LAYOUT(tuneinfer_decode, top);
    SIZE(tuneinfer_problem);
    LAYOUT(tuneinfer_problem, groups);
    LAYOUT(tuneinfer_problem, bias);
    LAYOUT(tuneinfer_problem, direction);
    SIZE(tuneinfer_prediction);
    LAYOUT(tuneinfer_prediction, score);
    LAYOUT(tuneinfer_prediction, has_score);
    LAYOUT(tuneinfer_prediction, source);
    SIZE(tuneinfer_result);
    LAYOUT(tuneinfer_result, message);
    LAYOUT(tuneinfer_result, count);
    LAYOUT(tuneinfer_result, predictions);
    LAYOUT(tuneinfer_results, items);

    tuneinfer_results *r = NULL;
    tuneinfer_predictor *p = NULL;

    /* Handles that are not live. */
    report("null_handle", tuneinfer_predict(NULL, KEY, NULL, &r));
    report("made_up_handle", tuneinfer_predict((tuneinfer_predictor *)(uintptr_t)0xdead, KEY, NULL, &r));
    report("null_handle_free", tuneinfer_predictor_free(NULL));
    report("null_results_free", tuneinfer_results_free(NULL));
    tuneinfer_results fake = {0, NULL};
    report("made_up_results_free", tuneinfer_results_free(&fake));
    printf("solver_of_bad_handle %s\n", tuneinfer_predictor_solver(NULL) ? "non-null" : "null");

    /* Opening. */
    report("open_null_out", tuneinfer_open(NULL, NULL));
    tuneinfer_options bad = {0};
    bad.solver = "NoSuchSolver";
    bad.device = "cpu";
    report("open_unknown_solver", tuneinfer_open(&bad, &p));
    printf("open_failed_out %s\n", p ? "non-null" : "null");
    tuneinfer_options nowhere = {0};
    nowhere.arch = "gfx908";
    nowhere.models = "/nonexistent/models";
    nowhere.device = "cpu";
    report("open_model_not_found", tuneinfer_open(&nowhere, &p));
    tuneinfer_options baddev = {0};
    baddev.device = "tpu";
    report("open_bad_device", tuneinfer_open(&baddev, &p));

    tuneinfer_options opt = {0};
    opt.arch = "gfx908";
    opt.models = models;
    opt.device = "cpu";
    report("open", tuneinfer_open(&opt, &p));
    printf("solver %s\n", tuneinfer_predictor_solver(p));
    printf("device %s\n", tuneinfer_predictor_device(p));
    tuneinfer_decode def;
    report("default_decode", tuneinfer_predictor_default_decode(p, &def));
    printf("default_decode_kind %d\n", def.kind);

    /* Bad arguments. */
    report("predict_null_out", tuneinfer_predict(p, KEY, NULL, NULL));
    report("predict_null_problem", tuneinfer_predict(p, NULL, NULL, &r));
    report("bad_problem", tuneinfer_predict(p, "2048-7-7-1x1-512-7-7-256-0x0-1x1-1x1-0-NCHW-FP16-X", NULL, &r));
    printf("bad_problem_out %s\n", r ? "non-null" : "null");
    report("not_applicable", tuneinfer_predict(p, "1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F", NULL, &r));
    printf("last_error_after_success_is_cleared ");
    tuneinfer_decode wide = {TUNEINFER_DECODE_BEAM, 4, 0};
    int status = tuneinfer_predict(p, KEY, &wide, &r);
    printf("%d '%s' %zu\n", status, tuneinfer_last_error(), status == 0 ? r->items[0].count : 0);
    tuneinfer_results_free(r);
    tuneinfer_decode zero_width = {TUNEINFER_DECODE_BEAM, 0, 0};
    report("beam_width_0", tuneinfer_predict(p, KEY, &zero_width, &r));
    tuneinfer_decode too_wide = {TUNEINFER_DECODE_BEAM, 5000, 0};
    report("beam_width_5000", tuneinfer_predict(p, KEY, &too_wide, &r));
    tuneinfer_decode top_over = {TUNEINFER_DECODE_BEAM, 4, 5};
    report("top_over_width", tuneinfer_predict(p, KEY, &top_over, &r));
    tuneinfer_decode bad_kind = {7, 0, 0};
    report("bad_decode_kind", tuneinfer_predict(p, KEY, &bad_kind, &r));

    /* Results freed twice. */
    report("predict", tuneinfer_predict(p, KEY, NULL, &r));
    printf("config key %s\n", r->items[0].predictions[0].config);
    report("results_free", tuneinfer_results_free(r));
    report("results_double_free", tuneinfer_results_free(r));

    /* A problem struct: convfp16 -n 256 -c 2048 -H 7 -W 7 -k 512 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1
     * -l 1 -j 1 -F 1, and a backward-data one. */
    tuneinfer_problem s[3];
    for (int i = 0; i < 3; i++) tuneinfer_problem_init(&s[i]);
    s[0].n = 256, s[0].c = 2048, s[0].h = 7, s[0].w = 7, s[0].k = 512, s[0].y = 1, s[0].x = 1;
    s[0].data_type = TUNEINFER_TYPE_FP16;
    s[1] = s[0];
    s[1].direction = 2;
    s[2] = s[0];
    s[2].n = -1;
    report("predict_problem", tuneinfer_predict_problem(p, &s[0], NULL, &r));
    printf("config struct %s\n", r->items[0].predictions[0].config);
    tuneinfer_results_free(r);
    report("predict_problem_null", tuneinfer_predict_problem(p, NULL, NULL, &r));
    report("predict_problem_negative", tuneinfer_predict_problem(p, &s[2], NULL, &r));
    tuneinfer_problem odd = s[0];
    odd.layout = 9;
    report("predict_problem_bad_layout", tuneinfer_predict_problem(p, &odd, NULL, &r));
    report("predict_problems", tuneinfer_predict_problems(p, s, 3, NULL, &r));
    for (size_t i = 0; i < r->count; i++)
        printf("item %zu %d %s\n", i, r->items[i].status,
               r->items[i].status == 0 ? r->items[i].predictions[0].config : r->items[i].message);
    tuneinfer_results_free(r);

    /* Text batch with a NULL entry and a bad problem. */
    const char *texts[4] = {KEY, NULL, "conv -n 1 -c 4 -H 2 -W 2 -k 4 -y 1 -x 1", "not a problem"};
    report("predict_batch", tuneinfer_predict_batch(p, texts, 4, NULL, &r));
    for (size_t i = 0; i < r->count; i++) {
        const tuneinfer_result *it = &r->items[i];
        printf("item %zu %d %s", i, it->status, it->status == 0 ? it->predictions[0].config : it->message);
        if (it->status == 0) printf(" %s", it->predictions[0].source == TUNEINFER_SOURCE_DEFAULT ? "default" : "model");
        printf("\n");
    }
    tuneinfer_results_free(r);
    report("predict_batch_empty", tuneinfer_predict_batch(p, NULL, 0, NULL, &r));
    printf("empty_count %zu\n", r->count);
    tuneinfer_results_free(r);
    report("predict_batch_null_array", tuneinfer_predict_batch(p, NULL, 2, NULL, &r));

    /* One handle, four threads at once: every answer the same as a lone call's. */
    tuneinfer_decode beam = {TUNEINFER_DECODE_BEAM, 4, 2};
    tuneinfer_predict(p, KEY, &beam, &r);
    char expected[256];
    snprintf(expected, sizeof expected, "%s", r->items[0].predictions[0].config);
    tuneinfer_results_free(r);
    pthread_t threads[4];
    struct job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (struct job){p, 0, expected};
        pthread_create(&threads[i], NULL, worker, &jobs[i]);
    }
    int same = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        same += jobs[i].same;
    }
    printf("threads_same %d of 80\n", same);

    /* A freed handle. */
    report("free", tuneinfer_predictor_free(p));
    report("use_after_free", tuneinfer_predict(p, KEY, NULL, &r));
    report("double_free", tuneinfer_predictor_free(p));
    printf("status_name %s\n", tuneinfer_status_name(TUNEINFER_ERR_PROBLEM));
    return 0;
}
