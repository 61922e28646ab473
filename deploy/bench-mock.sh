#!/usr/bin/env bash
# Usage: deploy/bench-mock.sh [-h|--help]      (or: make bench-mock)
#
# Measures the mock service's throughput on one core against a bare
# net/http handler doing the same JSON work, side by side on this machine:
#   mock   the mock service, default configuration, enrichment time zero:
#          every request goes through the station, the request log and the
#          metrics, as in a run
#   bare   a plain net/http handler on /enrich that reads, checks and answers
#          the same JSON (bareEnrich in mockservice/benchserve_test.go; a
#          test holds its answers byte for byte to the mock service's), in a
#          default http.Server
#   bare-timeouts  the same handler in an http.Server with the mock service's
#          timeouts (read header 5 s, read 30 s, idle 120 s: the slowloris
#          defence), which cost deadline updates on every request
# Both are served by the mockservice test binary (MOCKSERVICE_BENCH_SERVE),
# pinned with GOMAXPROCS=1 to SERVER_CPU; wrk (1 thread, CONCURRENCY
# keep-alive connections) drives it from CLIENT_CPU with
# POST /enrich {"record_id":"r1","step":1} for DURATION seconds after a
# 2-second warm-up. Rounds are interleaved (bare, bare-timeouts, mock, then
# the reverse order, ...), so drift of the machine falls on all three; this
# machine's noise is large from one run to the next, hence many short
# rounds and a median.
#
# Each run prints requests/s (wrk's count of answers / its seconds), the
# server's CPU in µs per request (user+sys from /proc, over the measured
# seconds), answers that were not 2xx and socket errors; then, per round,
# the ratios mock/bare and mock/bare-timeouts of requests/s, and the median
# ratios over rounds. The goal: mock/bare ≥ 0.9.
#
# What is missing is installed first, and said: wrk with apt-get (after
# apt-get update; needs root). Go itself must be there.
#
# Environment (defaults in brackets):
#   ROUNDS        rounds [12]
#   DURATION      measured seconds per run [4]
#   CONCURRENCY   wrk's connections [64]
#   SERVER_CPU    core for the server [1];  CLIENT_CPU  core for wrk [0]
#   PORT          loopback port [18290]
#   NO_INSTALL=1  fail instead of installing what is missing
#   GO            the go command [go]
#
# Time: ROUNDS × 3 × (DURATION + about 3) seconds: about 4 minutes by default.
# Exit codes: 0 measured; 1 a run failed; 2 bad input or a missing tool that
# cannot be installed; 130 interrupted.
set -euo pipefail

usage() { sed -n '2,/^set -euo pipefail$/{/^set /d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "bench-mock: $*" >&2; exit 2; }
say() { echo "bench-mock: $*" >&2; }

case "${1:-}" in
-h | --help) usage; exit 0 ;;
"") ;;
*) die "unknown argument: $1 (settings go in the environment; see --help)" ;;
esac

ROUNDS=${ROUNDS:-12}
DURATION=${DURATION:-4}
CONCURRENCY=${CONCURRENCY:-64}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
PORT=${PORT:-18290}
GO=${GO:-go}
isnum() { [[ $1 =~ ^[0-9]+$ ]]; }
isnum "$ROUNDS" && ((ROUNDS >= 1)) || die "ROUNDS must be a positive integer, not '$ROUNDS'"
isnum "$DURATION" && ((DURATION >= 1)) || die "DURATION must be a positive number of seconds, not '$DURATION'"
isnum "$CONCURRENCY" && ((CONCURRENCY >= 1)) || die "CONCURRENCY must be a positive integer, not '$CONCURRENCY'"
isnum "$SERVER_CPU" || die "SERVER_CPU must be a CPU number, not '$SERVER_CPU'"
isnum "$CLIENT_CPU" || die "CLIENT_CPU must be a CPU number, not '$CLIENT_CPU'"
isnum "$PORT" && ((PORT > 0 && PORT < 65536)) || die "PORT must be a port number, not '$PORT'"
[[ $SERVER_CPU != "$CLIENT_CPU" ]] || die "SERVER_CPU and CLIENT_CPU must differ"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ -f $ROOT/go.mod && -d $ROOT/mockservice ]] || die "cannot find the loadlab module above $0"

if ! command -v wrk >/dev/null; then
	[[ -z ${NO_INSTALL:-} ]] || die "wrk is missing (NO_INSTALL is set)"
	say "installing wrk with apt-get"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; } >&2 || die "could not install wrk"
fi
command -v taskset >/dev/null || die "taskset (util-linux) is missing"

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[[ -n $SERVER_PID ]] && kill -KILL "$SERVER_PID" 2>/dev/null || true
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo >&2; say "interrupted"; exit 130' INT TERM

say "building the mockservice test binary"
(cd "$ROOT" && "$GO" test -c -o "$WORK/mockbench" ./mockservice) >&2 || die "go test -c ./mockservice failed"
cat >"$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"record_id":"r1","step":1}'
wrk.headers["Content-Type"] = "application/json"
LUA

