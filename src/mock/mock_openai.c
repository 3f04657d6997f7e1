/* mock_openai.c: reads OpenAI request bodies and writes OpenAI chunk, response, model-list
 * and error JSON. cJSON parses every body and escapes every user string; only fixed skeletons
 * and integers are spliced by hand. It knows nothing of sockets, HTTP framing or clocks. */
#include "mock_openai.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The generated text: token n is pieces[(n - 1) % count]. Plain ASCII letters with a leading
 * space, so they can be spliced into JSON strings without escaping. */
static const char *const pieces[] = {
    " the",     " model",   " token",  " server", " batch",  " stream",  " of",      " and",
    " a",       " to",      " in",     " is",     " that",   " for",     " with",    " on",
    " as",      " it",      " by",     " this",   " data",   " time",    " each",    " step",
    " load",    " rank",    " node",   " queue",  " cache",  " layer",   " prompt",  " reply",
    " fast",    " over",    " every",  " next",   " first",  " last",    " storm",   " signal",
    " put",     " under",   " steady", " window", " answer", " cluster", " request", " measure",
    " latency", " through",
};

#define PIECE_COUNT (sizeof pieces / sizeof pieces[0])

static const char *piece_for(int64_t token)
{
    return pieces[(uint64_t)(token - 1) % PIECE_COUNT];
}

const char *mock_openai_piece(int64_t token)
{
    return piece_for(token);
}

static void set_err(char *err, size_t err_len, const char *msg)
{
    snprintf(err, err_len, "%s", msg);
}

/* Sums the byte lengths of the prompt text; -1 when the shape is wrong. */
static int64_t chat_prompt_bytes(const cJSON *root, char *err, size_t err_len)
{
    const cJSON *messages = cJSON_GetObjectItemCaseSensitive(root, "messages");
    if (!cJSON_IsArray(messages) || cJSON_GetArraySize(messages) == 0) {
        set_err(err, err_len, "'messages' must be a non-empty array");
        return -1;
    }
    int64_t bytes = 0;
    for (const cJSON *m = messages->child; m; m = m->next) {
        if (!cJSON_IsObject(m)) {
            set_err(err, err_len, "each entry of 'messages' must be an object");
            return -1;
        }
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (cJSON_IsString(content)) {
            bytes += (int64_t)strlen(content->valuestring);
        } else if (cJSON_IsArray(content)) {
            /* Content parts ([{"type":"text","text":...}]): count their text. */
            for (const cJSON *part = content->child; part; part = part->next) {
                const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
                if (cJSON_IsString(text))
                    bytes += (int64_t)strlen(text->valuestring);
            }
        }
    }
    return bytes;
}

static int64_t completion_prompt_bytes(const cJSON *root, char *err, size_t err_len)
{
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(root, "prompt");
    if (cJSON_IsString(prompt))
        return (int64_t)strlen(prompt->valuestring);
    if (cJSON_IsArray(prompt) && cJSON_GetArraySize(prompt) > 0) {
        int64_t bytes = 0;
        for (const cJSON *p = prompt->child; p; p = p->next) {
            if (!cJSON_IsString(p))
                goto bad;
            bytes += (int64_t)strlen(p->valuestring);
        }
        return bytes;
    }
bad:
    set_err(err, err_len, "'prompt' must be a string");
    return -1;
}

/* max_completion_tokens wins over the older max_tokens when both are given, as in OpenAI. */
static int parse_max_tokens(const cJSON *root, int64_t *out, char *err, size_t err_len)
{
    const char *name = "max_completion_tokens";
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, name);
    if (item == NULL || cJSON_IsNull(item)) {
        name = "max_tokens";
        item = cJSON_GetObjectItemCaseSensitive(root, name);
    }
    if (item == NULL || cJSON_IsNull(item)) {
        *out = MOCK_OPENAI_DEFAULT_MAX_TOKENS;
        return 0;
    }
    double v = cJSON_IsNumber(item) ? item->valuedouble : 0;
    if (!(v >= 1 && v <= MOCK_OPENAI_MAX_MAX_TOKENS) || (double)(int64_t)v != v) {
        snprintf(err, err_len, "'%s' must be an integer from 1 to %d", name,
                 MOCK_OPENAI_MAX_MAX_TOKENS);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

static int parse_bool(const cJSON *obj, const char *name, bool *out, char *err, size_t err_len)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (item == NULL || cJSON_IsNull(item))
        return 0;
    if (!cJSON_IsBool(item)) {
        snprintf(err, err_len, "'%s' must be a boolean", name);
        return -1;
    }
    *out = cJSON_IsTrue(item);
    return 0;
}

