#!/usr/bin/env bash
# Usage: deploy/bench-peers.sh [-h|--help]      (or: make bench-peers)
#
# Measures the HTTP load generators side by side on this machine, each run
# pinned to its own core against the same endpoint pinned to the other:
#   loadlab load  open loop, uniform arrivals (built from this working tree)
#   loadlab-ui    the same with its dashboard served (--ui) and a browser's
#                 stream of it read throughout (curl -N /events, on the
#                 endpoint's core): TOOLS="loadlab loadlab-ui" RATES=10000
#                 measures what the dashboard costs
#   vegeta        open loop, constant rate   (github.com/tsenart/vegeta/v12 v12.13.0)
#   hey           closed loop, CONCURRENCY workers   (github.com/rakyll/hey v0.1.5)
#   wrk           closed loop, 1 thread, CONCURRENCY connections (Debian's wrk)
# The endpoint is Debian's nginx, worker_processes 1, on a loopback port,
# answering 200 "ok" to every path with its logs off. Every tool sends the
# same request: POST /x with a 69-byte JSON body (loadlab its own, as long),
# keep-alive, a 10 s timeout.
#
# The open-loop tools run at each of RATES for DURATION seconds; the
# closed-loop ones cannot be asked for a rate: each sends as fast as its
# CONCURRENCY connections get answers, once per round, and its achieved
# rate and CPU per request are the floor to compare with. Rounds are
# interleaved: round 1 runs every tool at every rate, then round 2, ...
#
# Then each open-loop tool's ceiling (CEILING=0 skips it): the tool runs
# once at each of CEILING_RATES in turn until a rate does not hold, and
# its ceiling is the highest that did. A rate holds when the tool sent at
# least 99% of the planned requests, at most 1% of those it sent were not
# answered 2xx, and (loadlab) at most 1% of the arrivals were late,
# dropped or behind. The closed-loop tools' achieved rate is theirs.
#
# Each run prints: the achieved rate (2xx answers / wall-clock seconds of
# the generator process), its CPU in µs per request (user+sys of the
# process, from /usr/bin/time, / requests sent), its peak memory, the
# requests not sent of those planned (open loop), loadlab's late starts,
# drops and behind, and the latency percentiles p50/p99/max each tool
# reports (from the moment of sending; loadlab also from the schedule),
# plus how busy each core was. Then a Markdown table of the medians over
# rounds, ready to paste into the README.
#
# What is missing is installed first, and said: vegeta and hey with
# `go install` (into GOBIN or GOPATH/bin), wrk, nginx-light, GNU time and jq
# with apt-get (after apt-get update; needs root). Go itself must be there.
#
# Environment (defaults in brackets):
#   ROUNDS        rounds [3]
#   DURATION      seconds per run [20]; e.g. DURATION=3 ROUNDS=1 to try it
#   RATES         open-loop rates, requests/s [10000 20000 40000]
#   CEILING       1: search each open-loop tool's ceiling; 0: not [1]
#   CEILING_RATES the rates tried, in order, requests/s
#                 [5000 10000 20000 30000 40000 50000 60000 70000 80000]
#   TOOLS         which generators [loadlab vegeta hey wrk]
#   CONCURRENCY   hey's workers and wrk's connections [50]
#   ENDPOINT_CPU  core for nginx [0];  GENERATOR_CPU  core for the tool [1]
#   PORT          first of the 16 loopback ports nginx listens on; run i
#                 uses port i mod 16, so the connections a run closes (in
#                 TIME_WAIT for 60 s) never take the ports of the next runs
#                 [the first free block of 16 from 18080]
#   LOADLAB       a loadlab binary to use instead of building ./cmd/loadlab
#   OUT           a folder to keep the raw outputs and summary.md in [none]
#   QUIET_WAIT    before each run, wait up to this many seconds for the
#                 other processes to use under 5% of the two cores [30]
#   NO_INSTALL=1  fail instead of installing what is missing
#   GO            the go command [go]
#
# Time: with the defaults, 24 runs of 20 s plus ~2 s each, then the two
# open-loop tools' ceilings, a run per rate until one fails (loadlab held
# 70,000/s here: 8 runs; vegeta 5,000/s: 2), plus the TIME_WAIT waits
# below after a tool that fell behind; measured with ROUNDS=3 DURATION=10
# and loadlab-ui too (33 runs and the ceilings): 17 min 49 s. Plus 1-2
# minutes of installs on a fresh machine.
# Every run is killed after DURATION+45 s and waits at most 65 s for
# TIME_WAIT connections and QUIET_WAIT for a quiet machine.
# Ctrl-C stops every process it started and removes its temporary files.
#
# Before each run the script also waits (at most 65 s) until fewer than
# 2,000 TCP connections on the machine are in TIME_WAIT: vegeta binds each
# connection to an ephemeral port no other socket holds, so the closed
# connections of a previous run (a generator that fell behind opens many)
# would make it fail with "bind: address already in use".
#
# Other load on the machine distorts the figures: a run during which other
# processes took more than 5% of either pinned core is marked NOISY and
# listed under the table; QUIET_WAIT makes each run wait for a quiet
# machine first (and adds at most ROUNDS x runs x QUIET_WAIT seconds).
#
# Exit codes: 0 every run measured; 1 some run failed or timed out (the
# table uses the others); 2 bad input or a missing tool that cannot be
# installed; 130 interrupted.
set -euo pipefail

