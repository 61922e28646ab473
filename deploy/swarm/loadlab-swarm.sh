#!/usr/bin/env bash
# Runs a loadlab experiment, or a load test, on a Docker Swarm: the mock
# service as a service, each shard (or load segment) a one-task replicated
# job under equal CPU limits and reservations, then collects what each task
# printed and merges it with loadlab merge. See deploy/swarm/README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
Usage: deploy/swarm/loadlab-swarm.sh experiment [options] [-- loadlab experiment flags]
       deploy/swarm/loadlab-swarm.sh load [options] [-- loadlab load flags]
       deploy/swarm/loadlab-swarm.sh down [--name NAME]

Runs on a Docker Swarm (this node a manager: docker swarm init, or join):

  experiment  the mock service (one instance per shard, --instances N) and N
              one-task replicated jobs NAME-shard-I, I = 0..N-1, running
              loadlab experiment --shard I/N --json-lines --continue against
              instance I; each writes its results folder to the volume
              NAME-results on its node (/results/RUN/shard-I) and its JSON lines to
              the service log. Swarm restarts a killed shard (on failure, up to
              --restarts times) and --continue resumes it from its run log on
              that node's volume. Then loadlab merge of the N logs.
  load        the mock service and N one-task jobs NAME-segment-I running
              loadlab load --segment I/N --start-at T --json: one schedule, one
              target (the mock's /enrich). Not restarted: a segment that misses
              the start sends nothing. Then loadlab merge of the N results.
  down        remove the services, configs and network of NAME (the results
              volume is kept: docker volume rm NAME-results).

Options:
  --name NAME        prefix of every swarm object (default loadlab)
  --image IMAGE      image on every node (default loadlab:local, from make image;
                     without a registry: docker save IMAGE | ssh NODE docker load)
  --shards N         shards or segments (default 2)
  --cpus C           CPU limit and reservation of each shard or segment (default 1)
  --mock-cpus C      the mock service's (default 1)
  --time-scale S     the mock's time scale, and the experiment's override (default
                     0.25, the locked container design's)
  --file FILE        experiment file on this machine, given to the tasks as a swarm
                     config (default the image's /experiments/container.yaml)
  --hypotheses FILE  its preregistered hypotheses; the lock beside it goes too
                     (default the image's /experiments/container-hypotheses-v4.yaml)
  --constraint C     placement constraint of the shards (e.g. node.labels.loadlab==client)
  --restarts K       restarts of a failed shard (default 3; 0: none; segments are never restarted)
  --start-in SEC     load: seconds from now to the segments' common start (default 30)
  --timeout SEC      give up waiting for the jobs after SEC seconds (default 3600)
  --out DIR          where the logs and the merge go (default results/swarm-NAME-DATE)
  --keep             leave the services in place after collecting (default: removed)
  -h, --help         this help

Exit codes: 0 merged; 1 a task failed for good, or the jobs did not end within
--timeout (its logs are collected all the same); 2 bad input or no swarm.
EOF
}

die() { echo "loadlab-swarm: $*" >&2; exit 2; }
say() { echo "loadlab-swarm: $*" >&2; }

cmd="${1:-}"
case "$cmd" in
-h | --help) usage; exit 0 ;;
experiment | load | down) shift ;;
"") usage >&2; exit 2 ;;
*) die "unknown command \"$cmd\" (see --help)" ;;
esac

name=loadlab image=loadlab:local shards=2 cpus=1 mock_cpus=1 scale=0.25 file="" hyp="" constraint=""
restarts=3 start_in=30 timeout=3600 out="" keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	--name) name="$2"; shift 2 ;;
	--image) image="$2"; shift 2 ;;
	--shards) shards="$2"; shift 2 ;;
	--cpus) cpus="$2"; shift 2 ;;
	--mock-cpus) mock_cpus="$2"; shift 2 ;;
	--time-scale) scale="$2"; shift 2 ;;
	--file) file="$2"; shift 2 ;;
	--hypotheses) hyp="$2"; shift 2 ;;
	--constraint) constraint="$2"; shift 2 ;;
	--restarts) restarts="$2"; shift 2 ;;
	--start-in) start_in="$2"; shift 2 ;;
	--timeout) timeout="$2"; shift 2 ;;
	--out) out="$2"; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