static int add_raw_i64(cJSON *obj, const char *name, int64_t v)
{
    char num[24];
    snprintf(num, sizeof num, "%lld", (long long)v);
    return cJSON_AddRawToObject(obj, name, num) ? 0 : -1;
}

static void id_text(const struct mock_openai_reply *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s%llu", r->api == MOCK_API_CHAT ? "chatcmpl-mock-" : "cmpl-mock-",
             (unsigned long long)r->id);
}

/* Renders `{"id":..,"object":..,"created":..,"model":..,` once per request: every chunk starts
 * with it, and cJSON escapes the model name here so the per-token path never has to. */
static int build_chunk_head(struct mock_openai_reply *r)
{
    char id[48];
    id_text(r, id, sizeof id);
    cJSON *h = cJSON_CreateObject();
    if (!h)
        return -1;
    int rc = 0;
    rc |= cJSON_AddStringToObject(h, "id", id) ? 0 : -1;
    rc |= cJSON_AddStringToObject(
              h, "object", r->api == MOCK_API_CHAT ? "chat.completion.chunk" : "text_completion")
              ? 0
              : -1;
    rc |= add_raw_i64(h, "created", r->created_s);
    rc |= cJSON_AddStringToObject(h, "model", r->model) ? 0 : -1;
    char *text = rc == 0 ? cJSON_PrintUnformatted(h) : NULL;
    cJSON_Delete(h);
    if (!text)
        return -1;
    size_t n = strlen(text);
    r->chunk_head = malloc(n + 1);
    if (r->chunk_head) {
        memcpy(r->chunk_head, text, n + 1);
        r->chunk_head[n - 1] = ','; /* the closing brace: the choices follow */
        r->chunk_head_len = n;
    }
    cJSON_free(text);
    return r->chunk_head ? 0 : -1;
}

int mock_openai_parse_request(enum mock_api api, const char *body, size_t body_bytes,
                              const char *default_model, uint64_t id, int64_t created_s,
                              struct mock_openai_reply *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->api = api;
    out->id = id;
    out->created_s = created_s;
    cJSON *root = cJSON_ParseWithLength(body, body_bytes);
    if (!cJSON_IsObject(root)) {
        set_err(err, err_len,
                root ? "request body must be a JSON object" : "request body is not valid JSON");
        cJSON_Delete(root);
        return -1;
    }
    int rc = -1;
    int64_t prompt_bytes = api == MOCK_API_CHAT ? chat_prompt_bytes(root, err, err_len)
                                                : completion_prompt_bytes(root, err, err_len);
    if (prompt_bytes < 0)
        goto done;
    out->prompt_tokens = (prompt_bytes + 3) / 4;
    if (parse_max_tokens(root, &out->max_tokens, err, err_len) != 0 ||
        parse_bool(root, "stream", &out->stream, err, err_len) != 0)
        goto done;
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(root, "stream_options");
    if (cJSON_IsObject(opts) &&
        parse_bool(opts, "include_usage", &out->include_usage, err, err_len) != 0)
        goto done;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const char *name =
        cJSON_IsString(model) && model->valuestring[0] ? model->valuestring : default_model;
    rc = -2;
    set_err(err, err_len, "out of memory");
    out->model = strdup(name);
    if (out->model && build_chunk_head(out) == 0)
        rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0)
        mock_openai_reply_free(out);
    return rc;
}

void mock_openai_reply_free(struct mock_openai_reply *r)
{
    free(r->model);
    free(r->chunk_head);
    r->model = NULL;
    r->chunk_head = NULL;
    r->chunk_head_len = 0;
}

