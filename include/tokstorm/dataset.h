/* dataset.h: the run's prompt list, from a file (JSON Lines, ShareGPT) or generated (random,
 * shared-prefix), the same on every rank: files are read whole and generation is seeded, so
 * each rank builds the list itself and no broadcast is needed. Token lengths are estimates
 * (no tokenizer): see dataset_estimate_tokens and the generator's words. No MPI, no network. */
#ifndef TOKSTORM_DATASET_H
#define TOKSTORM_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "tokstorm/prompts.h"
#include "tokstorm/schedule.h" /* struct ts_rng */

enum ts_dataset_kind {
    TS_DATASET_JSONL = 0,         /* prompts.h's JSON Lines file */
    TS_DATASET_SHAREGPT = 1,      /* a ShareGPT JSON array of conversations */
    TS_DATASET_RANDOM = 2,        /* generated words of a target length */
    TS_DATASET_SHARED_PREFIX = 3, /* groups sharing a long generated system prompt */
};

/* ShareGPT filters, as vLLM's benchmark prunes its samples (estimated tokens). */
#define TS_SHAREGPT_MIN_TOKENS        4    /* prompt or answer shorter than this: dropped */
#define TS_SHAREGPT_MAX_PROMPT_TOKENS 1024 /* prompt longer than this: dropped */
#define TS_SHAREGPT_MAX_TOTAL_TOKENS  2048 /* prompt + answer longer than this: dropped */

struct ts_dataset_spec {
    enum ts_dataset_kind kind;
    const char *path;              /* jsonl, sharegpt: the file */
    uint64_t seed;                 /* sampling and generation */
    int64_t num_prompts;           /* sharegpt: at most this many (0 = all); random: exactly */
    int sharegpt_output_len;       /* sharegpt: max_tokens = the reference answer's tokens */
    int64_t input_len_tokens;      /* random: target prompt length */
    double input_len_range;        /* random: lengths drawn from input_len * (1 +- range) */
    int64_t output_len_tokens;     /* random, shared-prefix: max_tokens (0 = --max-tokens) */
    double output_len_range;       /* ... drawn from output_len * (1 +- range) */
    int64_t prefix_len_tokens;     /* shared-prefix: the system prompt's length */
    int64_t groups;                /* shared-prefix: distinct system prompts */
    int64_t prompts_per_group;     /* shared-prefix: questions per system prompt */
    int64_t question_len_tokens;   /* shared-prefix: each question's length */
};

/* "jsonl", "sharegpt", "random", "shared-prefix". Returns 0 or -1. */
int dataset_kind_from_name(const char *name, enum ts_dataset_kind *out);
const char *dataset_kind_name(enum ts_dataset_kind kind);

/* Builds the prompt list into *out. Returns 0 or a TS_PROMPTS_ERR_* code with one line in msg
 * (naming the file where there is one); *out is then empty. ShareGPT: TS_PROMPTS_ERR_FORMAT
 * for a file that is not an array of conversations, TS_PROMPTS_ERR_EMPTY when no
 * conversation survives the filters. */
int dataset_load(struct ts_prompts *out, const struct ts_dataset_spec *spec, char *msg,
                 size_t msg_len);

/* The estimate of text's length in tokens without a tokenizer: one token per 4 bytes, rounded
 * up (what tokstorm-mock counts too). */
int64_t dataset_estimate_tokens(const char *text);

/* FNV-1a 64 over every prompt as sent: its kind, its text or messages JSON, and its
 * max_tokens, in order. Two runs that send the same requests have the same hash. */
uint64_t dataset_hash(const struct ts_prompts *p);

/* The spec's parameters that apply to its kind, as a JSON object (malloc'd; NULL when out of
 * memory), for the results file. */
char *dataset_params_json(const struct ts_dataset_spec *spec);

/* ---- dataset_synth.c: the generated kinds ---- */

/* n words of generated text into a malloc'd string (NULL when out of memory). The words are
 * common lowercase English words, each one token (with its leading space) in the BPE
 * vocabularies of the usual models, so n words are about n tokens. */
char *dataset_words(struct ts_rng *rng, int64_t n);

/* A length drawn uniformly from [len * (1 - range), len * (1 + range)], at least 1. */
int64_t dataset_draw_len(struct ts_rng *rng, int64_t len, double range);

int dataset_random(struct ts_prompts *out, const struct ts_dataset_spec *spec, char *msg,
                   size_t msg_len);
int dataset_shared_prefix(struct ts_prompts *out, const struct ts_dataset_spec *spec, char *msg,
                          size_t msg_len);

#endif
