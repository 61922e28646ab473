#!/usr/bin/env bash
# compare-false-alarms.sh — measures the false-alarm rate of `loadlab compare` on REAL runs.
#
# It starts one mockservice on a free loopback port and, for each of COMPARISONS
# comparisons, makes 2×RUNS runs of one and the same configuration
# (`loadlab run --strategy C4 --records RECORDS --time-scale TIME_SCALE --json`),
# interleaved A,B,A,B,… so that slow drift of the machine is shared by both sides.
# Then it runs `loadlab compare A B` on each pair of sets. Since nothing changed
# between A and B, every change called (better or worse) is a false alarm, and
# every exit 99 is a false regression. The compare documents a family-wise chance
# of any false call of at most --alpha (0.05).
#
# Usage (from the repository root):
#   go build ./cmd/loadlab && go build ./cmd/mockservice
#   deploy/compare-false-alarms.sh
#
# Parameters (environment):
#   LOADLAB      loadlab binary        (default ./loadlab, as built by `go build ./cmd/loadlab`)
#   MOCKSERVICE  mockservice binary    (default ./mockservice, as built by `go build ./cmd/mockservice`)
#   COMPARISONS  comparisons           (default 20)
#   RUNS         runs per side         (default 5)
#   RECORDS      records per run       (default 200)
#   TIME_SCALE   time scale of the mock and of every run (default 0.1)
#   OUT          work folder           (default a new mktemp -d /tmp/compare-fa.XXXXXX);
#                OUT/i/a.json, OUT/i/b.json, OUT/i/compare.txt, OUT/i/compare.json per comparison
#
# Exit code: 0 when every comparison was judged (exit 0 or 99), 1 when any compare exited
# otherwise (2: bad input; its message is in OUT/i/compare.txt).
set -euo pipefail

LOADLAB=${LOADLAB:-./loadlab}
MOCKSERVICE=${MOCKSERVICE:-./mockservice}
COMPARISONS=${COMPARISONS:-20}
RUNS=${RUNS:-5}
RECORDS=${RECORDS:-200}
TIME_SCALE=${TIME_SCALE:-0.1}
OUT=${OUT:-$(mktemp -d /tmp/compare-fa.XXXXXX)}

for bin in "$LOADLAB" "$MOCKSERVICE"; do
  [[ -x $bin ]] || { echo "not an executable: $bin (build it with go build, or set LOADLAB / MOCKSERVICE)" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "jq is needed to read compare --json" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is needed to wait for the mock" >&2; exit 2; }
mkdir -p "$OUT"

# A free loopback port: bind port 0 and read what the kernel gave.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"

"$MOCKSERVICE" --listen "127.0.0.1:$PORT" --time-scale "$TIME_SCALE" >"$OUT/mock.log" 2>&1 &
MOCK_PID=$!
stop_mock() {
  if kill -0 "$MOCK_PID" 2>/dev/null; then
    kill "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
  fi
}
trap stop_mock EXIT
trap 'exit 130' INT TERM

# Wait for the mock (up to 10 s).
for _ in $(seq 1 100); do
  if curl -fsS "$URL/healthz" >/dev/null 2>&1; then break; fi
  kill -0 "$MOCK_PID" 2>/dev/null || { echo "mockservice exited; see $OUT/mock.log" >&2; cat "$OUT/mock.log" >&2; exit 2; }
  sleep 0.1
done
curl -fsS "$URL/healthz" >/dev/null || { echo "mockservice not answering at $URL" >&2; exit 2; }

echo "mock: $URL (pid $MOCK_PID, time scale $TIME_SCALE); work folder: $OUT"
echo "loadavg before: $(cat /proc/loadavg)"
echo "plan: $COMPARISONS comparisons × 2×$RUNS interleaved runs of C4, $RECORDS records, time scale $TIME_SCALE"

called=0       # comparisons with any metric called better or worse
exit99=0       # comparisons exiting 99 (a regression called)
bad=0          # comparisons exiting anything else than 0 or 99
run_nonzero=0  # runs that exited non-zero (their result is still appended)
alpha=""
codes=()

for i in $(seq 1 "$COMPARISONS"); do
  dir="$OUT/$i"
  mkdir -p "$dir"
  : >"$dir/a.json"
  : >"$dir/b.json"
  for j in $(seq 1 $((2 * RUNS))); do
    if (( j % 2 == 1 )); then side=a; else side=b; fi
    rc=0
    "$LOADLAB" run --target "$URL" --strategy C4 --records "$RECORDS" --time-scale "$TIME_SCALE" --json \
      >>"$dir/$side.json" 2>>"$dir/run.stderr" || rc=$?
    if (( rc != 0 )); then
      run_nonzero=$((run_nonzero + 1))
      echo "  comparison $i run $j ($side): loadlab run exited $rc (see $dir/run.stderr)" >&2
      if (( rc == 2 || rc == 130 )); then exit "$rc"; fi
    fi
  done

  rc=0
  "$LOADLAB" compare "$dir/a.json" "$dir/b.json" >"$dir/compare.txt" 2>&1 || rc=$?
  jrc=0
  "$LOADLAB" compare "$dir/a.json" "$dir/b.json" --json >"$dir/compare.json" 2>"$dir/compare.json.stderr" || jrc=$?
  if (( rc != jrc )); then
    echo "  comparison $i: text and --json compare disagree on the exit code ($rc vs $jrc)" >&2
  fi
  codes+=("$rc")

  if (( rc == 0 || rc == 99 )); then
    [[ -n $alpha ]] || alpha=$(jq -r '.report.alpha' "$dir/compare.json")
    n_changed=$(jq '[.report.rows[] | select(.decision == "better" or .decision == "worse")] | length' "$dir/compare.json")
    which=$(jq -r '[.report.rows[] | select(.decision == "better" or .decision == "worse")
                    | "\(.cell)/\(.metric.name) \(.decision) ×\(.estimate) holm p \(.holm_p)"] | join("; ")' "$dir/compare.json")
    ncomp=$(jq '.report.comparisons' "$dir/compare.json")
    (( n_changed > 0 )) && called=$((called + 1))
    (( rc == 99 )) && exit99=$((exit99 + 1))
    printf '  comparison %2d: exit %2d, %d of %d varying comparisons called a change%s\n' \
      "$i" "$rc" "$n_changed" "$ncomp" "${which:+: $which}"
  else
    bad=$((bad + 1))
    printf '  comparison %2d: exit %2d (not judged):\n' "$i" "$rc"
    sed 's/^/    /' "$dir/compare.txt"
  fi
done

echo "loadavg after: $(cat /proc/loadavg)"
echo
echo "comparisons:                 $COMPARISONS ($RUNS runs a side, interleaved; nothing changed between sides)"
echo "exit codes:                  ${codes[*]}"
echo "called any change:           $called"
echo "exited 99 (regression):      $exit99"
echo "not judged (other exits):    $bad"
echo "runs exiting non-zero:       $run_nonzero"
echo "stated family-wise alpha:    ${alpha:-unknown} (per comparison: chance of any false call at most alpha)"
if (( bad > 0 )); then exit 1; fi
