#!/usr/bin/env bash
# analysis/: tokstorm-plot, tokstorm-compare and tokstorm-report on the results files of real
# sweeps against tokstorm-mock. Every PNG is checked as an image (signature, IHDR size,
# content); the comparison's ratios against values read here with h5py, not through the
# scripts' module; the HTML report in headless Chromium (its DOM and a screenshot); and the
# one-line errors, exit 2, for files that are not tokstorm results of a known schema.
source "$(dirname "$0")/lib.sh" "$1"

AN="$SRC/analysis"
command -v chromium >/dev/null || { echo "chromium missing: bash scripts/deps.sh --tests"; exit 1; }

# Two servers with different timing models, so that the runs differ and their ratios mean
# something: B decodes at half A's speed. A batch of 4 makes C=8 queue.
start_mock a --ttft 20ms --step 5ms --max-batch 4
URL_A=$MOCK_URL
start_mock b --ttft 30ms --step 10ms --max-batch 4
URL_B=$MOCK_URL
sweep() { # sweep NAME URL tokstorm-options...: one mpirun, results in $WORK/NAME.h5
  local name=$1 url=$2
  shift 2
  timeout 60 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --url "$url" --model "mock-$name" --max-tokens 8 \
    --out "$WORK/$name.h5" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" && rc=0 || rc=$?
  check "sweep $name: tokstorm exits 0" test "$rc" -eq 0
  [ "$rc" -eq 0 ] || cat "$WORK/$name.out" "$WORK/$name.err"
}
sweep a "$URL_A" --levels 1,2,4 --requests-per-stream 2
sweep b "$URL_B" --levels 1,2,4,8 --requests-per-stream 2
sweep open "$URL_A" --rates 50,100 --requests 20

# Checks every PNG named on stdin (one path a line): signature, IHDR size >= 400 x 300, and
# content: many distinct colours and real variance, read back with matplotlib.
png_checks() {
  $PY -c '
import os, sys, struct
import matplotlib.image as mpimg, numpy as np
for path in sys.stdin.read().split():
    data = open(path, "rb").read()
    ok = data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24]) if ok else (0, 0)
    img = mpimg.imread(path)
    rgb = img[..., :3].reshape(-1, 3)
    colours = len(np.unique((rgb * 255).round().astype(np.uint8), axis=0))
    good = ok and w >= 400 and h >= 300 and img.shape[:2] == (h, w) and colours > 20 and rgb.std() > 0.02
    print(("ok   " if good else "FAIL ") + f"{os.path.basename(path)}: {w}x{h}, {colours} colours, std {rgb.std():.3f}")
'
}
check_lines() { # reads "ok   NAME" / "FAIL NAME" lines from a file; expects N of them
  check "$2 checks ran ($3)" test "$(wc -l <"$1")" -eq "$3"
  while read -r status name; do
    check "$name" test "$status" = ok
  done <"$1"
}

# tokstorm-plot: one figure of each kind per run, and one time series per level.
want_a="agg_tok_s per_req_tok_s ttft_percentiles itl_percentiles cdf_ttft cdf_itl cdf_tpot cdf_e2e"
for run in a b open; do
  "$AN/tokstorm-plot" "$WORK/$run.h5" -o "$WORK/plot_$run" >"$WORK/plot_$run.out" 2>"$WORK/plot_$run.err" \
    && rc=0 || rc=$?
  check "plot $run: exits 0 with a quiet stderr" test "$rc" -eq 0 -a ! -s "$WORK/plot_$run.err"
  [ "$rc" -eq 0 ] || cat "$WORK/plot_$run.err"
done
levels_of() { $PY -c "import h5py, sys; f = h5py.File(sys.argv[1], 'r'); print(' '.join(n for n in f if n.startswith(('level_', 'rate_'))))" "$1"; }
for run in a b open; do
  want=$want_a
  for lv in $(levels_of "$WORK/$run.h5"); do want="$want timeseries_$lv"; done
  got=$(xargs -n1 basename -s .png <"$WORK/plot_$run.out" | sort | tr '\n' ' ')
  check "plot $run: prints the path of every figure: $want" \
    test "$got" = "$(echo "$want" | tr ' ' '\n' | sort | tr '\n' ' ')"
done
check "plot open: the time series are named by rate" test -f "$WORK/plot_open/timeseries_rate_50.png"
cat "$WORK"/plot_{a,b,open}.out >"$WORK/plot.pngs"
png_checks <"$WORK/plot.pngs" >"$WORK/png.checks"
check_lines "$WORK/png.checks" "PNG" "$(wc -l <"$WORK/plot.pngs")"