/* Appends `data: <head><middle>,"tokstorm_send_ns":<ns>}\n\n`. */
static int render_event(const struct mock_openai_reply *r, const char *middle, size_t middle_len,
                        int64_t send_ns, struct mock_buf *out)
{
    static const char stamp[] = ",\"tokstorm_send_ns\":";
    int rc = 0;
    rc |= mock_buf_append(out, "data: ", 6);
    rc |= mock_buf_append(out, r->chunk_head, r->chunk_head_len);
    rc |= mock_buf_append(out, middle, middle_len);
    rc |= mock_buf_append(out, stamp, sizeof stamp - 1);
    rc |= mock_buf_append_i64(out, send_ns);
    rc |= mock_buf_append(out, "}\n\n", 3);
    return rc ? -1 : 0;
}

#define LIT(s) s, sizeof(s) - 1

int mock_openai_render_role(const struct mock_openai_reply *r, int64_t send_ns,
                            struct mock_buf *out)
{
    if (r->api != MOCK_API_CHAT)
        return 0;
    return render_event(r,
                        LIT("\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                            "\"content\":\"\"},\"finish_reason\":null}]"),
                        send_ns, out);
}

void mock_openai_stamp_set(struct mock_openai_stamp *st, int64_t send_ns)
{
    char tmp[sizeof st->digits];
    size_t i = sizeof tmp;
    /* Work on the magnitude as unsigned so that INT64_MIN does not overflow. */
    uint64_t mag = send_ns < 0 ? (uint64_t)0 - (uint64_t)send_ns : (uint64_t)send_ns;
    do {
        tmp[--i] = (char)('0' + mag % 10);
        mag /= 10;
    } while (mag > 0);
    if (send_ns < 0)
        tmp[--i] = '-';
    st->len = sizeof tmp - i;
    memcpy(st->digits, tmp + i, st->len);
}

/* The pieces of a content event after the chunk head, in order. */
struct token_parts {
    const char *pre, *piece, *post;
    size_t pre_n, piece_n, post_n;
};

static void token_parts(const struct mock_openai_reply *r, int64_t token, struct token_parts *t)
{
    static const char chat_pre[] = "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"";
    static const char reasoning_pre[] =
        "\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"";
    static const char chat_post[] = "\"},\"finish_reason\":null}]";
    static const char text_pre[] = "\"choices\":[{\"index\":0,\"text\":\"";
    static const char text_post[] = "\",\"finish_reason\":null}]";
    bool chat = r->api == MOCK_API_CHAT;
    t->pre = chat ? chat_pre : text_pre;
    t->pre_n = chat ? sizeof chat_pre - 1 : sizeof text_pre - 1;
    if (chat && token <= r->reasoning_tokens) {
        t->pre = reasoning_pre;
        t->pre_n = sizeof reasoning_pre - 1;
    }
    t->piece = piece_for(token);
    t->piece_n = strlen(t->piece);
    t->post = chat ? chat_post : text_post;
    t->post_n = chat ? sizeof chat_post - 1 : sizeof text_post - 1;
}

static const char data_prefix[] = "data: ";
static const char stamp_key[] = ",\"tokstorm_send_ns\":";
static const char event_end[] = "}\n\n";

size_t mock_openai_token_bytes(const struct mock_openai_reply *r, int64_t token,
                               const struct mock_openai_stamp *st)
{
    struct token_parts t;
    token_parts(r, token, &t);
    return sizeof data_prefix - 1 + r->chunk_head_len + t.pre_n + t.piece_n + t.post_n +
           sizeof stamp_key - 1 + st->len + sizeof event_end - 1;
}

static char *put(char *p, const void *bytes, size_t n)
{
    memcpy(p, bytes, n);
    return p + n;
}