usage() { sed -n '2,/^set -euo pipefail$/{/^set /d;s/^# \{0,1\}//;p}' "$0"; }
joined() { local out="" x; for x; do out+="${out:+; }$x"; done; echo "$out"; }
die() { echo "bench-peers: $*" >&2; exit 2; }
say() { echo "bench-peers: $*" >&2; }

case "${1:-}" in
-h | --help) usage; exit 0 ;;
"") ;;
*) die "unknown argument: $1 (settings go in the environment; see --help)" ;;
esac

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-20}
RATES=${RATES:-10000 20000 40000}
CEILING=${CEILING:-1}
CEILING_RATES=${CEILING_RATES:-5000 10000 20000 30000 40000 50000 60000 70000 80000}
TOOLS=${TOOLS:-loadlab vegeta hey wrk}
CONCURRENCY=${CONCURRENCY:-50}
ENDPOINT_CPU=${ENDPOINT_CPU:-0}
GENERATOR_CPU=${GENERATOR_CPU:-1}
GO=${GO:-go}
TIMEOUT_S=10 # per request, every tool
PAUSE_S=1    # between runs, for the endpoint's sockets to settle
VEGETA_VERSION=v12.13.0
HEY_VERSION=v0.1.5 # the newest served (go list -m -versions github.com/rakyll/hey)

isnum() { [[ $1 =~ ^[0-9]+$ ]]; }
isnum "$ROUNDS" && ((ROUNDS >= 1)) || die "ROUNDS must be a positive integer, not '$ROUNDS'"
isnum "$DURATION" && ((DURATION >= 1)) || die "DURATION must be a positive number of seconds, not '$DURATION'"
isnum "$CONCURRENCY" && ((CONCURRENCY >= 1)) || die "CONCURRENCY must be a positive integer, not '$CONCURRENCY'"
for r in $RATES; do isnum "$r" && ((r >= 1)) || die "RATES must be positive integers, not '$r'"; done
[[ -n $RATES ]] || die "RATES is empty"
[[ $CEILING == 0 || $CEILING == 1 ]] || die "CEILING must be 0 or 1, not '$CEILING'"
for r in $CEILING_RATES; do isnum "$r" && ((r >= 1)) || die "CEILING_RATES must be positive integers, not '$r'"; done
for t in $TOOLS; do
	case $t in loadlab | loadlab-ui | vegeta | hey | wrk) ;; *) die "TOOLS: unknown generator '$t' (loadlab loadlab-ui vegeta hey wrk)" ;; esac
done
[[ -n $TOOLS ]] || die "TOOLS is empty"
QUIET_WAIT=${QUIET_WAIT:-30}
isnum "$QUIET_WAIT" || die "QUIET_WAIT must be a number of seconds, not '$QUIET_WAIT'"
isnum "$ENDPOINT_CPU" || die "ENDPOINT_CPU must be a CPU number, not '$ENDPOINT_CPU'"
isnum "$GENERATOR_CPU" || die "GENERATOR_CPU must be a CPU number, not '$GENERATOR_CPU'"
[[ $ENDPOINT_CPU != "$GENERATOR_CPU" ]] || die "ENDPOINT_CPU and GENERATOR_CPU must differ"
has() { [[ " $TOOLS " == *" $1 "* || ($1 == loadlab && " $TOOLS " == *" loadlab-ui "*) ]]; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
[[ -f $ROOT/go.mod && -d $ROOT/cmd/loadlab ]] || die "cannot find the loadlab module above $0"

# ---- cleanup: every process started and every temp file, on any exit ----
WORK=""
NGINX_PID=""
RUN_PID="" # session (and process group) of the run in progress
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $RUN_PID ]]; then
		kill -TERM -- "-$RUN_PID" 2>/dev/null || true
		sleep 0.3
		kill -KILL -- "-$RUN_PID" 2>/dev/null || true
	fi
	if [[ -n $NGINX_PID ]]; then
		kill -TERM "$NGINX_PID" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$NGINX_PID" 2>/dev/null || true
	fi
	[[ -n $WORK && -d $WORK ]] && rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo >&2; say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM
WORK=$(mktemp -d /tmp/bench-peers.XXXXXX)

# ---- what is needed, installed when missing ----
INSTALLED=()
export DEBIAN_FRONTEND=noninteractive
command -v "$GO" >/dev/null 2>&1 || { [[ $GO == go && -x /usr/local/go/bin/go ]] && GO=/usr/local/go/bin/go; } ||
	die "'$GO' not found: Go 1.26 is needed (see README.md, Set-up)"
GOBIN_DIR=$("$GO" env GOBIN)
[[ -n $GOBIN_DIR ]] || GOBIN_DIR="$("$GO" env GOPATH)/bin"
export PATH="$PATH:$GOBIN_DIR:/usr/sbin"

apt_updated=""
apt_install() { # package...
	[[ -z ${NO_INSTALL:-} ]] || die "missing: Debian package(s) $* (NO_INSTALL is set)"
	[[ $(id -u) == 0 ]] || die "missing: Debian package(s) $*; run as root or: sudo apt-get install -y $*"
	if [[ -z $apt_updated ]]; then
		say "apt-get update"
		apt-get update -qq >"$WORK/apt.log" 2>&1 || { cat "$WORK/apt.log" >&2; die "apt-get update failed"; }
		apt_updated=1
	fi
	say "installing Debian package(s): $*"
	apt-get install -y -qq --no-install-recommends "$@" >>"$WORK/apt.log" 2>&1 ||
		{ tail -20 "$WORK/apt.log" >&2; die "apt-get install $* failed"; }
	for p in "$@"; do INSTALLED+=("$p (apt: $(dpkg-query -W -f='${Version}' "$p" 2>/dev/null))"); done
}
go_install() { # binary module@version
	[[ -z ${NO_INSTALL:-} ]] || die "missing: $1 ($2) (NO_INSTALL is set)"
	say "installing $2 with go install (into $GOBIN_DIR)"
	"$GO" install "$2" >"$WORK/go-install.log" 2>&1 ||
		{ cat "$WORK/go-install.log" >&2; die "go install $2 failed"; }
	INSTALLED+=("$1 $2 (go install, into $GOBIN_DIR)")
}