# tokstorm-compare: the table's values and ratios against the attributes read here.
"$AN/tokstorm-compare" "$WORK/a.h5" "$WORK/b.h5" -o "$WORK/cmp" >"$WORK/cmp.out" 2>"$WORK/cmp.err" \
  && rc=0 || rc=$?
cat "$WORK/cmp.out"
check "compare: exits 0 with a quiet stderr" test "$rc" -eq 0 -a ! -s "$WORK/cmp.err"
$PY - "$WORK/a.h5" "$WORK/b.h5" "$WORK/cmp.out" <<'PYEOF' >"$WORK/cmp.checks"
import sys, h5py
a_path, b_path, out_path = sys.argv[1:]
def check(name, cond):
    print(("ok   " if cond else "FAIL ") + name)
def levels(path):
    f = h5py.File(path, "r")
    return {int(f[g].attrs["concurrency"]): dict(f[g].attrs) for g in f if g.startswith("level_")}
A, B = levels(a_path), levels(b_path)
lines = open(out_path).read().splitlines()
check("compare: names the runs #1 and #2 with their files and models",
      lines[0].startswith(f"#1: {a_path}: model mock-a,") and lines[1].startswith(f"#2: {b_path}: model mock-b,"))
table = [l for l in lines if "|" in l]
head = [c.strip() for c in table[0].split("|")]
rows = {int(c[0]): c for c in ([x.strip() for x in l.split("|")] for l in table[2:])}
check("compare: one row per level of either run", sorted(rows) == sorted(set(A) | set(B)))
metrics = [("Agg", "agg_tok_s"), ("Per-req", "per_req_tok_s"), ("TTFT p99", "ttft_p99_ms")]
for c in sorted(rows):
    for title, key in metrics:  # the ratio columns share a name: found after each #2 column
        i1, i2 = head.index(f"#1 {title}"), head.index(f"#2 {title}")
        r = rows[c]
        want1 = f"{A[c][key]:.1f}" if c in A else "-"
        want2 = f"{B[c][key]:.1f}" if c in B else "-"
        check(f"C={c} {title}: values {r[i1]} and {r[i2]} are the attributes {want1} and {want2}",
              r[i1] == want1 and r[i2] == want2 and head[i2 + 1] == "#2/#1")
        if c in A and c in B:
            want = B[c][key] / A[c][key]
            check(f"C={c} {title}: ratio {r[i2 + 1]} = {want:.5f}", abs(float(r[i2 + 1]) - want) <= 0.0005 + 1e-9)
        else:
            check(f"C={c} {title}: no ratio without both runs", r[i2 + 1] == "-")
# B decodes at half A's speed: its per-request rate must show it at C=1, i.e. the ratio is not
# trivially 1 (8 tokens: A ~ 8/(20+35 ms), B ~ 8/(30+70 ms)).
r1 = float(rows[1][head.index("#1 Per-req") + 2])
check(f"C=1: per-request ratio {r1} shows B slower (0.4 .. 0.75)", 0.4 <= r1 <= 0.75)
PYEOF
check_lines "$WORK/cmp.checks" "compare" 27
grep '\.png$' "$WORK/cmp.out" >"$WORK/cmp.pngs" || true
check "compare -o: four overlay figures" test "$(wc -l <"$WORK/cmp.pngs")" -eq 4
png_checks <"$WORK/cmp.pngs" >"$WORK/cmp_png.checks"
check_lines "$WORK/cmp_png.checks" "overlay PNG" 4

# A level group without its summary (a run that stopped during it) is skipped with a warning.
cp "$WORK/b.h5" "$WORK/cut.h5"
$PY -c "import h5py, sys; g = h5py.File(sys.argv[1], 'r+')['level_8']; [g.attrs.__delitem__(k) for k in list(g.attrs)]" "$WORK/cut.h5"
"$AN/tokstorm-compare" "$WORK/a.h5" "$WORK/cut.h5" >"$WORK/cut.out" 2>"$WORK/cut.err" && rc=0 || rc=$?
check "compare: an unfinished level is skipped with one warning" \
  sh -c "[ $rc -eq 0 ] && grep -q 'level_8 has no summary' '$WORK/cut.err' && [ \$(wc -l <'$WORK/cut.err') -eq 1 ] && ! grep -q '^8 ' '$WORK/cut.out'"

# tokstorm-report: self-contained, and rendered by Chromium.
"$AN/tokstorm-report" "$WORK/a.h5" --compare "$WORK/b.h5" -o "$WORK/report.html" \
  >"$WORK/report.out" 2>"$WORK/report.err" && rc=0 || rc=$?