int mock_openai_render_token(const struct mock_openai_reply *r, int64_t token,
                             const struct mock_openai_stamp *st, struct mock_buf *out)
{
    struct token_parts t;
    token_parts(r, token, &t);
    size_t n = sizeof data_prefix - 1 + r->chunk_head_len + t.pre_n + t.piece_n + t.post_n +
               sizeof stamp_key - 1 + st->len + sizeof event_end - 1;
    if (mock_buf_reserve(out, n) != 0)
        return -1;
    char *p = out->data + out->end;
    p = put(p, data_prefix, sizeof data_prefix - 1);
    p = put(p, r->chunk_head, r->chunk_head_len);
    p = put(p, t.pre, t.pre_n);
    p = put(p, t.piece, t.piece_n);
    p = put(p, t.post, t.post_n);
    p = put(p, stamp_key, sizeof stamp_key - 1);
    p = put(p, st->digits, st->len);
    put(p, event_end, sizeof event_end - 1);
    out->end += n;
    return 0;
}

int mock_openai_render_finish(const struct mock_openai_reply *r, int64_t send_ns,
                              struct mock_buf *out)
{
    if (r->api == MOCK_API_CHAT)
        return render_event(
            r, LIT("\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]"),
            send_ns, out);
    return render_event(
        r, LIT("\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}]"), send_ns,
        out);
}

int mock_openai_render_usage(const struct mock_openai_reply *r, int64_t send_ns,
                             struct mock_buf *out)
{
    char middle[160];
    int n = snprintf(middle, sizeof middle,
                     "\"choices\":[],\"usage\":{\"prompt_tokens\":%lld,\"completion_tokens\":"
                     "%lld,\"total_tokens\":%lld}",
                     (long long)r->prompt_tokens, (long long)r->max_tokens,
                     (long long)(r->prompt_tokens + r->max_tokens));
    if (n < 0 || (size_t)n >= sizeof middle)
        return -1;
    return render_event(r, middle, (size_t)n, send_ns, out);
}

int mock_openai_render_done(struct mock_buf *out)
{
    return mock_buf_append(out, LIT("data: [DONE]\n\n"));
}

static int append_json(cJSON *root, struct mock_buf *out)
{
    char *text = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return -1;
    int rc = mock_buf_append_str(out, text);
    cJSON_free(text);
    return rc;
}

static cJSON *build_usage(const struct mock_openai_reply *r)
{
    cJSON *u = cJSON_CreateObject();
    if (u && (add_raw_i64(u, "prompt_tokens", r->prompt_tokens) != 0 ||
              add_raw_i64(u, "completion_tokens", r->max_tokens) != 0 ||
              add_raw_i64(u, "total_tokens", r->prompt_tokens + r->max_tokens) != 0)) {
        cJSON_Delete(u);
        return NULL;
    }
    return u;
}

int mock_openai_render_full(const struct mock_openai_reply *r, int64_t send_ns,
                            struct mock_buf *out)
{
    struct mock_buf text = {0};
    int rc = 0;
    for (int64_t t = 1; t <= r->max_tokens && rc == 0; t++)
        rc = mock_buf_append_str(&text, piece_for(t));
    rc |= mock_buf_append(&text, "", 1);
    if (rc != 0) {
        mock_buf_free(&text);
        return -1;
    }
    bool chat = r->api == MOCK_API_CHAT;
    char id[48];
    id_text(r, id, sizeof id);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", id);
    cJSON_AddStringToObject(root, "object", chat ? "chat.completion" : "text_completion");
    add_raw_i64(root, "created", r->created_s);
    cJSON_AddStringToObject(root, "model", r->model);
    cJSON *choices = cJSON_AddArrayToObject(root, "choices");
    cJSON *choice = cJSON_CreateObject();
    if (!cJSON_AddItemToArray(choices, choice)) {
        cJSON_Delete(choice);
        choice = NULL;
    }
    cJSON_AddNumberToObject(choice, "index", 0);
    if (chat) {
        cJSON *message = cJSON_AddObjectToObject(choice, "message");
        cJSON_AddStringToObject(message, "role", "assistant");
        cJSON_AddStringToObject(message, "content", mock_buf_head(&text));
    } else {
        cJSON_AddStringToObject(choice, "text", mock_buf_head(&text));
    }
    cJSON_AddStringToObject(choice, "finish_reason", "length");
    cJSON *usage = build_usage(r);
    if (!cJSON_AddItemToObject(root, "usage", usage))
        cJSON_Delete(usage);
    add_raw_i64(root, "tokstorm_send_ns", send_ns);
    mock_buf_free(&text);
    /* Every add above fails only when memory runs out (and is then a no-op on NULL), so one
     * count of the finished tree replaces a check after each call. */
    if (cJSON_GetArraySize(root) != 7 || cJSON_GetArraySize(choices) != 1 ||
        cJSON_GetArraySize(choice) != 3) {
        cJSON_Delete(root);
        return -1;
    }
    return append_json(root, out);
}

