/* test_summary.c: the per-level summary row and the --csv and --json texts: "-" in the table
 * is NaN in the row, empty in the CSV and null in the JSON; every field, in one order,
 * everywhere; the files are replaced whole. */
#include "tokstorm/summary.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static void level(struct ts_level_summary *s, int64_t c, uint64_t ok)
{
    memset(s, 0, sizeof *s);
    s->concurrency = c;
    s->ok = ok;
    s->err = 1;
    s->err_by_class[TS_ERR_TIMEOUT] = 1;
    s->output_tokens = ok * 16;
    s->wall_s = 2.5;
    s->agg_tok_s = (double)s->output_tokens / s->wall_s;
    s->per_req_tok_s = 96.25;
    s->start_s = 0.125;
    if (ok > 0) {
        s->steady_s = 1.5;
        s->steady_tok_s = 1234.5;
        s->ttft.count = ok;
        s->ttft.p50 = 50.25;
        s->ttft.p99 = 61.5;
        s->itl.count = ok * 15;
        s->itl.p50 = 9.75;
        s->itl.p99 = 10.5;
    }
}

int main(void)
{
    struct ts_level_summary lv[2];
    struct ts_summary_row rows[2];
    level(&lv[0], 8, 16);
    level(&lv[1], 64, 0); /* nothing succeeded: no latency, no steady window */
    summary_row_make(&lv[0], "level_8", 1, &rows[0]);
    summary_row_make(&lv[1], "level_64", 0, &rows[1]);

    CHECK_EQ_STR(rows[0].group, "level_8");
    CHECK_EQ_INT(rows[0].concurrency, 8);
    CHECK_EQ_INT(rows[0].output_tokens, 256);
    CHECK(rows[0].agg_tok_s == 102.4 && rows[0].steady_tok_s == 1234.5);
    CHECK(rows[0].ttft_p50_ms == 50.25 && rows[0].itl_p99_ms == 10.5 && rows[0].complete == 1);
    CHECK(isnan(rows[1].steady_tok_s) && isnan(rows[1].ttft_p50_ms) && isnan(rows[1].ttft_p99_ms));
    CHECK(isnan(rows[1].itl_p50_ms) && isnan(rows[1].itl_p99_ms) && rows[1].complete == 0);
    /* A success with a single token each has a TTFT but no inter-token gap. */
    lv[1].ok = 3;
    lv[1].ttft.count = 3;
    summary_row_make(&lv[1], "level_64", 0, &rows[1]);
    CHECK(!isnan(rows[1].ttft_p50_ms) && isnan(rows[1].itl_p50_ms));
    lv[1].ok = 0;
    lv[1].ttft.count = 0;
    summary_row_make(&lv[1], "level_64", 0, &rows[1]);

    /* The field table covers the struct, in order, without gaps or overlaps. */
    size_t end = 0;
    int ordered = 1;
    for (size_t i = 0; i < ts_summary_n_fields; i++) {
        ordered &= ts_summary_fields[i].offset >= end;
        size_t size = ts_summary_fields[i].kind == TS_SUMMARY_STR   ? sizeof rows[0].group
                      : ts_summary_fields[i].kind == TS_SUMMARY_I32 ? 4
                                                                    : 8;
        end = ts_summary_fields[i].offset + size;
    }
    CHECK(ordered);
    CHECK_EQ_INT(ts_summary_n_fields, 16);
    CHECK_EQ_STR(ts_summary_fields[0].name, "group");
    CHECK_EQ_STR(ts_summary_fields[ts_summary_n_fields - 1].name, "complete");

    char *csv = summary_csv(rows, 2);
    CHECK_EQ_STR(csv, "group,concurrency,rate,start_s,agg_tok_s,steady_tok_s,per_req_tok_s,"
                      "output_tokens,wall_s,ok,err,ttft_p50_ms,ttft_p99_ms,itl_p50_ms,itl_p99_ms,"
                      "complete\n"
                      "level_8,8,0,0.125,102.4,1234.5,96.25,256,2.5,16,1,50.25,61.5,9.75,10.5,1\n"
                      "level_64,64,0,0.125,0,,96.25,0,2.5,0,1,,,,,0\n");
    free(csv);
    csv = summary_csv(rows, 0);
    CHECK(csv != NULL && strchr(csv, '\n') == csv + strlen(csv) - 1); /* the header alone */
    free(csv);

    const char *hosts[] = {"n1", "n2"};
    struct ts_run_info run = {.version = "0.1.0",
                              .git_revision = "abc1234",
                              .url = "http://h:1",
                              .ranks = 4,
                              .hosts = hosts,
                              .n_hosts = 2,
                              .start_utc = "2026-01-01T00:00:00Z",
                              .options_json = "{\"max-tokens\":16}",
                              .mode = "closed"};
    struct ts_summary_doc doc = {.run = &run, .rows = rows, .levels = lv, .n = 2};
    char *text = summary_json(&doc);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    CHECK(j != NULL);
    CHECK(cJSON_GetObjectItem(j, "schema_version")->valueint == TS_SCHEMA_VERSION);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "end_time_utc"))); /* still running */
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "slurm_job_id"))); /* not under Slurm */
    CHECK(cJSON_GetObjectItem(j, "saturation") == NULL);         /* no search */
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "options"), "max-tokens")->valueint == 16);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "hosts")) == 2);
    cJSON *levels = cJSON_GetObjectItem(j, "levels");
    CHECK(cJSON_GetArraySize(levels) == 2);
    cJSON *l0 = cJSON_GetArrayItem(levels, 0), *l1 = cJSON_GetArrayItem(levels, 1);
    for (size_t i = 0; i < ts_summary_n_fields; i++)
        CHECK(cJSON_HasObjectItem(l0, ts_summary_fields[i].name));
    CHECK(cJSON_GetObjectItem(l0, "agg_tok_s")->valuedouble == 102.4);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(l1, "steady_tok_s")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(l1, "ttft_p99_ms")));
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(l0, "errors"), "timeout")->valueint == 1);
    cJSON *ttft = cJSON_GetObjectItem(cJSON_GetObjectItem(l0, "latency_ms"), "ttft");
    CHECK(cJSON_GetObjectItem(ttft, "p99")->valuedouble == 61.5);
    CHECK(cJSON_GetObjectItem(ttft, "count")->valueint == 16);
    cJSON_Delete(j);
    free(text);

    struct ts_saturation_point p = {
        .peak_tok_s = 9, .peak_level = 64, .knee_level = 8, .slo_level = -1};
    doc.end_utc = "2026-01-01T00:01:00Z";
    doc.point = &p;
    doc.stop_reason = "flat";
    text = summary_json(&doc);
    j = text ? cJSON_Parse(text) : NULL;
    cJSON *sat = cJSON_GetObjectItem(j, "saturation");
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "end_time_utc")),
                 "2026-01-01T00:01:00Z");
    CHECK(cJSON_GetObjectItem(sat, "knee_level")->valuedouble == 8);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(sat, "slo_level"))); /* no objective met */
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(sat, "stop_reason")), "flat");
    cJSON_Delete(j);
    free(text);

    /* Files: probed without a trace, replaced whole, refused when they exist. */
    char dir[] = "/tmp/tokstorm_test_summary_XXXXXX", path[128], msg[256] = "";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/s.json", dir);
    CHECK_EQ_INT(summary_probe("--json", path, 0, msg, sizeof msg), 0);
    CHECK(access(path, F_OK) != 0);
    CHECK_EQ_INT(summary_write_file(path, "one\n", msg, sizeof msg), 0);
    CHECK_EQ_INT(summary_write_file(path, "two\n", msg, sizeof msg), 0);
    FILE *f = fopen(path, "r");
    char got[16] = "";
    CHECK(f != NULL && fgets(got, sizeof got, f) != NULL);
    if (f)
        fclose(f);
    CHECK_EQ_STR(got, "two\n");
    CHECK_EQ_INT(summary_probe("--json", path, 0, msg, sizeof msg), -1);
    CHECK(strstr(msg, "--json: ") == msg && strstr(msg, "exists (use --force"));
    CHECK_EQ_INT(summary_probe("--json", path, 1, msg, sizeof msg), 0);
    char missing[160];
    snprintf(missing, sizeof missing, "%s/no/s.csv", dir);
    CHECK_EQ_INT(summary_probe("--csv", missing, 1, msg, sizeof msg), -1);
    CHECK(strstr(msg, "--csv: cannot create") == msg);
    CHECK_EQ_INT(summary_write_file(missing, "x", msg, sizeof msg), -1);
    unlink(path);
    CHECK_EQ_INT(rmdir(dir), 0); /* nothing else was left there */
    return check_report("summary");
}
