/* dataset_synth.c: the generated datasets, random and shared-prefix, built from a seeded word
 * generator so every rank (and every run with the same seed) builds the same list. Lengths
 * are in words, each about one token (see dataset_words); it knows no tokenizer, MPI or
 * network. */
#include "tokstorm/dataset.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Common English words: with the space before them, each is a single token in GPT-2's,
 * Llama 3's and Qwen's BPE vocabularies. 256 of them, so a word is one byte of the draw. */
static const char *const words[256] = {
    "the",    "of",     "and",    "to",     "in",     "is",     "that",   "for",    "it",
    "as",     "was",    "with",   "be",     "by",     "on",     "not",    "he",     "this",
    "are",    "or",     "his",    "from",   "at",     "which",  "but",    "have",   "an",
    "had",    "they",   "you",    "were",   "their",  "one",    "all",    "we",     "can",
    "her",    "has",    "there",  "been",   "if",     "more",   "when",   "will",   "would",
    "who",    "so",     "no",     "she",    "other",  "its",    "may",    "these",  "about",
    "than",   "some",   "time",   "into",   "only",   "could",  "new",    "them",   "then",
    "any",    "first",  "two",    "like",   "what",   "our",    "made",   "over",   "also",
    "did",    "many",   "after",  "most",   "people", "me",     "years",  "very",   "out",
    "up",     "such",   "state",  "work",   "well",   "my",     "way",    "how",    "must",
    "where",  "should", "because","each",   "just",   "used",   "those",  "through","even",
    "much",   "world",  "before", "life",   "long",   "great",  "your",   "same",   "own",
    "both",   "while",  "good",   "day",    "part",   "still",  "might",  "back",   "under",
    "never",  "old",    "place",  "public", "last",   "down",   "case",   "right",  "three",
    "year",   "school", "home",   "little", "small",  "power",  "form",   "high",   "point",
    "water",  "house",  "hand",   "war",    "against","again",  "found",  "few",    "number",
    "end",    "local",  "land",  "light",  "open",   "order",  "city",   "music",  "table",
    "river",  "green",  "road",   "book",   "paper",  "food",   "field",  "child",  "story",
    "question","answer","system", "model",  "data",   "line",   "word",   "name",   "team",
    "game",   "money",  "market", "plan",   "group",  "party",  "level",  "early",  "late",
    "week",   "night",  "morning","young",  "short",  "large",  "free",   "full",   "real",
    "best",   "better", "ready",  "simple", "clear",  "close",  "far",    "near",   "hard",
    "easy",   "strong", "weak",   "fast",   "slow",   "warm",   "cold",   "dark",   "bright",
    "red",    "blue",   "black",  "white",  "gold",   "stone",  "wood",   "glass",  "metal",
    "tree",   "rain",   "snow",   "wind",   "sun",    "moon",   "star",   "sea",    "hill",
    "bridge", "garden", "window", "door",   "wall",   "floor",  "room",   "office", "street",
    "train",  "car",    "ship",   "plane",  "letter", "song",   "film",   "picture","voice",
    "friend", "family", "mother", "father", "doctor", "teacher","student","worker", "leader",
    "history","nature", "health", "future",
};

char *dataset_words(struct ts_rng *rng, int64_t n)
{
    size_t cap = (size_t)n * 8 + 1, len = 0;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        const char *w = words[rng_next(rng) >> 56];
        size_t wl = strlen(w);
        if (len + wl + 2 > cap) {
            char *grown = realloc(s, cap * 2);
            if (grown == NULL) {
                free(s);
                return NULL;
            }
            s = grown;
            cap *= 2;
        }
        if (i > 0)
            s[len++] = ' ';
        memcpy(s + len, w, wl);
        len += wl;
    }
    s[len] = '\0';
    return s;
}

int64_t dataset_draw_len(struct ts_rng *rng, int64_t len, double range)
{
    int64_t lo = (int64_t)((double)len * (1.0 - range));
    int64_t hi = (int64_t)((double)len * (1.0 + range));
    if (lo < 1)
        lo = 1;
    if (hi < lo)
        hi = lo;
    return lo + (int64_t)(rng_next(rng) % (uint64_t)(hi - lo + 1));
}

