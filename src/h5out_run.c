/* h5out_run.c: the results file's root group: what the run was (attributes), who took part
 * (/ranks), the one-row-per-level /summary, the saturation point and the end time. The
 * levels' groups are h5out.c's. */
#include "tokstorm/h5out.h"

#include <stddef.h>
#include <stdlib.h>

#include "h5out_internal.h"
#include "tokstorm/summary.h"

static int attr_i64_array(hid_t obj, const char *name, const int64_t *v, size_t n)
{
    hsize_t dims[1] = {n};
    hid_t s = H5Screate_simple(1, dims, NULL);
    int rc = h5_attr_write(obj, name, H5T_NATIVE_INT64, s, v);
    H5Sclose(s);
    return rc;
}

/* A 1-D attribute of n variable-length UTF-8 strings. */
static int attr_str_array(hid_t obj, const char *name, const char *const *v, size_t n)
{
    hsize_t dims[1] = {n};
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t s = H5Screate_simple(1, dims, NULL);
    int rc = h5_attr_write(obj, name, t, s, v);
    H5Sclose(s);
    H5Tclose(t);
    return rc;
}

int h5out_write_run(struct ts_h5out *h, const struct ts_run_info *i, char *msg, size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    hid_t r = h->file;
    int bad = 0;
    bad |= h5_attr_i64(r, "schema_version", TS_H5_SCHEMA_VERSION);
    bad |= h5_attr_str(r, "tokstorm_version", i->version);
    bad |= h5_attr_str(r, "git_revision", i->git_revision);
    bad |= h5_attr_str(r, "url", i->url);
    bad |= h5_attr_str(r, "model", i->model);
    bad |= h5_attr_str(r, "api", i->api);
    bad |= attr_i64_array(r, "levels", i->levels, i->n_levels);
    bad |= h5_attr_i64(r, "ranks", i->ranks);
    bad |= attr_str_array(r, "hosts", i->hosts, i->n_hosts);
    bad |= h5_attr_str(r, "mpi_library_version", i->mpi_library_version);
    bad |= h5_attr_str(r, "start_time_utc", i->start_utc);
    bad |= h5_attr_str(r, "end_time_utc", ""); /* set when the run ends (h5out_write_end) */
    bad |= h5_attr_str(r, "command_line", i->command_line);
    bad |= h5_attr_str(r, "options_json", i->options_json);
    bad |= h5_attr_str(r, "prompts", i->prompts_path);
    bad |= h5_attr_i64(r, "prompt_count", i->prompt_count);
    bad |= h5_attr_str(r, "dataset", i->dataset);
    bad |= h5_attr_str(r, "dataset_params_json", i->dataset_params);
    bad |= h5_attr_str(r, "dataset_hash", i->dataset_hash);
    bad |= h5_attr_i64(r, "dataset_seed", i->seed);
    bad |= h5_attr_i64(r, "max_tokens", i->max_tokens);
    bad |= h5_attr_i64(r, "requests_per_stream", i->requests_per_stream);
    bad |= h5_attr_f64(r, "duration_s", i->duration_s);
    bad |= h5_attr_i64(r, "warmup", i->warmup);
    bad |= h5_attr_f64(r, "timeout_s", i->timeout_s);
    bad |= h5_attr_f64(r, "temperature", i->temperature);
    bad |= h5_attr_i64(r, "ignore_eos", i->ignore_eos);
    bad |= h5_attr_str(r, "mode", i->mode);
    if (i->n_rates) {
        hsize_t dims[1] = {i->n_rates};
        hid_t sp = H5Screate_simple(1, dims, NULL);
        bad |= h5_attr_write(r, "rates", H5T_NATIVE_DOUBLE, sp, i->rates);
        H5Sclose(sp);
    }
    bad |= h5_attr_str(r, "arrival", i->arrival);
    bad |= h5_attr_f64(r, "burstiness", i->burstiness);
    bad |= h5_attr_i64(r, "seed", i->seed);
    bad |= h5_attr_i64(r, "max_concurrency", i->max_concurrency);
    bad |= h5_attr_i64(r, "requests", i->requests);
    bad |= h5_attr_i64(r, "until_saturated", i->until_saturated);
    bad |= h5_attr_f64(r, "slo_ttft_s", i->slo_ttft_s);
    bad |= h5_attr_f64(r, "slo_tpot_s", i->slo_tpot_s);
    bad |= h5_attr_str(r, "slurm_job_id", i->slurm_job_id);
    bad |= h5_attr_str(r, "slurm_job_name", i->slurm_job_name);
    bad |= h5_attr_str(r, "slurm_nodelist", i->slurm_nodelist);
    bad |= h5_attr_str(r, "slurm_tasks_per_node", i->slurm_tasks_per_node);
    if (bad || H5Fflush(r, H5F_SCOPE_GLOBAL) < 0)
        return h5out_fail(h, msg, msg_len, "cannot write the run attributes");
    return 0;
}

