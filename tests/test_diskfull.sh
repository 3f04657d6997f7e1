#!/usr/bin/env bash
# A results file on a disk that fills up, for real: a 112 KiB tmpfs takes the run's
# description and the first level (about 76 KiB), not the second, whose fixed part alone (the
# histograms, the attributes) is some 50 KiB; its 51,200 event times (--record-tokens) are
# 400 KiB before compression, but how well they compress depends on how events were batched,
# so the test does not count on them. The run says so in one line naming the file and the
# system's reason, stops after that level (the third is never run), exits 4 on every rank,
# and leaves a file that h5dump reads, with the first level whole and nothing of the second.
# Needs root (mount); without it, status 77 (skipped).
source "$(dirname "$0")/lib.sh" "$1"

FULL="${WORK:?}/full"
mkdir -p "$FULL"
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=112k tokstorm-test "$FULL" 2>/dev/null; then
  echo "skip - needs root to mount a small tmpfs"
  exit 77
fi
trap 'umount "$FULL" 2>/dev/null; cleanup' EXIT

start_mock disk --ttft 5ms --step 1ms --max-batch 256
rm -f "$WORK/exits"
set +e
timeout 60 "${MPIRUN[@]}" -np 2 sh -c '"$0" "$@"; echo "rank $OMPI_COMM_WORLD_RANK exit $?" >>"'"$WORK"'/exits"' \
  "$TOKSTORM" --url "$MOCK_URL" --levels 1,64,2 --max-tokens 400 --record-tokens \
  --out "$FULL/r.h5" >"$WORK/stdout" 2>"$WORK/stderr"
set -e
cat "$WORK/stdout" "$WORK/stderr"
check "full disk: exit 4 on both ranks" \
  test "$(grep -c 'exit 4$' "$WORK/exits" 2>/dev/null)" = 2
check "full disk: one line naming the file and the reason" sh -c \
  "[ \"\$(wc -l <'$WORK/stderr')\" = 1 ] && grep -q '^tokstorm: results file $FULL/r.h5: .*: No space left on device; the run stops after this level' '$WORK/stderr'"
check "full disk: the run stopped after the level (no third level)" sh -c \
  "grep -Eq '^ +64 \\|' '$WORK/stdout' && ! grep -Eq '^ +2 \\|' '$WORK/stdout'"
check "full disk: h5dump reads the file" sh -c "h5dump '$FULL/r.h5' >/dev/null"
check "full disk: level 1 whole, nothing of level 64" $PY - "$FULL/r.h5" <<'PYEOF'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
groups = sorted(k for k in f if k.startswith("level_"))
g = f["level_1"]
a, r = g.attrs, g["requests"][:]
ok = groups == ["level_1"] and [x.decode() for x in f["summary"][:]["group"]] == ["level_1"]
ok &= a["complete"] == 1 and len(r) == a["ok"] == 2 and (r["output_tokens"] == 400).all()
ok &= len(g["event_time_s"]) == g["event_offsets"][-1] == 800
sys.exit(0 if ok else 1)
PYEOF
finish diskfull
