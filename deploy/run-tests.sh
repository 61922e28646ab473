#!/usr/bin/env bash
# run-tests.sh — make test's tests, in two groups (see the Makefile's test
# target for which package is in which, and why).
#
#   bash deploy/run-tests.sh PKG...   (the packages that run two at a time,
#                                      as folders: . budgets client/split …)
#
# 1. The packages named run with `go test -p 2`; meanwhile the test
#    binaries of every other package are built, two at a time (go test
#    -c): those packages' tests are not about time, so builds beside them
#    change nothing they check.
# 2. Then every other package's binary runs alone, from its package's
#    folder as go test runs it, with -test.parallel 4: their tests take
#    real time as their subject, start child processes or containers, and
#    must not share this machine's cores with another package or a build.
#    `go test -p 1` would link each binary just before running it, one
#    after another (about 35 s of make test on a two-core machine).
#
# Each package's outcome is printed as go test prints it (ok, FAIL, or no
# test files, with the seconds its tests took); a failing package's output
# is printed in full. Exit status 1 if any package failed or did not build.
#
# A virtual machine's host can take its CPU ("steal" in /proc/stat), and a
# real-time test then measures the host, not the code. While a package of
# the second group runs, the steal share of the CPU time is read every
# second; when the package fails and the host took at least STEAL_RERUN
# percent of it over some 5 seconds of its run (default 10; 0 turns
# reruns off), its failed tests run once more, alone: the package passes
# only if they all pass then. Both outputs are printed, with the steal
# share (over the package's run, and at most over 5 s), and a closing list
# of what passed only the second time. A failure on a host that took
# less, a panic, a timeout or a build failure is not rerun.
# GO (default go), GOTEST_TIMEOUT (default 14m), STEAL_RERUN, and
# PROC_STAT (default /proc/stat: where the CPU times are read; its test
# gives a file of its own) in the environment.
set -uo pipefail

case "${1:-}" in
-h | --help) sed -n '2,/^set -uo pipefail$/{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
-*) echo "run-tests: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
GO="${GO:-go}"
timeout="${GOTEST_TIMEOUT:-14m}"
steal_rerun="${STEAL_RERUN:-10}"
case "$steal_rerun" in
'' | *[!0-9]*) echo "run-tests: STEAL_RERUN=$steal_rerun is not a whole percent" >&2; exit 2 ;;
esac
proc_stat="${PROC_STAT:-/proc/stat}"
module="$($GO list -m)"

parallel=()
for p in "$@"; do
	[ "$p" = . ] && parallel+=("$module") || parallel+=("$module/${p#./}")
done
# Every package not named runs alone (all of them when none is named:
# "$module/-", which names no package, keeps grep from an empty list).
mapfile -t serial < <($GO list ./... | grep -vxF -e "${module}/-" "${parallel[@]/#/-e}")

bins="$(mktemp -d)"
builder=""
sampler=""
trap 'kill $builder $sampler 2>/dev/null; rm -rf "$bins"' EXIT
trap 'exit 130' INT TERM

