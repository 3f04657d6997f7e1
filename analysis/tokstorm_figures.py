"""tokstorm_figures: draws a run's (or several runs') figures with matplotlib's Agg backend and
writes them as PNG files or bytes. It reads runs through tokstorm_results only; it knows
nothing of HDF5 or HTML.

Each figure function returns (name, Figure); name is the PNG's file name without '.png'.
"""
import io
import os

import matplotlib

matplotlib.use("Agg")  # no display: must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, ScalarFormatter  # noqa: E402

import tokstorm_results as tr  # noqa: E402

SIZE_IN = (8, 5)
DPI = 100  # 800 x 500 pixels
PERCENTILES = (("p50", "-"), ("p90", "--"), ("p99", ":"))


def _title(ax, what, runs):
    """The figure's subject on the first line, the run(s) it shows on the second."""
    if len(runs) == 1:
        a = runs[0].attrs
        sub = f"model {a.get('model', '?')} at {a.get('url', '?')}, {a.get('start_time_utc', '')}"
    else:
        sub = " vs ".join(f"{tr.run_tag(i)}: {r.attrs.get('model', '?')} at "
                          f"{r.attrs.get('url', '?')}" for i, r in enumerate(runs))
        if len(sub) > 100:
            sub = f"{len(runs)} runs, named in the legend"
    ax.set_title(f"{what}\n{sub}", fontsize=10)


def _x_axis(ax, runs):
    """Log-scaled x with a tick at every level, labelled as plain numbers."""
    xs = sorted({lv.x for r in runs for lv in r.levels})
    ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    if len(xs) == 1:
        ax.set_xlim(xs[0] / 2, xs[0] * 2)
    ax.set_xlabel(runs[0].x_label())
    ax.grid(True, which="major", alpha=0.3)


def _latency_axis(ax, which, values):
    """Latencies span decades once a server queues: a log axis ("x" or "y") with ticks at
    1, 2, 5 x 10^k (more over a narrow range) labelled as plain numbers, or a linear one
    when all values lie within a factor of 4."""
    v = np.asarray([x for x in values if x is not None and x > 0], dtype=float)
    if len(v) == 0 or v.max() < 4 * v.min():
        return
    if which == "x":
        ax.set_xscale("log")
        axis = ax.xaxis
    else:
        ax.set_yscale("log")
        axis = ax.yaxis
    decades = np.log10(v.max() / v.min())
    subs = (1.0, 2.0, 5.0) if decades > 2 else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    axis.set_minor_formatter(NullFormatter())


def _new():
    fig, ax = plt.subplots(figsize=SIZE_IN, dpi=DPI)
    return fig, ax


def _series(run, key):
    return [lv.x for lv in run.levels], [lv.get(key) for lv in run.levels]


def fig_agg_tok_s(run):
    fig, ax = _new()
    x, y = _series(run, "agg_tok_s")
    ax.plot(x, y, "o-", label="whole level (Agg tok/s)")
    steady = [(lv.x, lv.steady_tok_s()) for lv in run.levels if lv.steady_tok_s() is not None]
    if steady:
        ax.plot(*zip(*steady), "s--", label="steady state (Steady tok/s)")
    ax.set_ylabel("aggregate output throughput (tokens/s)")
    ax.set_ylim(bottom=0)
    ax.legend()
    _x_axis(ax, [run])
    _title(ax, "Aggregate throughput", [run])
    fig.tight_layout()
    return "agg_tok_s", fig


def fig_per_req_tok_s(run):
    fig, ax = _new()
    ax.plot(*_series(run, "per_req_tok_s"), "o-")
    ax.set_ylabel("per-request output rate (tokens/s)")
    ax.set_ylim(bottom=0)
    _x_axis(ax, [run])
    _title(ax, "Per-request throughput (mean over successful requests)", [run])
    fig.tight_layout()
    return "per_req_tok_s", fig


def fig_percentiles(run, metric):
    """p50/p90/p99 of metric (ttft or itl) against x; in open loop also TTFT from the
    scheduled send, which shows the queueing a user would have suffered."""
    fig, ax = _new()
    shown = []
    for p, style in PERCENTILES:
        x, y = _series(run, f"{metric}_{p}_ms")
        ax.plot(x, y, "o" + style, label=p)
        shown += y
    if metric == "ttft" and run.open_loop:
        x, y = _series(run, "ttft_sched_p99_ms")
        ax.plot(x, y, "x-.", label="p99 from the scheduled send")
        shown += y
    _latency_axis(ax, "y", shown)
    ax.set_ylabel(f"{tr.METRIC_NAMES[metric]} (ms)")
    ax.legend()
    _x_axis(ax, [run])
    _title(ax, f"{tr.METRIC_NAMES[metric]} percentiles", [run])
    fig.tight_layout()
    return f"{metric}_percentiles", fig


