#!/usr/bin/env bash
# The quickstart's path: tokstorm --demo starts the bundled mock, sweeps it, stops it.
source "$(dirname "$0")/lib.sh" "$1"

OUT="$WORK/demo.h5"
set +e
timeout 120 "${MPIRUN[@]}" -np 2 "$TOKSTORM" --demo --levels 1,8 --max-tokens 8 --out "$OUT" \
  >"$WORK/stdout" 2>"$WORK/stderr"
rc=$?
set -e
cat "$WORK/stdout" "$WORK/stderr"
check "demo exits 0" test "$rc" -eq 0
check "demo prints both rows" sh -c "grep -Eq '^ +1 \\|' '$WORK/stdout' && grep -Eq '^ +8 \\|' '$WORK/stdout'"
check "demo: all requests succeed (2 x 9 ok)" $PY -c "
import h5py; f = h5py.File('$OUT', 'r')
assert f['level_1'].attrs['ok'] == 2 and f['level_8'].attrs['ok'] == 16
assert f['level_8'].attrs['output_tokens'] == 16 * 8"
check "demo stopped its mock" sh -c "! pgrep -f '[t]okstorm-mock --host 127.0.0.1 --port 0 --ttft 50ms' >/dev/null"
finish demo