# build PKG: its race-enabled test binary as $bins/<path with _>.test, or
# none when it has no test files; the build's output in .log beside it.
build() {
	local pkg="$1" name
	name="$(echo "${pkg#"$module"}" | tr / _)"
	$GO test -race -vet=off -c -o "$bins/x$name.test" "$pkg" >"$bins/x$name.log" 2>&1 || echo failed >"$bins/x$name.failed"
}
export -f build
export GO bins module
printf '%s\n' "${serial[@]}" | xargs -P 2 -I{} bash -c 'build {}' &
builder=$!

# steal_sampler FILE: appends "all-ticks stolen-ticks" from /proc/stat's
# first line (user nice system idle iowait irq softirq steal) to FILE every
# second until killed; nothing where there is no /proc/stat.
steal_sampler() {
	[ -r "$proc_stat" ] || return 0
	while :; do
		awk '/^cpu /{print $2+$3+$4+$5+$6+$7+$8+$9, $9; exit}' "$proc_stat" >>"$1"
		sleep 1
	done
}
# steal_shares FILE: "OVERALL PEAK", the stolen share of the CPU time in
# percent over all of FILE's samples and at most over 5 seconds of them.
steal_shares() {
	awk '{t[NR] = $1; s[NR] = $2}
	END {
		peak = 0
		for (i = 1; i <= NR; i++) {
			j = (i > 5 ? i - 5 : 1)
			if (t[i] > t[j] && 100 * (s[i] - s[j]) / (t[i] - t[j]) > peak) peak = 100 * (s[i] - s[j]) / (t[i] - t[j])
		}
		all = (NR > 1 && t[NR] > t[1] ? 100 * (s[NR] - s[1]) / (t[NR] - t[1]) : 0)
		printf "%.1f %.1f\n", all, peak
	}' "$1" 2>/dev/null || echo "0.0 0.0"
}

# run_alone DIR BIN OUT [FLAG...]: BIN's tests from DIR, as go test runs
# them, output to OUT; its exit status.
run_alone() {
	local dir="$1" bin="$2" out="$3"
	shift 3
	(cd "$dir" && "$bin" -test.count=1 -test.timeout="$timeout" -test.parallel=4 -test.paniconexit0 "$@") >"$out" 2>&1
}

status=0
reran=()
most=-1 most_in="" # the highest 5-s steal share of any package, and where
[ ${#parallel[@]} -eq 0 ] || $GO test -race -vet=off -count=1 -p 2 -timeout "$timeout" "${parallel[@]}" || status=1
wait "$builder"
builder=""

for pkg in "${serial[@]}"; do
	name="$(echo "${pkg#"$module"}" | tr / _)"
	bin="$bins/x$name.test"
	if [ -e "$bins/x$name.failed" ]; then
		cat "$bins/x$name.log"
		printf 'FAIL\t%s [build failed]\n' "$pkg"
		status=1
		continue
	elif [ ! -e "$bin" ]; then
		printf '?   \t%s\t[no test files]\n' "$pkg"
		continue
	fi
	dir=".${pkg#"$module"}" # the package's folder, from the module's root (cd'd to above)
	begun=$(date +%s%N)
	steal_sampler "$bin.steal" &
	sampler=$!
	run_alone "$dir" "$bin" "$bin.out"
	rc=$?
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	sampler=""
	read -r steal peak <<<"$(steal_shares "$bin.steal")"
	if awk -v a="$peak" -v b="$most" 'BEGIN{exit !(a > b)}'; then
		most="$peak" most_in="$pkg"
	fi
	ms=$((($(date +%s%N) - begun) / 1000000))
	took="$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	# A passing package's output is not shown, as go test shows none.
	if [ $rc -eq 0 ]; then
		printf 'ok  \t%s\t%ss\n' "$pkg" "$took"
		continue
	fi
	cat "$bin.out"
	# The top-level tests that failed; none when it panicked or timed out.
	failed="$(sed -n 's/^--- FAIL: \([^ /]*\) .*/\1/p' "$bin.out" | sort -u | paste -sd'|')"
	stolen="steal $steal% of the CPU time, at most $peak% over 5 s"
	if [ "$steal_rerun" -gt 0 ] && [ "${peak%.*}" -ge "$steal_rerun" ] && [ -n "$failed" ] &&
		! grep -q '^panic: ' "$bin.out"; then
		printf -- '--- the host took the CPU while %s ran (%s): its failed tests again, alone: %s\n' "$pkg" "$stolen" "$failed"
		run_alone "$dir" "$bin" "$bin.rerun" -test.v -test.run "^($failed)\$"
		rc=$?
		cat "$bin.rerun"
		if [ $rc -eq 0 ]; then
			printf 'ok  \t%s\t%ss\t(%s failed with %s; passed again alone)\n' "$pkg" "$took" "$failed" "$stolen"
			reran+=("$pkg: $failed ($stolen)")
			continue
		fi
	fi
	printf 'FAIL\t%s\t%ss\t(%s)\n' "$pkg" "$took" "$stolen"
	status=1
done
[ -z "$most_in" ] || echo "The host's steal, one package at a time: at most $most% of the CPU over 5 s (in $most_in)."
if [ ${#reran[@]} -gt 0 ]; then
	echo "Passed only when run again, after failing while the host took the CPU:"
	printf '  %s\n' "${reran[@]}"
fi
exit $status