int mock_openai_render_models(const char *model, int64_t created_s, struct mock_buf *out)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "object", "list");
    cJSON *data = cJSON_AddArrayToObject(root, "data");
    cJSON *entry = cJSON_CreateObject();
    if (!cJSON_AddItemToArray(data, entry)) {
        cJSON_Delete(entry);
        entry = NULL;
    }
    cJSON_AddStringToObject(entry, "id", model);
    cJSON_AddStringToObject(entry, "object", "model");
    add_raw_i64(entry, "created", created_s);
    cJSON_AddStringToObject(entry, "owned_by", "tokstorm");
    if (cJSON_GetArraySize(root) != 2 || cJSON_GetArraySize(data) != 1 ||
        cJSON_GetArraySize(entry) != 4) {
        cJSON_Delete(root);
        return -1;
    }
    return append_json(root, out);
}

int mock_openai_render_error(int status, const char *message, struct mock_buf *out)
{
    const char *type = status == 429   ? "rate_limit_error"
                       : status >= 500 ? "server_error"
                                       : "invalid_request_error";
    cJSON *root = cJSON_CreateObject();
    cJSON *error = cJSON_AddObjectToObject(root, "error");
    if (!error) {
        cJSON_Delete(root);
        return -1;
    }
    cJSON_AddStringToObject(error, "message", message);
    cJSON_AddStringToObject(error, "type", type);
    cJSON_AddNumberToObject(error, "code", status);
    if (cJSON_GetArraySize(error) != 3) {
        cJSON_Delete(root);
        return -1;
    }
    return append_json(root, out);
}

int mock_openai_render_error_event(const char *message, struct mock_buf *out)
{
    int rc = mock_buf_append(out, LIT("data: "));
    rc |= mock_openai_render_error(500, message, out);
    rc |= mock_buf_append(out, LIT("\n\n"));
    return rc ? -1 : 0;
}

int mock_openai_render_malformed(const struct mock_openai_reply *r, struct mock_buf *out)
{
    int rc = mock_buf_append(out, LIT("data: "));
    rc |= mock_buf_append(out, r->chunk_head, r->chunk_head_len);
    if (r->api == MOCK_API_CHAT)
        rc |= mock_buf_append(out, LIT("\"choices\":[{\"index\":0,\"delta\":{\"content\":\" cut"));
    else
        rc |= mock_buf_append(out, LIT("\"choices\":[{\"index\":0,\"text\":\" cut"));
    rc |= mock_buf_append(out, LIT("\n\n"));
    return rc ? -1 : 0;
}

int mock_openai_render_huge(const struct mock_openai_reply *r, int64_t content_bytes,
                            int64_t send_ns, struct mock_buf *out)
{
    struct token_parts t;
    token_parts(r, 1, &t);
    size_t n = content_bytes > 0 ? (size_t)content_bytes : 0;
    int rc = mock_buf_append(out, LIT("data: "));
    rc |= mock_buf_append(out, r->chunk_head, r->chunk_head_len);
    rc |= mock_buf_append(out, t.pre, t.pre_n);
    if (rc == 0 && mock_buf_reserve(out, n) == 0) {
        memset(out->data + out->end, 'x', n);
        out->end += n;
    } else {
        rc = -1;
    }
    rc |= mock_buf_append(out, t.post, t.post_n);
    rc |= mock_buf_append(out, stamp_key, sizeof stamp_key - 1);
    rc |= mock_buf_append_i64(out, send_ns);
    rc |= mock_buf_append(out, event_end, sizeof event_end - 1);
    return rc ? -1 : 0;
}