int h5out_write_ranks(struct ts_h5out *h, const struct ts_rank_info *ranks, size_t n, char *msg,
                      size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    hid_t host = h5_fixed_string(sizeof ranks->host), addr = h5_fixed_string(sizeof ranks->address);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof *ranks);
    H5Tinsert(t, "rank", offsetof(struct ts_rank_info, rank), H5T_NATIVE_INT32);
    H5Tinsert(t, "host", offsetof(struct ts_rank_info, host), host);
    H5Tinsert(t, "address", offsetof(struct ts_rank_info, address), addr);
    H5Tinsert(t, "clock_offset_ns", offsetof(struct ts_rank_info, clock_offset_ns),
              H5T_NATIVE_INT64);
    H5Tinsert(t, "clock_uncertainty_ns", offsetof(struct ts_rank_info, clock_uncertainty_ns),
              H5T_NATIVE_INT64);
    int rc = h5_write_table(h->file, "ranks", t, ranks, n);
    H5Tclose(t);
    H5Tclose(host);
    H5Tclose(addr);
    if (rc != 0 || H5Fflush(h->file, H5F_SCOPE_GLOBAL) < 0)
        return h5out_fail(h, msg, msg_len, "cannot write the ranks table");
    return 0;
}

int h5out_write_saturation(struct ts_h5out *h, const struct ts_saturation_point *p,
                           const char *stop_reason, char *msg, size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    hid_t r = h->file;
    int bad = 0;
    bad |= h5_attr_f64(r, "saturation_peak_tok_s", p->peak_tok_s);
    bad |= h5_attr_f64(r, "saturation_peak_level", p->peak_level);
    bad |= h5_attr_f64(r, "saturation_knee_level", p->knee_level);
    bad |= h5_attr_f64(r, "saturation_slo_level", p->slo_level);
    bad |= h5_attr_f64(r, "saturation_slo_goodput_req_s", p->slo_goodput_req_s);
    bad |= h5_attr_str(r, "saturation_stop_reason", stop_reason);
    if (bad || H5Fflush(r, H5F_SCOPE_GLOBAL) < 0)
        return h5out_fail(h, msg, msg_len, "cannot write the saturation point");
    return 0;
}

int h5out_write_end(struct ts_h5out *h, const char *end_utc, char *msg, size_t msg_len)
{
    if (h->failed)
        return h5out_refuse(h, msg, msg_len);
    if (h5_attr_str(h->file, "end_time_utc", end_utc) != 0 ||
        H5Fflush(h->file, H5F_SCOPE_GLOBAL) < 0)
        return h5out_fail(h, msg, msg_len, "cannot write the end time");
    return 0;
}

hid_t h5out_summary_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct ts_summary_row));
    hid_t group = h5_fixed_string(sizeof((struct ts_summary_row *)0)->group);
    for (size_t i = 0; i < ts_summary_n_fields; i++) {
        const struct ts_summary_field *f = &ts_summary_fields[i];
        hid_t type = f->kind == TS_SUMMARY_STR   ? group
                     : f->kind == TS_SUMMARY_I64 ? H5T_NATIVE_INT64
                     : f->kind == TS_SUMMARY_I32 ? H5T_NATIVE_INT32
                                                 : H5T_NATIVE_DOUBLE;
        H5Tinsert(t, f->name, f->offset, type);
    }
    H5Tclose(group);
    return t;
}

int h5out_summary_append(struct ts_h5out *h, const struct ts_summary_row *row)
{
    if (h->summary < 0 || h5_append(h->summary, h->summary_type, h->summary_rows, row, 1) != 0)
        return -1;
    h->summary_rows++;
    return 0;
}
