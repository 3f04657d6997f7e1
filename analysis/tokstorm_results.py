"""tokstorm_results: reads a tokstorm results file (HDF5, schema in README.md) into plain
Python objects and formats its tables as text. It knows nothing of matplotlib or HTML.

Every figure a script shows comes from the level groups' attributes (agg_tok_s, ttft_p99_ms,
...), their hist_<m> and timeseries datasets, or their per-request rows; nothing is
recomputed differently from what tokstorm printed.
"""
import math
import os
import sys

import h5py
import numpy as np

# The schema versions these scripts understand: the one place to extend when it changes.
SCHEMA_VERSIONS = (1,)

# Exit statuses of the three scripts (tokstorm's own convention: 2 is bad input).
EXIT_RUNTIME = 1
EXIT_INPUT = 2

LATENCY_METRICS = ("ttft", "itl", "tpot", "e2e")
METRIC_NAMES = {"ttft": "TTFT", "itl": "ITL", "tpot": "TPOT", "e2e": "End-to-end latency"}


class ResultsError(Exception):
    """A file the scripts cannot read as a tokstorm results file (one line, names the file)."""


def fail(prog, message, status):
    """Prints 'prog: message' on stderr and exits with status."""
    print(f"{prog}: {message}", file=sys.stderr)
    sys.exit(status)


def run_main(prog, main):
    """Calls main(); a ResultsError ends the script with one line and status 2, an OSError
    (an output that cannot be written) with one line and status 1."""
    try:
        main()
    except ResultsError as e:
        fail(prog, str(e), EXIT_INPUT)
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        fail(prog, f"{where}{e.strerror or e}", EXIT_RUNTIME)


