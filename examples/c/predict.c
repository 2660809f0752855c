/*
 * predict.c: `tuneinfer predict` and `tuneinfer batch` through the C ABI; prints exactly
 * what they print (tests/ffi_c.rs checks it on the README's examples).
 *
 *   cc -std=c99 -Wall -Iinclude examples/c/predict.c -Ltarget/release -ltuneinfer \
 *      -Wl,-rpath,$PWD/target/release -o /tmp/predict
 *   /tmp/predict [OPTIONS] PROBLEM...        one problem (its words joined by spaces)
 *   /tmp/predict [OPTIONS] --input FILE      one problem a line: batch's TSV
 *
 * OPTIONS: --arch A --solver S --models DIR --device auto|gpu|cpu --precision f32|f16
 *          --catalogue DIR --cu N --threads N --decode auto|miopen --beam K --top N
 *          --method best|model|neighbour|default --system-db FILE|none
 * Exit status: 0, 1 (batch: some lines failed) or the failure's status code (the CLI's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuneinfer.h"

/* The CLI's name of an answer's source (the batch table's last column). */
static const char *source_name(int32_t source) {
    switch (source) {
    case TUNEINFER_SOURCE_DEFAULT: return "default";
    case TUNEINFER_SOURCE_NEIGHBOUR: return "neighbour";
    case TUNEINFER_SOURCE_PERF_DB: return "perf-db";
    default: return "model";
    }
}

static int fail(int status) {
    fprintf(stderr, "error: %s\n", tuneinfer_last_error());
    return status;
}

static uint32_t number(const char *flag, const char *text) {
    char *end = NULL;
    unsigned long v = strtoul(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v > 0xffffffffUL) {
        fprintf(stderr, "error: %s: expected a number, got '%s'\n", flag, text);
        exit(TUNEINFER_ERR_USAGE);
    }
    return (uint32_t)v;
}

/* The CLI's `score` column: 6 decimals, empty for a static default. */
static void print_score(const tuneinfer_prediction *p) {
    if (p->has_score) printf("%.6f", p->score);
}

/* The CLI's note on stderr when an answer is the solver's static default. */
static void default_note(const tuneinfer_predictor *p, int greedy) {
    const char *solver = tuneinfer_predictor_solver(p);
    if (greedy)
        fprintf(stderr, "note: MIOpen's walk found no valid config; this is %s's default (MIOpen's fallback)\n", solver);
    else
        fprintf(stderr, "note: no valid config found; this is %s's static default\n", solver);
}

static int predict_one(tuneinfer_predictor *p, const char *text, const tuneinfer_decode *mode, int ranked) {
    tuneinfer_results *r = NULL;
    int status = tuneinfer_predict(p, text, mode, &r);
    if (status != TUNEINFER_OK) return fail(status);
    tuneinfer_decode effective = *mode;
    if (mode->kind == TUNEINFER_DECODE_DEFAULT) tuneinfer_predictor_default_decode(p, &effective);
    const tuneinfer_result *res = &r->items[0];
    size_t shown = ranked ? res->count : 1;
    for (size_t i = 0; i < shown; i++) {
        const tuneinfer_prediction *pr = &res->predictions[i];
        if (ranked) {
            printf("%zu\t%s\t", i + 1, pr->config);
            print_score(pr);
            printf("\n");
        } else {
            printf("%s\n", pr->config);
        }
        fflush(stdout);
        if (pr->source == TUNEINFER_SOURCE_DEFAULT) default_note(p, effective.kind == TUNEINFER_DECODE_GREEDY);
    }
    tuneinfer_results_free(r);
    return 0;
}

/* Reads FILE's problem lines (trimmed; blank lines and '#' comments skipped). */
static size_t read_problems(const char *name, char ***texts, size_t **line_nos) {
    FILE *f = fopen(name, "rb");
    if (!f) {
        fprintf(stderr, "error: %s: cannot open\n", name);
        exit(TUNEINFER_ERR_IO);
    }
    size_t n = 0, cap = 0, line_no = 0;
    char buf[4096];
    *texts = NULL;
    *line_nos = NULL;
    while (fgets(buf, sizeof buf, f)) {
        line_no++;
        char *s = buf;
        if (line_no == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3; /* byte-order mark */
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
        size_t len = strlen(s);
        while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r' || s[len - 1] == '\n')) s[--len] = '\0';
        if (len == 0 || s[0] == '#') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            *texts = realloc(*texts, cap * sizeof **texts);
            *line_nos = realloc(*line_nos, cap * sizeof **line_nos);
            if (!*texts || !*line_nos) exit(TUNEINFER_ERR_INTERNAL);
        }
        (*texts)[n] = malloc(len + 1);
        if (!(*texts)[n]) exit(TUNEINFER_ERR_INTERNAL);
        memcpy((*texts)[n], s, len + 1);
        (*line_nos)[n++] = line_no;
    }
    fclose(f);
    return n;
}