def fig_cdf(run, metric):
    """One curve per level, or None when no level has values of metric."""
    curves = [(lv, lv.latency_cdf(metric)) for lv in run.levels]
    curves = [(lv, c) for lv, c in curves if c is not None]
    if not curves:
        return None
    fig, ax = _new()
    cmap = plt.get_cmap("viridis")
    for i, (lv, (ms, frac)) in enumerate(curves):
        ax.plot(ms, frac, color=cmap(i / max(1, len(curves) - 1)), label=lv.label())
    _latency_axis(ax, "x", np.concatenate([ms for _, (ms, _) in curves]))
    ax.set_xlabel(f"{tr.METRIC_NAMES[metric]} (ms)")
    ax.set_ylabel("fraction of values at or below")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, ncol=2 if len(curves) > 8 else 1)
    _title(ax, f"{tr.METRIC_NAMES[metric]} distribution per level", [run])
    fig.tight_layout()
    return f"cdf_{metric}", fig


def fig_timeseries(run, level):
    """Tokens/s and requests/s per bin over the level, or None when it has no time series."""
    ts = level.timeseries()
    if ts is None:
        return None
    t, bin_s, tok_s, done_s = ts
    edges = np.append(t, t[-1] + bin_s)
    fig, ax = _new()
    ax.stairs(tok_s, edges, label="tokens/s", linewidth=1.5)
    ax.set_xlabel("time since the level's start (s)")
    ax.set_ylabel("output tokens/s (all ranks)")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.stairs(done_s, edges, color="tab:orange", alpha=0.7, label="requests ended/s")
    ax2.set_ylabel("requests ended/s")
    ax2.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    # Below the axes: a level's series fills the plot from edge to edge.
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="upper center",
              bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    ax.grid(True, alpha=0.3)
    _title(ax, f"Time series at {level.label()}", [run])
    fig.tight_layout()
    return f"timeseries_{level.name}", fig


def run_figures(run):
    """Every figure of one run, in the order a reader wants them. A generator: each figure is
    drawn when the caller asks for the next, so one is open at a time however many levels."""
    yield fig_agg_tok_s(run)
    yield fig_per_req_tok_s(run)
    yield fig_percentiles(run, "ttft")
    yield fig_percentiles(run, "itl")
    cdfs = (fig_cdf(run, m) for m in tr.LATENCY_METRICS)
    series = (fig_timeseries(run, lv) for lv in run.levels)
    for fig in cdfs:
        if fig is not None:
            yield fig
    for fig in series:
        if fig is not None:
            yield fig


def fig_overlay(runs, key, what, ylabel, log_y=False):
    """One metric of several runs against x, one line per run."""
    fig, ax = _new()
    shown = []
    for i, r in enumerate(runs):
        x, y = _series(r, key)
        ax.plot(x, y, "o-", label=f"{tr.run_tag(i)}: {os.path.basename(r.path)}, "
                f"model {r.attrs.get('model', '?')}")
        shown += y
    if log_y:
        _latency_axis(ax, "y", shown)
    else:
        ax.set_ylim(bottom=0)
    ax.set_ylabel(ylabel)
    ax.legend()
    _x_axis(ax, runs)
    _title(ax, what, runs)
    fig.tight_layout()
    return f"compare_{key}", fig


def compare_figures(runs):
    """The overlays of tokstorm-compare, one at a time as run_figures."""
    yield fig_overlay(runs, "agg_tok_s", "Aggregate throughput", "output tokens/s")
    yield fig_overlay(runs, "per_req_tok_s", "Per-request throughput", "output tokens/s per request")
    yield fig_overlay(runs, "ttft_p99_ms", "TTFT p99", "TTFT p99 (ms)", log_y=True)
    yield fig_overlay(runs, "itl_p99_ms", "ITL p99", "ITL p99 (ms)", log_y=True)


def png_bytes(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    return buf.getvalue()


def save_all(figs, out_dir):
    """Writes each figure as out_dir/<name>.png; returns the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, fig in figs:
        path = os.path.join(out_dir, name + ".png")
        with open(path, "wb") as f:
            f.write(png_bytes(fig))
        paths.append(path)
    return paths
