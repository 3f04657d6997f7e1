/* mock_totals.c: merging and printing the --stats totals. It knows nothing of where they were
 * counted (loop, connections, engine) or how workers send them to the parent. */
#include "mock_totals.h"

void mock_totals_merge(struct mock_totals *dst, const struct mock_totals *src)
{
    dst->requests += src->requests;
    dst->generations += src->generations;
    dst->cancelled += src->cancelled;
    dst->tokens += src->tokens;
    dst->connections += src->connections;
    dst->max_connections += src->max_connections;
    dst->max_concurrent_streams += src->max_concurrent_streams;
    dst->max_batch_occupancy += src->max_batch_occupancy;
    dst->max_decode_batch += src->max_decode_batch;
    for (int f = 0; f < MOCK_FAULT__COUNT; f++)
        dst->faults[f] += src->faults[f];
}

void mock_totals_print(FILE *out, const struct mock_totals *t, bool faults)
{
    fprintf(out,
            "tokstorm-mock: stats: requests=%lld generations=%lld cancelled=%lld tokens=%lld "
            "connections=%lld max_connections=%lld max_concurrent_streams=%lld "
            "max_batch_occupancy=%lld max_decode_batch=%lld\n",
            (long long)t->requests, (long long)t->generations, (long long)t->cancelled,
            (long long)t->tokens, (long long)t->connections, (long long)t->max_connections,
            (long long)t->max_concurrent_streams, (long long)t->max_batch_occupancy,
            (long long)t->max_decode_batch);
    if (!faults)
        return;
    fprintf(out, "tokstorm-mock: faults:");
    for (int f = MOCK_FAULT_NONE + 1; f < MOCK_FAULT__COUNT; f++)
        fprintf(out, " %s=%lld", mock_fault_name((enum mock_fault)f), (long long)t->faults[f]);
    fprintf(out, "\n");
}