need_apt=()
command -v taskset >/dev/null 2>&1 || need_apt+=(util-linux)
[[ -x /usr/bin/time ]] || need_apt+=(time)
has loadlab-ui && ! command -v curl >/dev/null 2>&1 && need_apt+=(curl)
command -v jq >/dev/null 2>&1 || need_apt+=(jq)
command -v nginx >/dev/null 2>&1 || need_apt+=(nginx-light)
has wrk && { command -v wrk >/dev/null 2>&1 || need_apt+=(wrk); }
((${#need_apt[@]} == 0)) || apt_install "${need_apt[@]}"
if has vegeta && ! command -v vegeta >/dev/null 2>&1; then go_install vegeta "github.com/tsenart/vegeta/v12@$VEGETA_VERSION"; fi
if has hey && ! command -v hey >/dev/null 2>&1; then go_install hey "github.com/rakyll/hey@$HEY_VERSION"; fi

# ---- the machine ----
NCPU=$(nproc --all)
((NCPU >= 2)) || die "needs two cores (one for the endpoint, one for the generator); this machine has $NCPU"
taskset -c "$ENDPOINT_CPU" true 2>/dev/null || die "cannot pin to ENDPOINT_CPU=$ENDPOINT_CPU (taskset -c)"
taskset -c "$GENERATOR_CPU" true 2>/dev/null || die "cannot pin to GENERATOR_CPU=$GENERATOR_CPU (taskset -c)"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# ---- loadlab, built from the working tree outside it ----
if has loadlab; then
	if [[ -n ${LOADLAB:-} ]]; then
		[[ -x $LOADLAB ]] || die "LOADLAB=$LOADLAB is not an executable"
	else
		say "building loadlab from $ROOT (go build -o $WORK/loadlab ./cmd/loadlab)"
		(cd "$ROOT" && "$GO" build -o "$WORK/loadlab" ./cmd/loadlab) >"$WORK/build.log" 2>&1 ||
			{ cat "$WORK/build.log" >&2; die "go build ./cmd/loadlab failed (a tree mid-edit? LOADLAB=/path/to/loadlab uses a prebuilt one)"; }
		LOADLAB=$WORK/loadlab
	fi
fi

modversion() { # binary -> module version, from its build info
	local v
	v=$("$GO" version -m "$(command -v "$1")" 2>/dev/null | awk '$1 == "mod" { print $3; exit }')
	echo "${v:-unknown}"
}
VERSIONS=()
if has loadlab; then
	rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
	dirty=$(git -C "$ROOT" status --porcelain -- '*.go' 2>/dev/null | wc -l)
	suffix=""
	((dirty == 0)) || suffix=" + $dirty uncommitted Go file(s)"
	if [[ $LOADLAB == "$WORK/loadlab" ]]; then VERSIONS+=("loadlab $rev$suffix")
	else VERSIONS+=("loadlab $LOADLAB"); fi
fi
has vegeta && VERSIONS+=("vegeta $(modversion vegeta)")
has hey && VERSIONS+=("hey $(modversion hey)")
has wrk && VERSIONS+=("wrk $(dpkg-query -W -f='${Version}' wrk 2>/dev/null || wrk -v 2>&1 | head -1)")
NGINX_VERSION=$(nginx -v 2>&1 | sed 's/.*nginx\///')
VERSIONS+=("nginx $NGINX_VERSION")

# ---- the endpoint: nginx on one core ----
NPORTS=16
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
block_free() { local p; for ((p = $1; p < $1 + NPORTS; p++)); do port_free "$p" || return 1; done; }
if [[ -n ${PORT:-} ]]; then
	isnum "$PORT" && ((PORT >= 1024 && PORT + NPORTS <= 65536)) || die "PORT must be a port number from 1024, not '$PORT'"
	block_free "$PORT" || die "a port in $PORT-$((PORT + NPORTS - 1)) is in use on 127.0.0.1"
else
	PORT=18080
	while ! block_free "$PORT"; do
		PORT=$((PORT + NPORTS))
		((PORT < 18080 + 20 * NPORTS)) || die "no free block of $NPORTS ports from 18080 on 127.0.0.1 (set PORT)"
	done
fi
LISTENS=""
# The dashboard's port (loadlab-ui): the first free one after nginx's block.
UI_PORT=$((PORT + NPORTS))
while ! port_free "$UI_PORT"; do UI_PORT=$((UI_PORT + 1)); done
for ((p = PORT; p < PORT + NPORTS; p++)); do LISTENS+="    listen 127.0.0.1:$p;"$'\n'; done
NG=$WORK/nginx
mkdir -p "$NG"
cat >"$NG/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 70000;
pid $NG/nginx.pid;
error_log $NG/error.log warn;
events { worker_connections 65536; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $NG/body;
  proxy_temp_path $NG/proxy;
  fastcgi_temp_path $NG/fastcgi;
  uwsgi_temp_path $NG/uwsgi;
  scgi_temp_path $NG/scgi;
  server {
$LISTENS    location / { return 200 "ok"; }
  }
}
EOF
setsid taskset -c "$ENDPOINT_CPU" nginx -e "$NG/error.log" -p "$NG" -c "$NG/nginx.conf" </dev/null >"$NG/stderr" 2>&1 &
NGINX_PID=$!
for i in $(seq 1 50); do
	kill -0 "$NGINX_PID" 2>/dev/null || { cat "$NG/stderr" "$NG/error.log" >&2 2>/dev/null; die "nginx exited at start"; }
	port_free "$((PORT + NPORTS - 1))" || break
	((i < 50)) || { cat "$NG/error.log" >&2 2>/dev/null; die "nginx did not listen on 127.0.0.1:$PORT-$((PORT + NPORTS - 1)) within 5 s"; }
	sleep 0.1
done
reply=$(
	exec 3<>"/dev/tcp/127.0.0.1/$PORT"
	printf 'POST /x HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}' >&3
	head -c 12 <&3
) || true
[[ $reply == "HTTP/1.1 200" ]] || die "nginx on 127.0.0.1:$PORT answered '$reply', not 200"
NGINX_START_LOG=$(sed 's/^[0-9/]* [0-9:]* //' "$NG/error.log" 2>/dev/null | head -3)

# ---- the request every tool sends ----
BODY='{"record_id":"bench-0001","step":1,"id":"bench-0001","complete":true}'
printf '%s' "$BODY" >"$WORK/body.json"
cat >"$WORK/wrk.lua" <<EOF
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%.0f,"duration_us":%.0f,"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f,"p50_us":%.0f,"p99_us":%.0f,"max_us":%.0f}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
EOF

# ---- one run ----
# snap -> clock ticks "gen_task gen_irq gen_all end_task end_irq end_all nginx": on
# each pinned core the user+nice+system time, the irq+softirq time and all
# the time (/proc/stat), and nginx's own user+system time (/proc/PID/stat).
snap() {
	local ng
	ng=$(sed 's/.*) //' "/proc/$NGINX_PID/stat" 2>/dev/null | awk '{ print $12 + $13 }') || true
	awk -v g="cpu$GENERATOR_CPU" -v e="cpu$ENDPOINT_CPU" -v ng="${ng:-0}" '
		$1 == g { gt = $2 + $3 + $4; gi = $7 + $8; ga = gt + gi + $5 + $6 + $9 }
		$1 == e { et = $2 + $3 + $4; ei = $7 + $8; ea = et + ei + $5 + $6 + $9 }
		END { print gt, gi, ga, et, ei, ea, ng }' /proc/stat
}
RUNS=$WORK/runs.tsv
COLS="tool rate round status achieved cpu_us rss_mb sent not_sent failed late dropped behind p50_ms p99_ms max_ms sched_p99_ms sched_max_ms wall_s gen_busy_pct gen_irq_pct gen_other_pct nginx_pct end_irq_pct end_other_pct"
echo "$COLS" | tr ' ' '\t' >"$RUNS"
FAILED=0
NOISY=0
NOISY_RUNS=()
HZ=$(getconf CLK_TCK)
RUN_NO=0

# wait_quiet: up to QUIET_WAIT s until, over one second, processes other
# than nginx (idle between runs) use under 5% of the two cores together.
wait_quiet() {
	local deadline=$((SECONDS + QUIET_WAIT)) a b pct
	((QUIET_WAIT > 0)) || return 0
	while :; do
		a=$(snap); sleep 1; b=$(snap)
		pct=$(awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
			t = (y[3] - x[3]) + (y[6] - x[6]); o = (y[1] - x[1]) + (y[4] - x[4]) - (y[7] - x[7])
			printf "%.0f", (t > 0 ? 100 * o / t : 0) }')
		((pct >= 5)) || return 0
		((SECONDS < deadline)) || { echo "  (the machine stayed busy: other processes at ${pct}% after ${QUIET_WAIT} s; running anyway)"; return 0; }
	done
}

# wait_time_wait: up to 65 s (TIME_WAIT lasts 60 s on Linux) until fewer
# than 2,000 TCP connections are in TIME_WAIT (state 06 in /proc/net/tcp*).
time_waits() { cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "06"' | wc -l; }
wait_time_wait() {
	local n start=$SECONDS
	n=$(time_waits)
	((n >= 2000)) || return 0
	local first=$n
	while ((n >= 2000 && SECONDS - start < 65)); do sleep 1; n=$(time_waits); done
	echo "  (waited $((SECONDS - start)) s for closed connections to expire: $first in TIME_WAIT, now $n)"
}

# measure TOOL RATE ROUND: runs one generator, pinned, timed and bounded,
# then parses its output into one row of $RUNS and one printed line.
measure() {
	local tool=$1 rate=$2 round=$3 out=$WORK/out.$1.$2.$3 tf=$WORK/time.$1.$2.$3 cmd=()
	local url="http://127.0.0.1:$((PORT + RUN_NO % NPORTS))/x"
	RUN_NO=$((RUN_NO + 1))
	printf 'POST %s\nContent-Type: application/json\n@%s\n' "$url" "$WORK/body.json" >"$WORK/vegeta.targets"
	case $tool in
	loadlab | loadlab-ui) cmd=("$LOADLAB" load --target "$url" --arrivals uniform --base-rate "$rate" --peak-rate "$rate"
		--duration "$DURATION" --time-scale 1 --timeout "$TIMEOUT_S" --json)
		[[ $tool == loadlab-ui ]] && cmd+=(--ui "127.0.0.1:$UI_PORT") ;;
	vegeta) cmd=(vegeta attack -targets "$WORK/vegeta.targets" -rate "$rate/1s" -duration "${DURATION}s"
		-timeout "${TIMEOUT_S}s" -output "$out.bin") ;;
	hey) cmd=(hey -z "${DURATION}s" -c "$CONCURRENCY" -t "$TIMEOUT_S" -m POST -T application/json -d "$BODY" "$url") ;;
	wrk) cmd=(wrk -t1 -c "$CONCURRENCY" -d "${DURATION}s" --timeout "${TIMEOUT_S}s" -s "$WORK/wrk.lua" "$url") ;;
	esac
	kill -0 "$NGINX_PID" 2>/dev/null || { cat "$NG/error.log" >&2 2>/dev/null; say "nginx has died"; exit 1; }
	local s0 s1 rc=0 nl0
	nl0=$(wc -l <"$NG/error.log" 2>/dev/null || echo 0)
	s0=$(snap)
	# setsid: the run is its own process group, which cleanup kills whole;
	# timeout --foreground stays in it. time measures timeout and the tool.
	setsid taskset -c "$GENERATOR_CPU" /usr/bin/time -f '%e %U %S %M' -o "$tf" \
		timeout --foreground -k 5 $((DURATION + 40)) "${cmd[@]}" </dev/null >"$out" 2>"$out.err" &
	RUN_PID=$!
	if [[ $tool == loadlab-ui ]]; then
		# A browser: read the dashboard's stream while the run lasts. All of
		# it on the endpoint's core, the wait for the page included: a
		# process started on the generator's core would take its time.
		taskset -c "$ENDPOINT_CPU" bash -c 'for _ in $(seq 50); do curl -s -o /dev/null "$1/state" && break; sleep 0.1; done
			exec curl -sN "$1/events"' _ "http://127.0.0.1:$UI_PORT" >"$out.events" 2>/dev/null &
	fi
	wait "$RUN_PID" || rc=$?
	RUN_PID=""
	s1=$(snap)

	local status=ok
	if ((rc == 124 || rc == 137)); then status="timed out after $((DURATION + 40)) s"
	elif [[ $tool == loadlab* && $rc == 1 ]]; then : # some requests failed: still a result
	elif ((rc != 0)); then status="exit $rc"; fi
	local wall user sys rss
	read -r wall user sys rss < <(tail -1 "$tf" 2>/dev/null || true) || true
	[[ ${wall:-} =~ ^[0-9.]+$ ]] || { status="${status/ok/no timing}"; wall=NA user=0 sys=0 rss=0; }

	# v = "ok2xx sent not_sent late dropped behind p50 p99 max sp99 smax note": latencies
	# in ms, NA where the tool reports nothing; note: what failed, as the tool says it.
	local v="" planned=$((rate * DURATION))
	if [[ $status == ok ]]; then
		case $tool in
		loadlab | loadlab-ui) v=$(jq -r --argjson planned "$planned" '
			def ms: if . == null then "NA" else . * 1000 end;
			[.on_time, .requests, ($planned - .requests), .late_starts, .dropped, .behind,
			 (.latency_from_send.p50_s | ms), (.latency_from_send.p99_s | ms), (.latency_from_send.max_s | ms),
			 (.latency_from_schedule.p99_s | ms), (.latency_from_schedule.max_s | ms),
			 ([(if (.timed_out // 0) > 0 then "timed out \(.timed_out)" else empty end),
			   (if (.transport_errors // 0) > 0 then "transport errors \(.transport_errors)" else empty end),
			   (if (.error_status // 0) > 0 then "error statuses \(.error_status)" else empty end)] | join(", "))]
			| map(if . == null then "NA" else . end) | @tsv' "$out" 2>/dev/null) || v="" ;;
		vegeta) v=$(vegeta report -type=json "$out.bin" 2>/dev/null | jq -r --argjson planned "$planned" '
			[(.status_codes["200"] // 0), .requests, ($planned - .requests), "NA", "NA", "NA",
			 .latencies["50th"] / 1e6, .latencies["99th"] / 1e6, .latencies.max / 1e6, "NA", "NA",
			 ((.errors // [])[0:3] | join(" | "))] | @tsv' 2>/dev/null) || v=""
			rm -f "$out.bin" ;;
		hey) v=$(awk '
			/^ *Slowest:/ { max = $2 * 1000 }
			/^ *50%+ in / { p50 = $3 * 1000 }
			/^ *99%+ in / { p99 = $3 * 1000 }
			/^Status code distribution:/ { sec = "s"; next }
			/^Error distribution:/ { sec = "e"; next }
			# "[200]  N responses" under status codes; "[N]  message" under errors
			sec == "s" && /^ *\[[0-9]+\]/ { n = $1; gsub(/[^0-9]/, "", n); sent += $2; if (n ~ /^2/) ok += $2 }
			sec == "e" && /^ *\[[0-9]+\]/ { n = $1; gsub(/[^0-9]/, "", n); sent += n
				if (note == "") { note = $0; sub(/^ */, "", note); gsub(/\t/, " ", note) } }
			END { if (sent > 0 && p50 != "") printf "%d\t%d\tNA\tNA\tNA\tNA\t%s\t%s\t%s\tNA\tNA\t%s\n", ok, sent, p50, p99, max, note }' "$out") ;;
		wrk) v=$(sed -n 's/^WRKJSON //p' "$out" | jq -r '
			[.requests - .status, .requests + .timeout, "NA", "NA", "NA", "NA",
			 .p50_us / 1000, .p99_us / 1000, .max_us / 1000, "NA", "NA",
			 ([(if .connect > 0 then "connect errors \(.connect)" else empty end), (if .read > 0 then "read errors \(.read)" else empty end),
			   (if .write > 0 then "write errors \(.write)" else empty end), (if .timeout > 0 then "timeouts \(.timeout)" else empty end),
			   (if .status > 0 then "non-2xx \(.status)" else empty end)] | join(", "))] | @tsv' 2>/dev/null) || v="" ;;
		esac
		[[ -n $v ]] || status="unreadable output"
	fi

	# Busy shares of each core during the run, in %. Other processes: the
	# core's user+system time beyond the generator's (or nginx's) own, a
	# lower bound, since softirq work done in a task's context counts as
	# the task's own time in its rusage but as softirq in /proc/stat.
	local gen_busy gen_irq gen_other nginx_pct end_irq end_other
	read -r gen_busy gen_irq gen_other nginx_pct end_irq end_other <<<"$(awk -v a="$s0" -v b="$s1" \
		-v u="$user" -v s="$sys" -v hz="$HZ" 'BEGIN {
		split(a, x, " "); split(b, y, " "); for (i = 1; i <= 7; i++) d[i] = y[i] - x[i]
		ga = d[3] > 0 ? d[3] : 1; ea = d[6] > 0 ? d[6] : 1
		go = d[1] - (u + s) * hz; if (go < 0) go = 0
		eo = d[4] - d[7]; if (eo < 0) eo = 0
		printf "%.0f %.0f %.0f %.0f %.0f %.0f\n", 100 * (d[1] + d[2]) / ga, 100 * d[2] / ga, 100 * go / ga,
			100 * d[7] / ea, 100 * d[5] / ea, 100 * eo / ea }')"

	if [[ $status != ok ]]; then
		FAILED=$((FAILED + 1))
		printf '%s\t%s\t%s\t%s' "$tool" "$rate" "$round" "${status// /_}" >>"$RUNS"
		for _ in $(seq 5 25); do printf '\tNA' >>"$RUNS"; done
		printf '\n' >>"$RUNS"
		printf '  round %d  %-7s %-8s FAILED: %s\n' "$round" "$tool" "$(ratelabel "$tool" "$rate")" "$status"
		tail -5 "$out.err" 2>/dev/null | sed 's/^/      /'
		return 0
	fi
	local ok sent not_sent late dropped behind p50 p99 max sp99 smax note failed ngnote
	IFS=$'\t' read -r ok sent not_sent late dropped behind p50 p99 max sp99 smax note <<<"$v"
	failed=$((sent - ok))
	# What nginx logged during the run (a connection limit, say), most frequent first.
	ngnote=$(tail -n +"$((nl0 + 1))" "$NG/error.log" 2>/dev/null | sed 's/^[0-9/]* [0-9:]* \(\[[a-z]*\]\) [0-9#]*: \(\*[0-9]* \)\{0,1\}/\1 /' |
		sort | uniq -c | sort -rn | head -3 | awk '{ n = $1; $1 = ""; printf "%s%s× %s", sep, n, substr($0, 2); sep = "; " }')
	local row
	row=$(awk -v ok="$ok" -v sent="$sent" -v w="$wall" -v u="$user" -v s="$sys" -v rss="$rss" 'BEGIN {
		printf "%.1f\t%.2f\t%.1f", ok / w, (sent > 0 ? (u + s) * 1e6 / sent : 0), rss / 1024 }')
	local fields=("$tool" "$rate" "$round" ok "$row" "$sent" "$not_sent" "$failed" "$late" "$dropped" "$behind"
		"$p50" "$p99" "$max" "$sp99" "$smax" "$wall" "$gen_busy" "$gen_irq" "$gen_other" "$nginx_pct" "$end_irq" "$end_other")
	(IFS=$'\t'; echo "${fields[*]}") >>"$RUNS"
	local achieved cpu_us rss_mb noisy=""
	IFS=$'\t' read -r achieved cpu_us rss_mb <<<"$row"
	if ((gen_other > 5 || end_other > 5)); then
		noisy="  NOISY: other processes took ${gen_other}% of the generator's core, ${end_other}% of nginx's"
		NOISY=$((NOISY + 1)); NOISY_RUNS+=("$tool $(ratelabel "$tool" "$rate") round $round")
	fi
	{
		printf '  round %d  %-7s %-8s achieved %7.0f/s  CPU %6.1f µs/req  RSS %4.0f MB  sent %d' \
			"$round" "$tool" "$(ratelabel "$tool" "$rate")" "$achieved" "$cpu_us" "$rss_mb" "$sent"
		[[ $not_sent == NA ]] || printf ' (not sent %d)' "$not_sent"
		((failed == 0)) || printf '  failed %d%s' "$failed" "${note:+ ($note)}"
		[[ $late == NA ]] || printf '  late %d dropped %d behind %d' "$late" "$dropped" "$behind"
		printf '\n           latency from send p50 %s p99 %s max %s ms' "$(fmtms "$p50")" "$(fmtms "$p99")" "$(fmtms "$max")"
		[[ $sp99 == NA ]] || printf ', from schedule p99 %s max %s ms' "$(fmtms "$sp99")" "$(fmtms "$smax")"
		printf '\n           wall %s s; generator core %s%% busy (softirq %s%%, other processes %s%%); endpoint core: nginx %s%%, softirq %s%%, other processes %s%%%s\n' \
			"$wall" "$gen_busy" "$gen_irq" "$gen_other" "$nginx_pct" "$end_irq" "$end_other" "$noisy"
		[[ -z $ngnote ]] || printf '           nginx logged: %s\n' "$ngnote"
	}
	[[ -z ${OUT:-} ]] || { mkdir -p "$OUT/raw" && cp "$out" "$out.err" "$tf" "$OUT/raw/" 2>/dev/null || true; }
}

ratelabel() { if [[ $1 == hey || $1 == wrk ]]; then echo "c=$CONCURRENCY"; else echo "$2/s"; fi; }
fmtms() { awk -v x="$1" 'BEGIN { if (x == "NA") print "—"; else if (x < 10) printf "%.2f", x; else if (x < 100) printf "%.1f", x; else printf "%.0f", x }'; }

# ---- the rounds ----
OPEN=() CLOSED=()
for t in $TOOLS; do case $t in loadlab | loadlab-ui | vegeta) OPEN+=("$t") ;; *) CLOSED+=("$t") ;; esac; done
NRATES=$(wc -w <<<"$RATES")
NRUNS=$((ROUNDS * (NRATES * ${#OPEN[@]} + ${#CLOSED[@]})))
((CEILING == 0)) || echo "bench-peers: then each open-loop tool's ceiling, one run per rate of $CEILING_RATES until one does not hold"
EST=$((NRUNS * (DURATION + 2 + PAUSE_S)))
LOAD1=$(cut -d' ' -f1 /proc/loadavg)

echo "bench-peers: $NRUNS runs of $DURATION s in $ROUNDS interleaved rounds, about $((EST / 60)) min $((EST % 60)) s"
echo "  endpoint: nginx $NGINX_VERSION on 127.0.0.1:$PORT-$((PORT + NPORTS - 1)) (a port per run, in turn), pinned to CPU $ENDPOINT_CPU; generators pinned to CPU $GENERATOR_CPU"
echo "  versions: $(joined "${VERSIONS[@]}")"
if ((${#INSTALLED[@]})); then
	echo "  installed now: $(joined "${INSTALLED[@]}")"
else
	echo "  installed now: nothing (everything was there)"
fi
echo "  load average before: $LOAD1 (other work on the machine distorts the figures)"
[[ -z $NGINX_START_LOG ]] || echo "  nginx said at start: $NGINX_START_LOG"
echo

START=$(date +%s)
for round in $(seq 1 "$ROUNDS"); do
	echo "round $round of $ROUNDS"
	for rate in $RATES; do
		for t in "${OPEN[@]}"; do wait_time_wait; wait_quiet; measure "$t" "$rate" "$round"; sleep "$PAUSE_S"; done
	done
	for t in "${CLOSED[@]}"; do wait_time_wait; wait_quiet; measure "$t" 0 "$round"; sleep "$PAUSE_S"; done
done

# ---- each open-loop tool's ceiling: the highest of CEILING_RATES that holds ----
CRUNS=$WORK/ceilings.tsv
echo "$COLS" | tr ' ' '\t' >"$CRUNS"
CEILINGS=$WORK/ceilings.txt
: >"$CEILINGS"
# holds ROW: the run sent ≥ 99% of its plan, ≥ 99% of what it sent was
# answered 2xx, and at most 1% of the plan was late, dropped or behind.
holds() {
	awk -F'\t' -v d="$DURATION" '{ planned = $2 * d
		if ($4 != "ok") exit 1
		late = ($11 == "NA" ? 0 : $11) + ($12 == "NA" ? 0 : $12) + ($13 == "NA" ? 0 : $13)
		exit !($8 >= 0.99 * planned && $10 <= 0.01 * $8 && late <= 0.01 * planned) }' <<<"$1"
}
if ((CEILING)); then
	for t in "${OPEN[@]}"; do
		[[ $t != loadlab-ui ]] || continue
		echo "ceiling of $t: once at each of $CEILING_RATES requests/s until one does not hold"
		held="" first_miss=""
		for rate in $CEILING_RATES; do
			wait_time_wait; wait_quiet
			RUNS=$CRUNS measure "$t" "$rate" 0
			row=$(tail -1 "$CRUNS")
			if holds "$row"; then held=$row; else first_miss=$row; break; fi
			sleep "$PAUSE_S"
		done
		printf '%s\t%s\t%s\n' "$t" "$held" "$first_miss" >>"$CEILINGS"
	done
fi
ELAPSED=$(($(date +%s) - START))

# ---- the summary: medians over rounds, each column on its own ----
summary() {
	echo "Load generators side by side: medians of $ROUNDS interleaved rounds of $DURATION s each"
	echo "($(date -u +%Y-%m-%d), $(nproc --all) cores ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), Linux $(uname -r);"
	echo "generator pinned to one core, nginx $NGINX_VERSION (1 worker, \`return 200\`) to the other;"
	echo "$(joined "${VERSIONS[@]}")). Measured with \`make bench-peers\`."
	echo
	echo "| generator | loop | asked | achieved /s | CPU µs/req | max RSS MB | not sent | failed | late / dropped / behind | p50 ms | p99 ms | max ms | from schedule p99 / max ms |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	awk -F'\t' -v rounds="$ROUNDS" -v conc="$CONCURRENCY" '
	function median(key, col,    n, a, i, j, t, parts) {
		n = split(vals[key, col], parts, " "); if (n == 0) return "NA"
		for (i = 1; i <= n; i++) a[i] = parts[i] + 0
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function ms(x) { if (x == "NA") return "—"; if (x < 10) return sprintf("%.2f", x); if (x < 100) return sprintf("%.1f", x); return sprintf("%.0f", x) }
	function int0(x) { return x == "NA" ? "—" : sprintf("%.0f", x) }
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		key = $1 SUBSEP $2
		if (!(key in seen)) { seen[key] = 1; order[++nk] = key; tool[key] = $1; rate[key] = $2 }
		if ($c["status"] != "ok") { failed[key]++; next }
		good[key]++
		for (i = 5; i <= NF; i++) if ($i != "NA") vals[key, i] = vals[key, i] " " $i
	}
	END {
		for (k = 1; k <= nk; k++) {
			key = order[k]; t = tool[key]
			name = t; if (good[key] < rounds) name = name " (" good[key] + 0 " of " rounds " runs)"
			open = (t ~ /^loadlab/ || t == "vegeta")
			loop = open ? "open" : "closed"
			asked = open ? sprintf("%d/s", rate[key]) : sprintf("— (%d conns)", conc)
			if (good[key] == 0) { printf "| %s | %s | %s | failed | | | | | | | | | |\n", name, loop, asked; continue }
			ldb = t ~ /^loadlab/ ? int0(median(key, c["late"])) " / " int0(median(key, c["dropped"])) " / " int0(median(key, c["behind"])) : "not reported"
			if (!open) ldb = "— (closed loop)"
			sched = t ~ /^loadlab/ ? ms(median(key, c["sched_p99_ms"])) " / " ms(median(key, c["sched_max_ms"])) : "—"
			printf "| %s | %s | %s | %.0f | %.1f | %.0f | %s | %s | %s | %s | %s | %s | %s |\n", name, loop, asked,
				median(key, c["achieved"]), median(key, c["cpu_us"]), median(key, c["rss_mb"]),
				open ? int0(median(key, c["not_sent"])) : "—", int0(median(key, c["failed"])), ldb,
				ms(median(key, c["p50_ms"])), ms(median(key, c["p99_ms"])), ms(median(key, c["max_ms"])), sched
		}
	}' "$RUNS"
	echo
	echo "Achieved: 2xx answers per wall-clock second of the generator process (start-up and the"
	echo "last answers included). CPU: user+sys of the generator process per request sent. Not sent:"
	echo "planned (rate × duration) minus sent; failed: sent but not answered 2xx in ${TIMEOUT_S} s. Late:"
	echo "loadlab's late starts (sent over 0.1 s after their schedule); dropped: refused by its"
	echo "in-flight cap; behind: due but never sent. Latency from the moment of sending, as each tool"
	echo "measures it (vegeta, hey and wrk measure from the send only, so they hide coordinated"
	echo "omission); loadlab also from the schedule. hey and wrk are closed loop: each of their"
	echo "$CONCURRENCY connections sends its next request when the previous one is answered, so their rate"
	echo "is what one core can push, not a rate asked for: their CPU per request is the floor."
	if [[ -s $CEILINGS ]]; then
		echo
		echo "Ceilings: the highest of $CEILING_RATES requests/s each open-loop tool held (sent ≥ 99%"
		echo "of the plan, ≥ 99% of it answered 2xx, ≤ 1% late, dropped or behind), one run each:"
		echo
		echo "| generator | ceiling: asked /s | achieved /s | CPU µs/req | next rate: asked /s | achieved /s | not sent | failed | late / dropped / behind |"
		echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
		awk -F'\t' '
		function f(x) { return (x == "" || x == "NA") ? "—" : x }
		{
			n = split($0, a, "\t"); tool = a[1]
			# fields 2.. are the held row (25 columns or empty), then the missed row
			h = 2; if (a[2] == "") { m = 3 } else { m = 2 + 25 }
			held = a[2] != "" ? sprintf("%s | %.0f | %.1f", a[h + 1], a[h + 4], a[h + 5]) : "below the first | — | —"
			if (m <= n && a[m] != "") {
				ldb = a[m + 10] == "NA" ? "not reported" : a[m + 10] " / " a[m + 11] " / " a[m + 12]
				miss = sprintf("%s | %s | %s | %s | %s", a[m + 1], (a[m + 3] == "ok" ? sprintf("%.0f", a[m + 4]) : a[m + 3]), f(a[m + 8]), f(a[m + 9]), ldb)
			} else miss = "— (every rate held) | — | — | — | —"
			printf "| %s | %s | %s |\n", tool, held, miss
		}' "$CEILINGS"
	fi
	if ((${#NOISY_RUNS[@]})); then
		echo
		echo "Noisy runs (other processes took more than 5% of a pinned core; see the per-run lines):"
		echo "$(joined "${NOISY_RUNS[@]}")."
	fi
	if ((FAILED)); then
		echo
		echo "$FAILED run(s) failed and are left out of the medians (see the per-run lines)."
	fi
}
echo
summary | tee "$WORK/summary.md"
echo
echo "bench-peers: $NRUNS runs in $((ELAPSED / 60)) min $((ELAPSED % 60)) s; installed now: $( ((${#INSTALLED[@]})) && joined "${INSTALLED[@]}" || echo nothing)"
if [[ -n ${OUT:-} ]]; then
	mkdir -p "$OUT" && cp "$WORK/summary.md" "$RUNS" "$CRUNS" "$OUT/" && echo "bench-peers: summary.md, runs.tsv and raw/ kept in $OUT"
fi
((NOISY == 0)) || say "$NOISY run(s) were noisy: other processes shared a pinned core; re-run on a quiet machine"
((FAILED == 0)) || { say "$FAILED run(s) failed; the table uses the others"; exit 1; }
exit 0