TICKS=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run KIND: serve, warm up, measure; prints "reqs_per_s cpu_us_per_req non2xx errors"
run() {
	local kind=$1 out="$WORK/wrk.out"
	GOMAXPROCS=1 MOCKSERVICE_BENCH_SERVE="$kind 127.0.0.1:$PORT" taskset -c "$SERVER_CPU" "$WORK/mockbench" >"$WORK/server.log" 2>&1 &
	SERVER_PID=$!
	local ok=""
	for _ in $(seq 50); do
		if curl -s -o /dev/null -X POST -d '{"record_id":"r1","step":1}' "http://127.0.0.1:$PORT/enrich"; then ok=1; break; fi
		sleep 0.1
	done
	[[ -n $ok ]] || { say "$kind did not answer: $(cat "$WORK/server.log")"; return 1; }
	taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONCURRENCY" -d2s -s "$WORK/post.lua" "http://127.0.0.1:$PORT/enrich" >/dev/null
	local t0 t1
	t0=$(cpu_ticks "$SERVER_PID")
	taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONCURRENCY" -d"${DURATION}s" -s "$WORK/post.lua" "http://127.0.0.1:$PORT/enrich" >"$out"
	t1=$(cpu_ticks "$SERVER_PID")
	kill -KILL "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=""
	local rps reqs non2xx errs
	rps=$(awk '/^Requests\/sec:/{print $2}' "$out")
	reqs=$(awk '/requests in/{print $1}' "$out")
	non2xx=$(awk '/Non-2xx or 3xx responses:/{print $NF}' "$out")
	errs=$(awk '/Socket errors:/{gsub(",", ""); print $4+$6+$8+$10}' "$out")
	[[ -n $rps && -n $reqs ]] || { say "could not read wrk's output:"; cat "$out" >&2; return 1; }
	awk -v rps="$rps" -v reqs="$reqs" -v ticks=$((t1 - t0)) -v hz="$TICKS" -v n="${non2xx:-0}" -v e="${errs:-0}" \
		'BEGIN { printf "%.0f %.1f %d %d\n", rps, ticks / hz * 1e6 / reqs, n, e }'
}

say "$ROUNDS rounds of bare, bare-timeouts and mock, ${DURATION} s each, server on CPU $SERVER_CPU (GOMAXPROCS=1), wrk on CPU $CLIENT_CPU with $CONCURRENCY connections"
printf '%-6s %-14s %12s %14s %8s %7s\n' round kind "requests/s" "server µs/req" non-2xx errors
ratios=()   # mock/bare per round
ratios_t=() # mock/bare-timeouts per round
declare -A us_all=()
failed=0
for round in $(seq "$ROUNDS"); do
	order="bare bare-timeouts mock"
	((round % 2 == 0)) && order="mock bare-timeouts bare"
	declare -A rate=()
	for kind in $order; do
		if ! line=$(run "$kind"); then failed=1; continue; fi
		read -r rps us non2xx errs <<<"$line"
		printf '%-6s %-14s %12s %14s %8s %7s\n' "$round" "$kind" "$rps" "$us" "$non2xx" "$errs"
		((non2xx == 0 && errs == 0)) || { say "round $round $kind: $non2xx non-2xx answers, $errs socket errors"; failed=1; }
		rate[$kind]=$rps
		us_all[$kind]+="$us "
	done
	line="round $round:"
	if [[ -n ${rate[bare]:-} && -n ${rate[mock]:-} ]]; then
		r=$(awk -v m="${rate[mock]}" -v b="${rate[bare]}" 'BEGIN { printf "%.3f", m / b }')
		ratios+=("$r")
		line+=" mock/bare = $r"
	fi
	if [[ -n ${rate[bare-timeouts]:-} && -n ${rate[mock]:-} ]]; then
		r=$(awk -v m="${rate[mock]}" -v b="${rate[bare-timeouts]}" 'BEGIN { printf "%.3f", m / b }')
		ratios_t+=("$r")
		line+=", mock/bare-timeouts = $r"
	fi
	echo "$line"
	unset rate
done
# summary NAME VALUES...: median (min, max) of the values
summary() {
	local name=$1
	shift
	(($# > 0)) || return 0
	printf '%s\n' "$@" | sort -g | awk -v name="$name" '{a[NR]=$1} END {
		m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2
		printf "%s: median %.3f over %d rounds (min %.3f, max %.3f)\n", name, m, NR, a[1], a[NR] }'
}
echo
for kind in bare bare-timeouts mock; do
	# shellcheck disable=SC2086 # the values are space-separated on purpose
	summary "$kind, server CPU µs per request" ${us_all[$kind]:-}
done
summary "mock/bare requests/s (goal ≥ 0.9)" "${ratios[@]}"
summary "mock/bare-timeouts requests/s" "${ratios_t[@]}"
exit $failed