check "report: exits 0 with a quiet stderr" test "$rc" -eq 0 -a ! -s "$WORK/report.err"
# Before rendering, a copy gets a probe that writes each image's natural size and position,
# and each table's bottom, into the DOM (the report itself has no script).
$PY - "$WORK/report.html" "$WORK/probe.html" <<'PYEOF'
import sys
probe = """<script>
window.addEventListener("load", function () {
  const imgs = Array.from(document.images);
  for (const img of imgs) {
    const r = img.getBoundingClientRect();
    img.dataset.naturalWidth = img.naturalWidth;
    img.dataset.naturalHeight = img.naturalHeight;
    img.dataset.bottom = Math.round(r.bottom);
  }
  for (const t of document.querySelectorAll("table"))
    t.dataset.bottom = Math.round(t.getBoundingClientRect().bottom);
  for (const img of imgs) img.removeAttribute("src");  // keeps the dump small
  document.body.dataset.probe = "done";
});
</script>"""
page = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(page.replace("</body>", probe + "</body>"))
PYEOF
# shellcheck disable=SC2054 # the comma is --window-size's
CHROME=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2400
  --user-data-dir="$WORK/chromium")
timeout 60 "${CHROME[@]}" --virtual-time-budget=5000 --dump-dom "file://$WORK/probe.html" \
  >"$WORK/dom.html" 2>"$WORK/chromium.err" || cat "$WORK/chromium.err"
timeout 60 "${CHROME[@]}" --screenshot="$WORK/shot.png" "file://$WORK/report.html" \
  >/dev/null 2>>"$WORK/chromium.err" || cat "$WORK/chromium.err"
$PY - "$WORK/a.h5" "$WORK/b.h5" "$WORK/report.html" "$WORK/dom.html" "$WORK/shot.png" <<'PYEOF' >"$WORK/report.checks"
import sys, re, base64, struct, io, h5py, numpy as np
from html.parser import HTMLParser
import matplotlib.image as mpimg
a_path, b_path, report_path, dom_path, shot_path = sys.argv[1:]
def check(name, cond):
    print(("ok   " if cond else "FAIL ") + name)

