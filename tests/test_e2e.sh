#!/usr/bin/env bash
# End to end: mpirun -np 3 tokstorm against tokstorm-mock with a known timing model, then
# the results file read back with h5py and checked against values computed from the
# options and the mock's model, not from tokstorm's own figures.
source "$(dirname "$0")/lib.sh" "$1"

TTFT_MS=50
start_mock e2e --ttft ${TTFT_MS}ms --step 10ms --max-batch 64 --stats
OUT="$WORK/e2e.h5"
set +e
timeout 240 "${MPIRUN[@]}" -np 3 "$TOKSTORM" --url "$MOCK_URL" --model mock \
  --levels 1,3,8,32 --max-tokens 16 --requests-per-stream 2 --out "$OUT" \
  >"$WORK/e2e.stdout" 2>"$WORK/e2e.stderr"
rc=$?
set -e
cat "$WORK/e2e.stdout"
check "tokstorm exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || cat "$WORK/e2e.stderr"
check "stderr is quiet" test ! -s "$WORK/e2e.stderr"
check "h5dump reads the file" sh -c "h5dump -H '$OUT' >/dev/null"

$PY - "$OUT" "$WORK/e2e.stdout" $TTFT_MS "$SLOW" <<'PYEOF' >"$WORK/e2e.checks"
import sys, re, h5py, numpy as np
path, stdout_path, ttft_ms, slow = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
ranks, rps, max_tokens, levels = 3, 2, 16, [1, 3, 8, 32]
f = h5py.File(path, "r")
def check(name, cond):
    print(("ok   " if cond else "FAIL ") + name)
root = f.attrs
check("root attrs: ranks, levels, model, api, url, start time, command line",
      root["ranks"] == ranks and list(root["levels"]) == levels and root["model"] == "mock"
      and root["api"] == "chat" and root["url"].startswith("http://127.0.0.1:")
      and root["start_time_utc"].endswith("Z") and "--levels 1,3,8,32" in root["command_line"]
      and root["schema_version"] == 1 and root["slurm_job_id"] == "")
table = {}
for line in open(stdout_path):
    cols = [c.strip() for c in line.split("|")]
    if len(cols) == 10 and cols[0].isdigit():
        table[int(cols[0])] = cols
check("one table row per level, in order", list(table) == levels)
rk = f["ranks"][:]
check("ranks table: every rank, its host and the address it reaches the server from",
      sorted(rk["rank"]) == list(range(ranks)) and all(x for x in rk["host"])
      and all(x == b"127.0.0.1" for x in rk["address"]))
check("ranks on one host: clock offsets within their uncertainty of 0 (one shared clock)",
      all(abs(o) <= u for o, u in zip(rk["clock_offset_ns"], rk["clock_uncertainty_ns"])))