def attr_value(v):
    """An HDF5 attribute as a plain Python value (str, int, float or list)."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray):
        return [attr_value(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        return v.item()
    return v


class Level:
    """One finished level (level_<C>) or rate (rate_<R>) group of a run."""

    def __init__(self, group, open_loop):
        self.name = group.name.lstrip("/")
        self.attrs = {k: attr_value(v) for k, v in group.attrs.items()}
        self.open_loop = open_loop
        # The x of every figure: C in closed loop, the offered rate (req/s) in open loop.
        self.x = float(self.attrs["rate"]) if open_loop else int(self.attrs["concurrency"])
        self._group = group

    def label(self):
        """'C=4' or '20 req/s'."""
        return f"{format_x(self.x)} req/s" if self.open_loop else f"C={self.x}"

    def get(self, key, default=0.0):
        return self.attrs.get(key, default)

    def steady_tok_s(self):
        """Steady-state tok/s, or None when the level had no steady window."""
        return self.attrs["steady_tok_s"] if self.get("steady_s") > 0 else None

    def latency_cdf(self, metric):
        """(ms, fraction) points of metric's cumulative distribution, or None when there are
        no values; drawn as a line through the points, it is flat where no value lies.

        From hist_<metric> when stored: bucket [lo, hi] holds count values, so the CDF rises
        from its value before the bucket at lo to cum/total at hi + 1 ns (values spread
        evenly inside a bucket, 0.4% wide at most), and stays flat over empty buckets, which
        the file leaves out. Without it, from the per-request rows (TTFT and e2e of successful
        requests only; ITL and TPOT need every token's arrival, which the rows do not hold),
        as a step at each value."""
        name = f"hist_{metric}"
        if name in self._group:
            h = self._group[name][:]
            count = h["count"].astype(np.float64)
            if count.sum() == 0:
                return None
            after = np.cumsum(count) / count.sum()
            before = after - count / count.sum()
            lo_ms, hi_ms = h["lo_ns"] / 1e6, (h["hi_ns"] + 1) / 1e6
        elif metric in ("ttft", "e2e") and "requests" in self._group:
            r = self._group["requests"][:]
            r = r[(r["error_class"] == 0) & (r["first_token_s"] >= 0)]  # -1: no token came
            end = r["first_token_s"] if metric == "ttft" else r["end_s"]
            lo_ms = hi_ms = np.sort((end - r["start_s"]) * 1e3)
            if len(lo_ms) == 0:
                return None
            after = np.arange(1, len(lo_ms) + 1) / len(lo_ms)
            before = after - 1 / len(lo_ms)
        else:
            return None
        ms = np.column_stack((lo_ms, hi_ms)).ravel()
        frac = np.column_stack((before, after)).ravel()
        return ms, frac

    def timeseries(self):
        """(bin start t_s, bin_s, tokens per s, requests ended per s), or None when not stored."""
        if "timeseries" not in self._group:
            return None
        ts = self._group["timeseries"][:]
        if len(ts) == 0:
            return None
        bin_s = float(self._group["timeseries"].attrs.get("bin_s", 0.1))
        done = (ts["ok"] + ts["err"]).astype(np.float64)
        return ts["t_s"], bin_s, ts["tokens"] / bin_s, done / bin_s


class Run:
    """A results file: its root attributes and its finished levels in x order."""

    def __init__(self, path):
        self.path = path
        self.levels = []
        self.skipped = []  # level groups without a summary (the run stopped during them)
        self._file = open_results(path)  # stays open: figures read datasets as they are drawn
        self.attrs = {k: attr_value(v) for k, v in self._file.attrs.items()}
        self.open_loop = self.attrs.get("mode") == "open"
        for name, obj in self._file.items():
            if not isinstance(obj, h5py.Group) or not name.startswith(("level_", "rate_")):
                continue
            if "agg_tok_s" not in obj.attrs:
                self.skipped.append(name)
                continue
            self.levels.append(Level(obj, self.open_loop))
        self.levels.sort(key=lambda lv: lv.x)
        if not self.levels:
            self._file.close()
            raise ResultsError(f"{path}: no finished level in this results file")

    def x_label(self):
        return "offered rate (requests/s)" if self.open_loop else "concurrency C (streams)"

    def x_name(self):
        return "Rate" if self.open_loop else "C"

    def describe(self):
        """One line: model, URL, start time, mode, ranks."""
        a = self.attrs
        mode = "open loop" if self.open_loop else "closed loop"
        return (f"model {a.get('model', '?')}, {a.get('url', '?')}, "
                f"{a.get('start_time_utc', '?')}, {mode}, {a.get('ranks', '?')} ranks")

    def ranks(self):
        """The /ranks table as a list of dicts (empty when absent)."""
        if "ranks" not in self._file:
            return []
        t = self._file["ranks"][:]
        return [{k: attr_value(row[k]) for k in t.dtype.names} for row in t]

    def saturation(self):
        """The saturation search's verdict as one line, or None when there was none."""
        a = self.attrs
        if "saturation_peak_tok_s" not in a:
            return None
        # As tokstorm prints it (report.c, report_saturation).
        at = (lambda v: f"rate={v:g} req/s") if self.open_loop else (lambda v: f"C={v:g}")
        line = (f"peak {a['saturation_peak_tok_s']:.1f} tok/s at {at(a['saturation_peak_level'])}; "
                f"95% of it from {at(a['saturation_knee_level'])}")
        if a.get("saturation_slo_level", -1) >= 0:
            line += (f"; within the SLOs up to {at(a['saturation_slo_level'])} "
                     f"(goodput {a['saturation_slo_goodput_req_s']:.2f} req/s)")
        return line + f"; stopped: {a.get('saturation_stop_reason', '?')}"

    def level_at(self, x):
        for lv in self.levels:
            if lv.x == x:
                return lv
        return None


def open_results(path):
    """Opens path read-only after checking it is a tokstorm results file of a known schema;
    raises ResultsError with a one-line reason otherwise."""
    if not os.path.exists(path):
        raise ResultsError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ResultsError(f"{path}: is a directory, not a results file")
    try:
        is_hdf5 = h5py.is_hdf5(path)
    except OSError as e:
        raise ResultsError(f"{path}: cannot read it: {e.strerror or e}") from None
    if not is_hdf5:
        raise ResultsError(f"{path}: not an HDF5 file (expected a tokstorm results file)")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise ResultsError(f"{path}: HDF5 cannot open it: {e}") from None
    if "schema_version" not in f.attrs:
        f.close()
        raise ResultsError(f"{path}: not a tokstorm results file (no schema_version attribute on /)")
    version = attr_value(f.attrs["schema_version"])
    if version not in SCHEMA_VERSIONS:
        f.close()
        known = ", ".join(str(v) for v in SCHEMA_VERSIONS)
        raise ResultsError(f"{path}: schema_version {version} is not supported "
                           f"(these scripts read schema_version {known})")
    return f


def warn_skipped(prog, run):
    for name in run.skipped:
        print(f"{prog}: {run.path}: {name} has no summary (the run stopped during it); skipped",
              file=sys.stderr)


def format_x(x):
    """A level's x as tokstorm names it: 4, 20, 0.5."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def _fmt(v, digits):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


# The run's table, as tokstorm prints it: (header, a level's cell as text).
RESULT_COLUMNS = (
    ("Agg tok/s", lambda lv: _fmt(lv.get("agg_tok_s"), 1)),
    ("Steady tok/s", lambda lv: _fmt(lv.steady_tok_s(), 1)),
    ("Per-req tok/s", lambda lv: _fmt(lv.get("per_req_tok_s"), 1)),
    ("Tokens", lambda lv: str(lv.get("output_tokens", 0))),
    ("Wall(s)", lambda lv: _fmt(lv.get("wall_s"), 2)),
    ("Ok", lambda lv: str(lv.get("ok", 0))),
    ("Err", lambda lv: str(lv.get("err", 0))),
    ("TTFT p50/p99 ms", lambda lv: f"{lv.get('ttft_p50_ms'):.1f}/{lv.get('ttft_p99_ms'):.1f}"),
    ("ITL p50/p99 ms", lambda lv: f"{lv.get('itl_p50_ms'):.2f}/{lv.get('itl_p99_ms'):.2f}"),
)


def result_rows(run):
    """The run's table: a header and one row of strings per level."""
    header = [run.x_name()] + [name for name, _ in RESULT_COLUMNS]
    rows = [[format_x(lv.x)] + [cell(lv) for _, cell in RESULT_COLUMNS] for lv in run.levels]
    return header, rows


# What tokstorm-compare sets side by side: (header, unit, attribute, decimals).
COMPARE_METRICS = (
    ("Agg", "tok/s", "agg_tok_s", 1),
    ("Per-req", "tok/s", "per_req_tok_s", 1),
    ("TTFT p99", "ms", "ttft_p99_ms", 1),
)


def run_tag(i):
    """How tables and legends name the i-th run given (0-based): #1, #2, ... (not letters,
    which would collide with the concurrency column C)."""
    return f"#{i + 1}"


def ratio(value, base):
    """value / base, or None when either is missing or base is 0."""
    if value is None or base is None or base == 0:
        return None
    return value / base


def check_comparable(runs):
    """Runs of different kinds (closed and open loop) have no common x axis."""
    kinds = {r.open_loop for r in runs}
    if len(kinds) > 1:
        closed = next(r.path for r in runs if not r.open_loop)
        opened = next(r.path for r in runs if r.open_loop)
        raise ResultsError(f"{closed} is a closed-loop run and {opened} an open-loop run: "
                           "compare runs of one kind")


def compare_rows(runs):
    """The comparison: two header lines and, per x of any run, one row of strings. For each
    metric: every run's value, and for every run after the first its ratio to the first
    ('-' where a run lacks the level)."""
    xs = sorted({lv.x for r in runs for lv in r.levels})
    head, units = [runs[0].x_name()], [""]
    for title, unit, _, _ in COMPARE_METRICS:
        for i in range(len(runs)):
            head.append(f"{run_tag(i)} {title}")
            units.append(unit)
            if i > 0:
                head.append(f"{run_tag(i)}/{run_tag(0)}")
                units.append("")
    rows = []
    for x in xs:
        row = [format_x(x)]
        for _, _, key, digits in COMPARE_METRICS:
            values = []
            for r in runs:
                lv = r.level_at(x)
                values.append(None if lv is None else float(lv.get(key)))
            for i, v in enumerate(values):
                row.append(_fmt(v, digits))
                if i > 0:
                    row.append(_fmt(ratio(v, values[0]), 3))
        rows.append(row)
    return [head, units], rows


def format_text_table(header_lines, rows):
    """Right-aligned columns separated by ' | ', a rule under the header."""
    widths = [max(len(line[i]) for line in header_lines + rows) for i in range(len(rows[0]))]
    out = [" | ".join(c.rjust(w) for c, w in zip(line, widths)).rstrip() for line in header_lines]
    out.append("-+-".join("-" * w for w in widths))
    out += [" | ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(out)