extra=("$@")

[[ "$name" =~ ^[a-z0-9][a-z0-9-]{0,40}$ ]] || die "--name $name: lower-case letters, digits and dashes, at most 41"
[[ "$shards" =~ ^[1-9][0-9]?$ ]] && [ "$shards" -le 64 ] || die "--shards $shards: a whole number in [1, 64] (the mock serves at most 64 instances)"
[[ "$restarts" =~ ^[0-9]+$ ]] || die "--restarts $restarts: a whole number"
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout $timeout: whole seconds"
[[ "$start_in" =~ ^[1-9][0-9]*$ ]] || die "--start-in $start_in: whole seconds"
for v in "$cpus" "$mock_cpus" "$scale"; do
	[[ "$v" =~ ^[0-9]*\.?[0-9]+$ ]] && ! [[ "$v" =~ ^[0.]+$ ]] ||
		die "\"$v\" is not a positive number (--cpus, --mock-cpus, --time-scale)"
done

if [ "$cmd" = experiment ]; then
	{ [ -n "$file" ] && [ -n "$hyp" ]; } || { [ -z "$file" ] && [ -z "$hyp" ]; } ||
		die "--file and --hypotheses go together: an experiment file's hypotheses are locked to it"
	if [ -n "$hyp" ]; then
		# The lock beside the hypotheses, named as loadlab names it: the
		# file's name without its extension, .lock.
		lock="$hyp.lock"
		[[ "${hyp##*/}" != *.* ]] || lock="${hyp%.*}.lock"
		for f in "$file" "$hyp" "$lock"; do
			[ -r "$f" ] || die "cannot read $f (the lock is made by loadlab preregister)"
		done
	fi
fi
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info)"
[ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = active ] ||
	die "this Docker engine is in no swarm: docker swarm init --advertise-addr ADDR (or join one)"
[ "$(docker info --format '{{.Swarm.ControlAvailable}}')" = true ] || die "this node is not a swarm manager: run it on a manager"

net="$name-net" mock="$name-mock"

# objects lists the services and configs of $name, one per line.
objects() {
	docker service ls --format '{{.Name}}' --filter "name=$name-" | grep -E "^$name-(mock|shard-[0-9]+|segment-[0-9]+)$" || true
}

down() {
	local s
	for s in $(objects); do
		docker service rm "$s" >/dev/null
		# A job's ended tasks keep their containers, on the network, until
		# swarm prunes them; on this node, remove them now.
		docker ps -aq --filter "label=com.docker.swarm.service.name=$s" | xargs -r docker rm -f >/dev/null 2>&1 || true
	done
	for s in $(docker config ls --format '{{.Name}}' --filter "name=$name-" | grep -E "^$name-(spec|hyp|lock)-" || true); do
		docker config rm "$s" >/dev/null || true
	done
	# A network is removable once its tasks' containers are gone, and
	# gone a moment after its removal.
	for _ in $(seq 1 60); do
		docker network inspect "$net" >/dev/null 2>&1 || return 0
		docker network rm "$net" >/dev/null 2>&1 || true
		sleep 1
	done
	say "the network $net is still there after 60 s: docker network rm $net"
}

if [ "$cmd" = down ]; then
	down
	say "removed the services, configs and network of $name (kept the volume $name-results)"
	exit 0
fi

[ -z "$(objects)" ] || die "services of $name already exist ($(objects | tr '\n' ' ')): deploy/swarm/loadlab-swarm.sh down --name $name, or another --name"
docker image inspect "$image" >/dev/null 2>&1 || die "no image $image on this node (make image builds loadlab:local)"
run="$(date -u +%Y%m%dT%H%M%SZ)"
out="${out:-results/swarm-$name-$run}"
mkdir -p "$out" || die "--out $out cannot be made"
[ -w "$out" ] || die "--out $out is not writable"
out="$(cd "$out" && pwd)"
token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