/* Seeds of the generated kinds: distinct from the arrivals' (schedule.c) and each other's. */
#define SEED_RANDOM        UINT64_C(0x52414e444f4d2121) /* "RANDOM!!" */
#define SEED_SHARED_PREFIX UINT64_C(0x5052454649582121) /* "PREFIX!!" */

static int nomem(char *msg, size_t msg_len)
{
    snprintf(msg, msg_len, "out of memory generating the dataset");
    return TS_PROMPTS_ERR_NOMEM;
}

int dataset_random(struct ts_prompts *out, const struct ts_dataset_spec *s, char *msg,
                   size_t msg_len)
{
    struct ts_rng rng;
    rng_seed(&rng, s->seed ^ SEED_RANDOM);
    size_t n = (size_t)s->num_prompts;
    if ((out->items = calloc(n ? n : 1, sizeof *out->items)) == NULL)
        return nomem(msg, msg_len);
    for (size_t i = 0; i < n; i++) {
        struct ts_prompt *q = &out->items[i];
        /* Both lengths are drawn first, so the output length of prompt i does not depend on
         * how many words the prompts before it took. */
        int64_t in = dataset_draw_len(&rng, s->input_len_tokens, s->input_len_range);
        q->max_tokens = s->output_len_tokens > 0
                            ? dataset_draw_len(&rng, s->output_len_tokens, s->output_len_range)
                            : 0;
        if ((q->text = dataset_words(&rng, in)) == NULL)
            return nomem(msg, msg_len);
        out->count++;
    }
    return 0;
}

/* [{"role": "system", "content": prefix}, {"role": "user", "content": question}], compact. */
static char *system_and_user(const char *prefix, const char *question)
{
    cJSON *m = cJSON_CreateArray(), *sys = cJSON_CreateObject(), *user = cJSON_CreateObject();
    char *text = NULL;
    if (m && sys && user && cJSON_AddItemToArray(m, sys) && (sys = NULL, 1) &&
        cJSON_AddItemToArray(m, user) && (user = NULL, 1)) {
        cJSON *s0 = cJSON_GetArrayItem(m, 0), *u0 = cJSON_GetArrayItem(m, 1);
        if (cJSON_AddStringToObject(s0, "role", "system") &&
            cJSON_AddStringToObject(s0, "content", prefix) &&
            cJSON_AddStringToObject(u0, "role", "user") &&
            cJSON_AddStringToObject(u0, "content", question))
            text = cJSON_PrintUnformatted(m);
    }
    cJSON_Delete(m);
    cJSON_Delete(sys);
    cJSON_Delete(user);
    return text;
}

int dataset_shared_prefix(struct ts_prompts *out, const struct ts_dataset_spec *s, char *msg,
                          size_t msg_len)
{
    struct ts_rng rng;
    rng_seed(&rng, s->seed ^ SEED_SHARED_PREFIX);
    size_t n = (size_t)(s->groups * s->prompts_per_group);
    if ((out->items = calloc(n ? n : 1, sizeof *out->items)) == NULL)
        return nomem(msg, msg_len);
    /* Group-major order: prompts g*K .. g*K+K-1 share group g's system prompt. */
    for (int64_t g = 0; g < s->groups; g++) {
        char *prefix = dataset_words(&rng, s->prefix_len_tokens);
        if (prefix == NULL)
            return nomem(msg, msg_len);
        for (int64_t k = 0; k < s->prompts_per_group; k++) {
            struct ts_prompt *q = &out->items[out->count];
            q->max_tokens = s->output_len_tokens > 0 ? dataset_draw_len(&rng, s->output_len_tokens,
                                                                        s->output_len_range)
                                                     : 0;
            char *question = dataset_words(&rng, s->question_len_tokens);
            q->messages_json = question ? system_and_user(prefix, question) : NULL;
            free(question);
            if (q->messages_json == NULL) {
                free(prefix);
                return nomem(msg, msg_len);
            }
            out->count++;
        }
        free(prefix);
    }
    return 0;
}
