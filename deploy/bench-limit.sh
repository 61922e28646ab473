#!/usr/bin/env bash
# Usage: deploy/bench-limit.sh [-h|--help]      (or: make bench-limit)
#
# How close loadlab comes to this machine's limit, measured in one session,
# each client on core CLIENT_CPU and what it drives on core SERVER_CPU, in
# interleaved rounds (this machine's noise is large from one run to the
# next: every run is printed as it ends, the medians at the end):
#   open     the open generator (BenchmarkOpen in client/loadgen: uniform
#            arrivals at each rate of RATES for SECONDS, GOMAXPROCS 1)
#            against a bare Go endpoint (200 "ok"): requests sent per
#            second, CPU µs per scheduled request, late / dropped / behind
#   wrk      wrk (1 thread, 50 connections, closed loop) against the same
#            endpoint for SECONDS: what the endpoint and the kernel allow
#   records  the record client (BenchmarkRecordCPU in client/records: 3,000
#            healthy records of the lab pipeline, time scale 0.1, GOMAXPROCS
#            1) per strategy of STRATEGIES against the mock service: CPU µs
#            per record; net-http and fasthttp are the bare clients' floors
# then `deploy/bench-mock.sh` (the mock service against a bare net/http
# handler; its own ROUNDS and DURATION: MOCK_ROUNDS, MOCK_DURATION).
#
# What is missing is installed first, and said: wrk with apt-get (needs
# root). Go itself must be there.
#
# Environment (defaults in brackets):
#   ROUNDS        rounds of open, wrk and records [3]
#   SECONDS_PER   seconds per open rate and per wrk run [10]
#   RATES         the open generator's rates, requests/s [10000 20000 30000 40000 50000]
#   STRATEGIES    the record client's [net-http fasthttp C2 C4]
#   MOCK_ROUNDS   bench-mock's rounds [12];  MOCK_DURATION  its seconds [4]
#   NO_MOCK=1     leave bench-mock out
#   GO            the go command [go]
#
# Time: ROUNDS × (RATES × (SECONDS_PER + 2) + SECONDS_PER + about 25 per
# strategy) + bench-mock: about 13 minutes by default.
# Exit codes: 0 measured; 1 a run failed; 2 bad input or a missing tool;
# 130 interrupted.
set -euo pipefail

usage() { sed -n '2,/^set -euo pipefail$/{/^set /d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "bench-limit: $*" >&2; exit 2; }
say() { echo "bench-limit: $*" >&2; }

case "${1:-}" in
-h | --help) usage; exit 0 ;;
"") ;;
*) die "unknown argument: $1 (settings go in the environment; see --help)" ;;
esac

ROUNDS=${ROUNDS:-3}
SECONDS_PER=${SECONDS_PER:-10}
RATES=${RATES:-10000 20000 30000 40000 50000}
STRATEGIES=${STRATEGIES:-net-http fasthttp C2 C4}
GO=${GO:-go}
isnum() { [[ $1 =~ ^[0-9]+$ ]]; }
isnum "$ROUNDS" && ((ROUNDS >= 1)) || die "ROUNDS must be a positive integer, not '$ROUNDS'"
isnum "$SECONDS_PER" && ((SECONDS_PER >= 1)) || die "SECONDS_PER must be a positive number of seconds, not '$SECONDS_PER'"
for r in $RATES; do isnum "$r" && ((r >= 1)) || die "RATES: '$r' is not a rate"; done
[[ -n $STRATEGIES ]] || die "STRATEGIES is empty"

ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ -f $ROOT/go.mod && -d $ROOT/client/loadgen ]] || die "cannot find the loadlab module above $0"
if ! command -v wrk >/dev/null; then
	say "installing wrk with apt-get"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; } >&2 || die "could not install wrk"
fi
command -v taskset >/dev/null || die "taskset (util-linux) is missing"

WORK=$(mktemp -d)
EP_PID=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[[ -n $EP_PID ]] && kill "$EP_PID" 2>/dev/null || true
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo >&2; say "interrupted"; exit 130' INT TERM