class Dom(HTMLParser):
    """Rows (class and cell texts) per table class, and every img's attributes."""
    def __init__(self):
        super().__init__()
        self.tables, self.imgs, self.table, self.row, self.cell, self.body = {}, [], None, None, None, {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("class")
            self.tables[self.table] = {"bottom": int(a.get("data-bottom", 10**9)), "rows": []}
        elif tag == "tr" and self.table:
            self.row = (a.get("class"), [])
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""
        elif tag == "img":
            self.imgs.append(a)
        elif tag == "body":
            self.body = a
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.row is not None and self.cell is not None:
            self.row[1].append(self.cell.strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.tables[self.table]["rows"].append(self.row)
            self.row = None
        elif tag == "table":
            self.table = None

page = open(report_path).read()
srcs = re.findall(r'\ssrc="([^"]*)"', page)
check(f"report: self-contained: {len(srcs)} images, all data: URIs; no link, href, url() or @import",
      srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
      and not re.search(r"<link|\shref=|url\(|@import", page))
check("report: no script of its own", "<script" not in page)
bad = []
for s in srcs:
    png = base64.b64decode(s.split(",", 1)[1])
    w, h = struct.unpack(">II", png[16:24])
    img = mpimg.imread(io.BytesIO(png), format="png")
    if png[:8] != b"\x89PNG\r\n\x1a\n" or w < 400 or h < 300 or img[..., :3].std() <= 0.02:
        bad.append((w, h))
check(f"report: every inlined PNG decodes, >= 400x300, not blank ({len(bad)} bad)", not bad)

dom = Dom()
dom.feed(open(dom_path).read())
check("chromium: the page loaded and the probe ran", dom.body.get("data-probe") == "done")
f = h5py.File(a_path, "r")
want = sorted((int(f[g].attrs["concurrency"]), f[g].attrs) for g in f if g.startswith("level_"))
res = dom.tables.get("results", {"rows": [], "bottom": 10**9})
level_rows = [cells for cls, cells in res["rows"] if cls == "level"]
check(f"chromium: the results table has one row per level ({len(level_rows)} for {len(want)})",
      len(level_rows) == len(want) and len(want) == 3)
check("chromium: its rows give each level's C, Agg tok/s, Ok and TTFT p50/p99 as in the file",
      all(r[0] == str(c) and r[1] == f"{a['agg_tok_s']:.1f}" and r[6] == str(a["ok"])
          and r[8] == f"{a['ttft_p50_ms']:.1f}/{a['ttft_p99_ms']:.1f}" for r, (c, a) in zip(level_rows, want)))
cmp_rows = [cells for cls, cells in dom.tables.get("compare", {"rows": []})["rows"] if cls == "compare-level"]
check(f"chromium: the comparison table has one row per level of either run ({len(cmp_rows)})",
      [r[0] for r in cmp_rows] == ["1", "2", "4", "8"])
meta = {cells[0]: cells[1] for cls, cells in dom.tables.get("meta", {"rows": []})["rows"] if len(cells) == 2}
meta.pop("attribute", None)  # the header row
check("chromium: the metadata table holds every root attribute, with the model and URL",
      set(meta) == set(f.attrs) and meta["model"] == "mock-a" and meta["url"] == f.attrs["url"])
sizes = [(int(i.get("data-natural-width", 0)), int(i.get("data-natural-height", 0))) for i in dom.imgs]
check(f"chromium: {len(sizes)} images (8 figures, 3 time series, 4 overlays) all decoded at 800x500",
      len(sizes) == 15 and all(s == (800, 500) for s in sizes))
first_bottom = int(dom.imgs[0].get("data-bottom", 10**9)) if dom.imgs else 10**9
check(f"chromium: the results table (bottom {res['bottom']} px) and the first figure (bottom "
      f"{first_bottom} px) lie within the 2400 px screenshot", res["bottom"] < first_bottom <= 2400)

data = open(shot_path, "rb").read()
w, h = struct.unpack(">II", data[16:24])
shot = mpimg.imread(shot_path)[..., :3]
# matplotlib's first line colour (#1f77b4) appears only where a figure was drawn.
blue = (np.abs(shot - np.array([0x1f, 0x77, 0xb4]) / 255).max(axis=2) < 0.04).sum()
check(f"chromium: the screenshot is a 1280x2400 PNG with a figure's blue lines ({blue} px)",
      data[:8] == b"\x89PNG\r\n\x1a\n" and (w, h) == (1280, 2400) and blue > 200)
PYEOF
check_lines "$WORK/report.checks" "report" 11

# Errors: one line on stderr naming the file and the reason, exit 2, from every script.
echo "not hdf5" >"$WORK/text.h5"
$PY -c "import h5py, sys; h5py.File(sys.argv[1], 'w').attrs['model'] = 'x'" "$WORK/other.h5"
cp "$WORK/a.h5" "$WORK/v2.h5"
$PY -c "import h5py, sys; h5py.File(sys.argv[1], 'r+').attrs['schema_version'] = 2" "$WORK/v2.h5"
expect_error() { # expect_error WHAT MESSAGE COMMAND...: exit 2, one stderr line holding MESSAGE
  local what=$1 message=$2
  shift 2
  "$@" >"$WORK/err.out" 2>"$WORK/err.err" && rc=0 || rc=$?
  check "$what: exit 2 ($rc), one line: $(head -c 150 "$WORK/err.err")" \
    sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$WORK/err.err') -eq 1 ] && grep -qF -- '$message' '$WORK/err.err'"
}
for s in plot compare report; do
  args=()
  [ $s = compare ] && args=("$WORK/a.h5")
  [ $s = report ] && args=(-o "$WORK/x.html")
  expect_error "$s: text file" "tokstorm-$s: $WORK/text.h5: not an HDF5 file" \
    "$AN/tokstorm-$s" "${args[@]}" "$WORK/text.h5"
  expect_error "$s: HDF5 without schema_version" \
    "tokstorm-$s: $WORK/other.h5: not a tokstorm results file (no schema_version attribute on /)" \
    "$AN/tokstorm-$s" "${args[@]}" "$WORK/other.h5"
  expect_error "$s: schema_version 2" \
    "tokstorm-$s: $WORK/v2.h5: schema_version 2 is not supported (these scripts read schema_version 1)" \
    "$AN/tokstorm-$s" "${args[@]}" "$WORK/v2.h5"
done
expect_error "plot: missing file" "tokstorm-plot: $WORK/none.h5: no such file" \
  "$AN/tokstorm-plot" "$WORK/none.h5"
expect_error "compare: closed and open loop mixed" "compare runs of one kind" \
  "$AN/tokstorm-compare" "$WORK/a.h5" "$WORK/open.h5"
check "report: no output left by the failed runs" test ! -e "$WORK/x.html"
for s in plot compare report; do
  check "$s --help: usage and exit status" sh -c "'$AN/tokstorm-$s' --help | grep -q '^Exit status: 0'"
done
finish analysis