# limits: equal limits and reservations (a guaranteed share, as a pod's
# Guaranteed QoS), read-only root, non-root, a tmpfs for /tmp.
limits() {
	echo --limit-cpu "$1" --reserve-cpu "$1" --read-only --user 65532:65532 --mount type=tmpfs,dst=/tmp --network "$net"
}

# An experiment's shards each get an instance of the mock (/i/I); load
# segments share one schedule and one target.
instances="$shards"
[ "$cmd" = experiment ] || instances=1
# From here on, an abort (a failed command, Ctrl-C) removes what was made.
cleaned=0
trap '[ "$cleaned" = 1 ] || [ "$keep" = 1 ] || down' EXIT
trap 'exit 130' INT TERM
docker network create --driver overlay --attachable "$net" >/dev/null
# shellcheck disable=SC2046
docker service create --detach --quiet --no-resolve-image --name "$mock" $(limits "$mock_cpus") --endpoint-mode dnsrr \
	--entrypoint /mockservice "$image" --listen=0.0.0.0:8080 --admin-token="$token" \
	--time-scale="$scale" --instances="$instances" >/dev/null
# Its name resolves once its task runs (DNS round robin: the task's own
# address, no virtual IP in between).
for _ in $(seq 1 120); do
	docker service ps "$mock" --format '{{.CurrentState}}' | grep -q '^Running ' && break
	sleep 1
done
docker service ps "$mock" --format '{{.CurrentState}}' | grep -q '^Running ' || {
	say "the mock service $mock is not running after 120 s: $(docker service ps "$mock" --no-trunc --format '{{.CurrentState}} {{.Error}}' | head -1)"
	exit 1
}
say "mock service $mock: $instances instance(s) at time scale $scale, $mock_cpus CPU"

# config makes a swarm config of a file (name by content: configs cannot
# change) and echoes its --config flag for target.
config() {
	local kind="$1" path="$2" target="$3" id
	id="$name-$kind-$(sha256sum "$path" | cut -c1-12)"
	docker config inspect "$id" >/dev/null 2>&1 || docker config create "$id" "$path" >/dev/null || return 1
	echo "--config source=$id,target=$target,mode=0444"
}

jobs=()
start_job() { # start_job SERVICE RESTART-FLAGS... -- ARGS...
	local svc="$1"; shift
	local flags=()
	while [ "$1" != -- ]; do flags+=("$1"); shift; done
	shift
	# shellcheck disable=SC2046
	docker service create --detach --quiet --no-resolve-image --name "$svc" --mode replicated-job --replicas 1 \
		$(limits "$cpus") --hostname '{{.Node.Hostname}}' "${flags[@]}" \
		--entrypoint /loadlab "$image" "$@" >/dev/null
	jobs+=("$svc")
}

if [ "$cmd" = experiment ]; then
	cfg=()
	spec=/experiments/container.yaml hyps=/experiments/container-hypotheses-v4.yaml
	if [ -n "$file" ]; then
		c="$(config spec "$file" /work/spec.yaml)" || exit 1
		read -ra f <<<"$c"; cfg+=("${f[@]}"); spec=/work/spec.yaml
	fi
	if [ -n "$hyp" ]; then
		c="$(config hyp "$hyp" /work/hypotheses.yaml)" || exit 1
		read -ra f <<<"$c"; cfg+=("${f[@]}")
		c="$(config lock "$lock" /work/hypotheses.lock)" || exit 1
		read -ra f <<<"$c"; cfg+=("${f[@]}"); hyps=/work/hypotheses.yaml
	fi
	place=()
	[ -z "$constraint" ] || place=(--constraint "$constraint")
	# --restart-max-attempts 0 is no limit to swarm: none is no restart.
	restart=(--restart-condition none)
	[ "$restarts" = 0 ] || restart=(--restart-condition on-failure --restart-max-attempts "$restarts" --restart-delay 1s)
	for i in $(seq 0 $((shards - 1))); do
		start_job "$name-shard-$i" "${cfg[@]}" "${place[@]}" \
			--mount "type=volume,src=$name-results,dst=/results" \
			"${restart[@]}" -- \
			experiment --file="$spec" --hypotheses="$hyps" --target="http://$mock:8080/i/$i" \
			--admin-token="$token" --wait=120s --time-scale="$scale" --shard="$i/$shards" \
			--out="/results/$run/shard-$i" --continue --json-lines "${extra[@]}"
	done
	say "$shards shards: ${jobs[*]} ($cpus CPU each)"