say "building the client/loadgen and client/records test binaries"
(cd "$ROOT" && "$GO" test -c -o "$WORK/loadgen.test" ./client/loadgen && "$GO" test -c -o "$WORK/records.test" ./client/records) >&2 ||
	die "go test -c failed"

# The benchmarks pin themselves (client on CPU 0, endpoint or mock on CPU
# 1); wrk is pinned here the same way.
for i in $(seq 1 "$ROUNDS"); do
	say "round $i of $ROUNDS"
	(cd "$ROOT/client/loadgen" && LOADGEN_SECONDS=$SECONDS_PER LOADGEN_RATES=$RATES "$WORK/loadgen.test" -test.run '^$' \
		-test.bench Open -test.benchtime 1x) | grep '^BenchmarkOpen' | sed "s/^/open $i /" | tee -a "$WORK/all"
	# The loadgen test binary is the bare endpoint when LOADGEN_ENDPOINT
	# names its CPU; it prints its address and ends when its input closes.
	coproc EP { cd "$ROOT/client/loadgen" && LOADGEN_ENDPOINT=1 exec "$WORK/loadgen.test"; }
	EP_PID=$EP_PID
	read -r addr <&"${EP[0]}"
	taskset -c 0 wrk -t1 -c50 -d"${SECONDS_PER}s" "http://$addr/x" | grep -E 'Requests/sec|errors|Non-2xx' | sed "s/^/wrk $i /" | tee -a "$WORK/all"
	eval "exec ${EP[1]}>&-"
	wait "$EP_PID" 2>/dev/null || true
	EP_PID=""
	(cd "$ROOT/client/records" && RECORDS_STRATEGIES=$STRATEGIES "$WORK/records.test" -test.run '^$' -test.bench RecordCPU \
		-test.benchtime 1x) | grep '^BenchmarkRecordCPU' | sed "s/^/records $i /" | tee -a "$WORK/all"
done

# median of the numbers on standard input
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# metric KIND NAME UNIT: the values of UNIT on KIND's lines for NAME
metric() { grep "^$1 [0-9]* $2[- ]" "$WORK/all" | grep -o "[0-9.e+-]* $3" | awk '{print $1}'; }

echo
echo "medians of $ROUNDS rounds ($(date -u +%Y-%m-%d), $(nproc) CPUs):"
printf '%-22s %12s %14s %8s %10s %10s %8s\n' "open generator, /s" "sent/s" "CPU µs/req" "late %" "dropped %" "behind %" senders
for r in $RATES; do
	printf '%-22s %12s %14s %8s %10s %10s %8s\n' "$r" "$(metric open "BenchmarkOpen/$r" sent/s | median)" \
		"$(metric open "BenchmarkOpen/$r" cpu-µs/req | median)" "$(metric open "BenchmarkOpen/$r" late-% | median)" \
		"$(metric open "BenchmarkOpen/$r" dropped-% | median)" "$(metric open "BenchmarkOpen/$r" behind-% | median)" \
		"$(metric open "BenchmarkOpen/$r" senders | median)"
done
printf '%-22s %12s\n' "wrk, closed, 50 conns" "$(grep '^wrk [0-9]* Requests/sec' "$WORK/all" | awk '{print $4}' | median)"
echo
printf '%-22s %16s %14s\n' "record client" "CPU µs/record" "complete %"
for s in $STRATEGIES; do
	printf '%-22s %16s %14s\n' "$s" "$(metric records "BenchmarkRecordCPU/$s" cpu-µs/record | median)" \
		"$(metric records "BenchmarkRecordCPU/$s" complete-% | median)"
done

if [[ -z ${NO_MOCK:-} ]]; then
	echo
	ROUNDS=${MOCK_ROUNDS:-12} DURATION=${MOCK_DURATION:-4} GO=$GO bash "$ROOT/deploy/bench-mock.sh"
fi
