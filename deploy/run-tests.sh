#!/usr/bin/env bash
# run-tests.sh — make test's tests, in two groups (see the Makefile's test
# target for which package is in which, and why).
#
#   bash deploy/run-tests.sh PKG...   (the packages that run two at a time,
#                                      as folders: . budgets client/split …)
#
# 0. One loadlab binary is built for every test that runs loadlab as a
#    child process ($LOADLAB_BIN; exptest.BuildLoadlab returns it), and
#    deploy's test binary; deploy's tests, which wait on Docker for most
#    of their time (image builds, containers, a swarm), start at once and
#    run beside groups 1 and 2.
# 1. The packages named run with `go test -p 2`: their tests keep time
#    on a fake clock (testing/synctest) or take none as their subject, so
#    other work beside them changes nothing they check. Meanwhile the
#    test binaries of every other package are built, two at a time
#    (go test -c).
# 2. Then every other package's binary runs, from its package's folder as
#    go test runs it, with -test.parallel 4, $LANES packages at a time
#    (default 3), the longest first: their tests take real time as their
#    subject (experiments in child processes, containers, the browser),
#    each with a tolerance derived from what it measures, so that the
#    packages beside it change none of their outcomes; LANES=1 runs them
#    one at a time.
# Each package's outcome is printed as go test prints it (ok, FAIL, or no
# test files, with the seconds its tests took); a failing package's output
# is printed in full. No test is run twice. Exit status 1 if any package
# failed or did not build. GO (default go), GOTEST_TIMEOUT (default 14m)
# and LANES (default 3) in the environment. Its last line, on standard
# error, gives the seconds the first group (with the builds) and all took.
set -uo pipefail

case "${1:-}" in
-h | --help) sed -n '2,/^set -uo pipefail$/{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
-*) echo "run-tests: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
GO="${GO:-go}"
timeout="${GOTEST_TIMEOUT:-14m}"
lanes="${LANES:-3}"
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
trap 'kill $builder ${earlyrun:-} 2>/dev/null; rm -rf "$bins"' EXIT
trap 'exit 130' INT TERM

if ! $GO build -o "$bins/loadlab" ./cmd/loadlab; then
	echo "FAIL	$module/cmd/loadlab [build failed]"
	exit 1
fi
export LOADLAB_BIN="$bins/loadlab"

# build PKG: its race-enabled test binary as $bins/<path with _>.test, or
# none when it has no test files; the build's output in .log beside it.
build() {
	local pkg="$1" name
	name="$(echo "${pkg#"$module"}" | tr / _)"
	$GO test -race -vet=off -c -o "$bins/x$name.test" "$pkg" >"$bins/x$name.log" 2>&1 || echo failed >"$bins/x$name.failed"
}
export -f build
export GO bins module
# deploy's binary first: it runs beside the first group (below).
early=()
for p in "${serial[@]}"; do
	[ "$p" = "$module/deploy" ] && early+=("$p")
done
for p in "${early[@]}"; do build "$p"; done
printf '%s\n' "${serial[@]}" | grep -vxF -e "${module}/-" "${early[@]/#/-e}" | xargs -P 2 -I{} bash -c 'build {}' &
builder=$!

# run PKG: its test binary from its folder, with the line go test would
# print (and the whole output when it failed), printed under a lock so
# that lanes do not mix their lines; a failure leaves .failed beside it.
run() {
	local pkg="$1" name bin dir begun rc ms took
	name="$(echo "${pkg#"$module"}" | tr / _)"
	bin="$bins/x$name.test"
	if [ -e "$bins/x$name.failed" ]; then
		flock "$bins" sh -c 'cat "$1"; printf "FAIL\t%s [build failed]\n" "$2"' - "$bins/x$name.log" "$pkg"
		return
	elif [ ! -e "$bin" ]; then
		flock "$bins" printf '?   \t%s\t[no test files]\n' "$pkg"
		return
	fi
	dir=".${pkg#"$module"}" # the package's folder, from the module's root (cd'd to above)
	begun=$(date +%s%N)
	(cd "$dir" && "$bin" -test.count=1 -test.timeout="$timeout" -test.parallel=4 -test.paniconexit0) >"$bin.out" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - begun) / 1000000))
	took="$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	# A passing package's output is not shown, as go test shows none.
	if [ $rc -eq 0 ]; then
		flock "$bins" printf 'ok  \t%s\t%ss\n' "$pkg" "$took"
		return
	fi
	echo failed >"$bins/x$name.failed"
	flock "$bins" sh -c 'cat "$1"; printf "FAIL\t%s\t%ss\n" "$2" "$3"' - "$bin.out" "$pkg" "$took"
}
export -f run
export timeout

# deploy's tests wait on Docker for most of their time (image builds,
# containers, a swarm): they run beside the first group, whose tests keep
# time on a fake clock, and beside the builds.
began=$(date +%s)
for p in "${early[@]}"; do run "$p" & done
earlyrun=$!
[ ${#early[@]} -gt 0 ] || earlyrun=""

status=0
[ ${#parallel[@]} -eq 0 ] || $GO test -race -vet=off -count=1 -p 2 -timeout "$timeout" "${parallel[@]}" || status=1
first=$(date +%s)
wait "$builder"
builder=""

# The longest first, so that the last lane to finish is not the one that
# drew deploy at the end.
mapfile -t order < <(printf '%s\n' "${serial[@]}" | grep -vxF -e "${module}/-" "${early[@]/#/-e}" | awk -v m="$module" '
	$0 == m"/cmd/loadlab" {print 1, $0; next}
	$0 == m"/experiments/runner" {print 2, $0; next}
	{print 3, $0}' | sort -s -k1,1n | cut -d" " -f2)
printf '%s\n' "${order[@]}" | xargs -P "$lanes" -I{} bash -c 'run {}'
[ -z "$earlyrun" ] || wait "$earlyrun"
echo "run-tests: the first group and the builds took $((first - began)) s, all $(($(date +%s) - began)) s" >&2
ls "$bins"/*.failed >/dev/null 2>&1 && status=1
exit $status