static int batch(tuneinfer_predictor *p, const char *input, const tuneinfer_decode *mode) {
    char **texts;
    size_t *line_nos;
    size_t n = read_problems(input, &texts, &line_nos);
    tuneinfer_results *r = NULL;
    int status = tuneinfer_predict_batch(p, (const char *const *)texts, n, mode, &r);
    if (status != TUNEINFER_OK && status != TUNEINFER_PARTIAL) return fail(status);
    size_t failed = 0, first_failed = 0;
    const char *solver = tuneinfer_predictor_solver(p);
    printf("problem\tsolver\trank\tconfig\tscore\tsource\n");
    for (size_t i = 0; i < r->count; i++) {
        const tuneinfer_result *res = &r->items[i];
        if (res->status != TUNEINFER_OK) {
            fprintf(stderr, "%s:%zu: %s\n", input, line_nos[i], res->message);
            if (!failed) first_failed = line_nos[i];
            failed++;
            continue;
        }
        for (char *t = texts[i]; *t; t++)
            if (*t == '\t') *t = ' '; /* tabs would break the TSV's columns */
        for (size_t k = 0; k < res->count; k++) {
            const tuneinfer_prediction *pr = &res->predictions[k];
            printf("%s\t%s\t%zu\t%s\t", texts[i], solver, k + 1, pr->config);
            print_score(pr);
            printf("\t%s\n", source_name(pr->source));
        }
    }
    fflush(stdout);
    if (failed)
        fprintf(stderr, "%s: %zu bad line(s) skipped (first at line %zu); %zu predicted\n", input, failed,
                first_failed, r->count - failed);
    tuneinfer_results_free(r);
    for (size_t i = 0; i < n; i++) free(texts[i]);
    free(texts);
    free(line_nos);
    return failed ? 1 : 0;
}

int main(int argc, char **argv) {
    if (tuneinfer_abi_version() != TUNEINFER_ABI_VERSION) {
        fprintf(stderr, "error: library ABI %u, header ABI %d\n", tuneinfer_abi_version(), TUNEINFER_ABI_VERSION);
        return TUNEINFER_ERR_USAGE;
    }
    tuneinfer_options opt = {0};
    tuneinfer_decode mode = {0};
    const char *input = NULL, *decode = NULL;
    int i = 1;
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        const char *flag = argv[i] + 2, *value = argv[i + 1];
        if (!strcmp(flag, "arch")) opt.arch = value;
        else if (!strcmp(flag, "solver")) opt.solver = value;
        else if (!strcmp(flag, "models")) opt.models = value;
        else if (!strcmp(flag, "device")) opt.device = value;
        else if (!strcmp(flag, "precision")) opt.precision = value;
        else if (!strcmp(flag, "catalogue")) opt.catalogue = value;
        else if (!strcmp(flag, "cu")) opt.compute_units = number("--cu", value);
        else if (!strcmp(flag, "threads")) opt.threads = number("--threads", value);
        else if (!strcmp(flag, "decode")) decode = value;
        else if (!strcmp(flag, "beam")) { mode.kind = TUNEINFER_DECODE_BEAM; mode.beam_width = number("--beam", value); }
        else if (!strcmp(flag, "top")) mode.top = number("--top", value);
        else if (!strcmp(flag, "input")) input = value;
        else if (!strcmp(flag, "method")) opt.method = value;
        else if (!strcmp(flag, "system-db")) opt.system_db = value;
        else { fprintf(stderr, "error: unknown option '%s'\n", argv[i]); return TUNEINFER_ERR_USAGE; }
    }
    if (decode && !strcmp(decode, "miopen")) mode.kind = TUNEINFER_DECODE_GREEDY;
    else if (decode && strcmp(decode, "auto")) { fprintf(stderr, "error: --decode: unknown mode '%s'\n", decode); return TUNEINFER_ERR_USAGE; }
    int ranked = mode.kind == TUNEINFER_DECODE_BEAM;

    /* The problem: the remaining words joined by spaces, as `tuneinfer predict` does. */
    size_t len = 1;
    for (int j = i; j < argc; j++) len += strlen(argv[j]) + 1;
    char *problem = calloc(len, 1);
    if (!problem) return TUNEINFER_ERR_INTERNAL;
    for (int j = i; j < argc; j++) {
        if (j > i) strcat(problem, " ");
        strcat(problem, argv[j]);
    }
    if (!input && !*problem) {
        fprintf(stderr, "error: no PROBLEM (see the comment at the top of predict.c)\n");
        free(problem);
        return TUNEINFER_ERR_USAGE;
    }

    tuneinfer_predictor *p = NULL;
    int status = tuneinfer_open(&opt, &p);
    if (status != TUNEINFER_OK) {
        free(problem);
        return fail(status);
    }
    /* What the CLI says after loading (device auto computing on the CPU). */
    const char *note = tuneinfer_predictor_note(p);
    if (note) fprintf(stderr, "%s\n", note);
    int code = input ? batch(p, input, &mode) : predict_one(p, problem, &mode, ranked);
    tuneinfer_predictor_free(p);
    free(problem);
    return code;
}