else
	start_at="$(date -u -d "@$(($(date +%s) + start_in))" +%Y-%m-%dT%H:%M:%SZ)"
	for i in $(seq 0 $((shards - 1))); do
		start_job "$name-segment-$i" --restart-condition none -- \
			load --target="http://$mock:8080/enrich" --admin-token="$token" --time-scale="$scale" --wait=60s \
			--segment="$i/$shards" --start-at="$start_at" --json "${extra[@]}"
	done
	say "$shards segments starting at $start_at: ${jobs[*]} ($cpus CPU each)"
fi

# Wait for every job to end: a task completed, or for 15 s none has run
# or waited to (its restarts spent: a restart takes the delay and a
# scheduling round). Each failure is said when seen, and why a task
# waits once it has waited 30 s (Pending: no node can reserve its CPU).
deadline=$(($(date +%s) + timeout)) begun=$(date +%s)
declare -A seen=()
status=0
active='^(New|Pending|Assigned|Accepted|Preparing|Ready|Starting|Running) '
for svc in "${jobs[@]}"; do
	idle=0
	while :; do
		tasks="$(docker service ps "$svc" --no-trunc --format '{{.CurrentState}}|{{.ID}}|{{.Node}}|{{.Error}}' 2>/dev/null || true)"
		while IFS='|' read -r state id node err; do
			if [[ "$state" =~ ^(Failed|Rejected) ]] && [ -z "${seen[$id]:-}" ]; then
				seen[$id]=1
				say "$svc: task $id on $node failed: $err"
			elif [[ "$state" =~ ^Pending ]] && [ -n "$err" ] && [ -z "${seen[p$id]:-}" ] && [ $(($(date +%s) - begun)) -ge 30 ]; then
				seen[p$id]=1
				say "$svc: task $id waits: $err"
			fi
		done <<<"$tasks"
		if grep -q '^Complete ' <<<"$tasks"; then
			break
		elif grep -qE "$active" <<<"$tasks"; then
			idle=0
		elif [ $((idle += 1)) -ge 15 ]; then
			break
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			say "$svc did not end within $timeout s"
			status=1
			break
		fi
		sleep 1
	done
done

# Collect: each job's standard output alone (its JSON lines; standard
# error, the progress, apart), every attempt's, in the order written. A
# job whose output holds its results is merged even when its task exited
# non-zero: loadlab exits 1 with results written (runs not valid, verdicts
# provisional, requests that failed), and swarm cannot tell that from a
# crash — it restarts such a shard, which finds its results finished and
# exits 2.
logs=()
results='^\{"kind":"results",'
[ "$cmd" = load ] && results='^\{$'
for svc in "${jobs[@]}"; do
	docker service logs --raw "$svc" >"$out/$svc.log" 2>"$out/$svc.stderr.log" || true
	docker service ps "$svc" --no-trunc --format '{{.Name}} {{.Node}} {{.CurrentState}} {{.Error}}' >"$out/$svc.tasks" || true
	logs+=("/data/$svc.log")
	if ! grep -qE "$results" "$out/$svc.log"; then
		say "$svc ended without results (docker service ps --no-trunc $svc; its standard error: $out/$svc.stderr.log)"
		status=1
	elif ! grep -q ' Complete ' "$out/$svc.tasks"; then
		say "$svc printed its results and exited non-zero (see $out/$svc.stderr.log)"
	fi
done
[ "$keep" = 1 ] || down
cleaned=1
if [ "$status" != 0 ]; then
	say "the logs are in $out; nothing merged"
	exit "$status"
fi
merged=/data/merged
[ "$cmd" = load ] && merged=/data/merged.json
docker run --rm --user "$(id -u):$(id -g)" -v "$out:/data" --entrypoint /loadlab "$image" merge --out "$merged" "${logs[@]}" >&2
say "merged into ${merged/\/data/$out}"