all_ttft = []
for c in levels:
    g = f["level_%d" % c]
    a = g.attrs
    r = g["requests"][:]
    ok = r[r["error_class"] == 0]
    check(f"C={c}: Ok = C x requests-per-stream", a["ok"] == c * rps and len(ok) == c * rps)
    check(f"C={c}: no errors", a["err"] == 0 and len(r) == c * rps)
    check(f"C={c}: Tokens = C x rps x max_tokens exactly",
          a["output_tokens"] == c * rps * max_tokens and ok["output_tokens"].sum() == c * rps * max_tokens)
    check(f"C={c}: token counts came from usage", (ok["tokens_from_usage"] == 1).all())
    check(f"C={c}: every content event arrived, one token each",
          (ok["content_events"] == max_tokens).all() and a["tokens_per_event"] == 1.0)
    check(f"C={c}: rank of every record in range", ((r["rank"] >= 0) & (r["rank"] < ranks)).all())
    want_ranks = {rk for rk in range(ranks) if c // ranks + (1 if rk < c % ranks else 0) > 0}
    check(f"C={c}: records from exactly the ranks that had streams", set(r["rank"]) == want_ranks)
    check(f"C={c}: streams 0..C-1, rps requests each",
          sorted(np.unique(r["stream"], return_counts=True)[1].tolist()) == [rps] * c
          and set(r["stream"]) == set(range(c)))
    check(f"C={c}: times ordered start <= first byte <= first token <= end",
          ((r["start_s"] >= 0) & (r["first_byte_s"] >= r["start_s"]) &
           (r["first_token_s"] >= r["first_byte_s"]) & (r["end_s"] >= r["first_token_s"])).all())
    ttft = (ok["first_token_s"] - ok["start_s"]) * 1000
    med = float(np.median(ttft))
    # Per level within 40% (C=1 has 2 requests: one hiccup of this VM moves its median);
    # the 15% bound is checked on all requests of the run below.
    all_ttft.extend(ttft.tolist())
    check(f"C={c}: TTFT median {med:.1f} ms within {40 * slow}% of the mock's {ttft_ms} ms",
          abs(med - ttft_ms) <= 0.40 * slow * ttft_ms)
    check(f"C={c}: ttft_p50_ms attribute {a['ttft_p50_ms']:.2f} within {40 * slow}% of {ttft_ms}",
          abs(a["ttft_p50_ms"] - ttft_ms) <= 0.40 * slow * ttft_ms)
    wall = float(r["end_s"].max() - r["start_s"].min())
    check(f"C={c}: wall_s = latest end - earliest start, all ranks ({a['wall_s']:.4f} vs {wall:.4f})",
          abs(a["wall_s"] - wall) < 1e-6)
    check(f"C={c}: requests start at the level's synchronised start (within {5 * slow} ms)",
          0 <= r["start_s"].min() - a["start_s"] < 0.005 * slow)
    ts = g["timeseries"][:]
    check(f"C={c}: time series sums to the level's tokens and requests",
          ts["tokens"].sum() == a["output_tokens"] and ts["ok"].sum() == a["ok"] and ts["err"].sum() == 0)
    # Steady state: within the window where all C streams were busy, the mock delivers one
    # token per 10 ms step per stream (TTFT aside), so steady tok/s <= C x 100 and close to it.
    check(f"C={c}: steady {a['steady_tok_s']:.1f} tok/s within (0.6, 1.02] x C x 100 over {a['steady_s']:.3f} s",
          0.6 * c * 100 < a["steady_tok_s"] <= 1.02 * c * 100 and 0 < a["steady_s"] <= a["wall_s"] + 0.001)
    h = g["hist_ttft"][:]
    check(f"C={c}: stored TTFT histogram holds every success",
          h["count"].sum() == a["ok"] == a["ttft_count"] and (h["lo_ns"] <= h["hi_ns"]).all())
    check(f"C={c}: percentiles ordered min <= p50 <= p90 <= p99 <= p999 <= max",
          all(a[f"{m}_min_ms"] <= a[f"{m}_p50_ms"] <= a[f"{m}_p90_ms"] <= a[f"{m}_p99_ms"]
              <= a[f"{m}_p999_ms"] <= a[f"{m}_max_ms"] for m in ("ttft", "itl", "tpot", "e2e")))
    check(f"C={c}: clock table has every rank", sorted(g["clock"][:]["rank"]) == list(range(ranks)))
    want_agg = c * rps * max_tokens / wall
    check(f"C={c}: agg_tok_s = C x rps x max_tokens / wall from the rows",
          abs(a["agg_tok_s"] - want_agg) < 1e-5 * want_agg)
    rate = np.mean(ok["output_tokens"] / (ok["end_s"] - ok["start_s"]))
    check(f"C={c}: per_req_tok_s = mean of per-request rates", abs(a["per_req_tok_s"] - rate) < 1e-3 * rate)
    # The mock's model: 15 decode steps of 10 ms after the first token -> ITL ~ 10 ms.
    check(f"C={c}: ITL p50 {a['itl_p50_ms']:.2f} ms near the 10 ms step", 8.5 <= a["itl_p50_ms"] <= 11.5)
    # The mock stamps every chunk: one delay per content event of every success, a TTFT error
    # per success and a gap error per later event. Loopback on a shared 2-core box: loose
    # bounds, but a client that stamped arrivals late by a step (10 ms) would fail them.
    check(f"C={c}: stamp_delay_count = C x rps x max_tokens, ttft_error and itl_error counts match",
          a["stamp_delay_count"] == c * rps * max_tokens and a["ttft_error_count"] == c * rps
          and a["itl_error_count"] == c * rps * (max_tokens - 1))
    check(f"C={c}: stamp delay p50 {a['stamp_delay_p50_ms']:.3f} ms in [0, {5 * slow}], "
          f"ITL error p50 {a['itl_error_p50_ms']:.3f} ms < {2 * slow}",
          0 <= a["stamp_delay_p50_ms"] <= 5 * slow and a["itl_error_p50_ms"] < 2 * slow
          and a["stamp_delay_min_ms"] <= a["stamp_delay_p50_ms"] <= a["stamp_delay_max_ms"])
    # The distributions behind those attributes are stored too; in closed loop every request
    # has a send lag (written - handed to libcurl) and it is never negative.
    counts = {m: (g[f"hist_{m}"][:]["count"].sum(), g[f"hist_{m}"].attrs["count"], a[f"{m}_count"])
              for m in ("stamp_delay", "ttft_error", "itl_error", "send_lag")}
    check(f"C={c}: hist_stamp_delay, hist_ttft_error, hist_itl_error, hist_send_lag hold every value",
          all(n1 == n2 == n3 > 0 for n1, n2, n3 in counts.values())
          and counts["send_lag"][0] == a["ok"] + a["err"])
    lag = r["start_s"] - r["scheduled_s"]
    check(f"C={c}: send lag = start - scheduled >= 0, p99 {a['send_lag_p99_ms']:.3f} ms",
          (lag >= 0).all() and a["send_lag_p99_ms"] >= 0)
    row = table.get(c)
    if row:
        printed = dict(agg=float(row[1]), steady=float(row[2]), per_req=float(row[3]), tokens=int(row[4]),
                       wall=float(row[5]), ok=int(row[6]), err=int(row[7]))
        p50, p99 = (float(x) for x in row[8].split("/"))
        i50, i99 = (float(x) for x in row[9].split("/"))
        check(f"C={c}: printed row equals the file's attributes",
              printed["agg"] == round(a["agg_tok_s"], 1) and printed["per_req"] == round(a["per_req_tok_s"], 1)
              and printed["steady"] == round(a["steady_tok_s"], 1)
              and printed["tokens"] == a["output_tokens"] and printed["wall"] == round(a["wall_s"], 2)
              and printed["ok"] == a["ok"] and printed["err"] == a["err"]
              and p50 == round(a["ttft_p50_ms"], 1) and p99 == round(a["ttft_p99_ms"], 1)
              and i50 == round(a["itl_p50_ms"], 2) and i99 == round(a["itl_p99_ms"], 2))
med = float(np.median(all_ttft))
check(f"all {len(all_ttft)} requests: TTFT median {med:.1f} ms within {15 * slow}% of the mock's {ttft_ms} ms",
      abs(med - ttft_ms) <= 0.15 * slow * ttft_ms)
PYEOF
check "all 109 file checks ran" test "$(wc -l <"$WORK/e2e.checks")" -eq 109
while read -r status name; do
  check "$name" test "$status" = ok
done <"$WORK/e2e.checks"
kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null || true
# The mock counts what it served: 2 x (1+3+8+32) generations plus the preflight's, and one
# preconnect probe (GET /v1/models) per stream per level.
check "the mock generated exactly 89 times" grep -q "generations=89 " "$WORK/e2e.err"
check "the mock answered 89 + 44 preconnect probes" grep -q "requests=133 " "$WORK/e2e.err"
# Keep-alive: one connection per stream of the largest level (32) plus the preflight's, reused
# from level to level, probe to request, and request to request.
check "connections reused: 33 opened for 89 requests" grep -q "connections=33 " "$WORK/e2e.err"
finish e2e
