# loadlab — see README.md. `make run` runs the main job, `make test` every test.
GO       ?= go
BIN      := bin
LISTEN   ?= 127.0.0.1:8080
PROFILE  ?= healthy

COMPOSE  ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)

.PHONY: all build install run conditions adaptive mock static image up down test lint bench reliability clean

all: build

# -buildvcs=auto: loadlab version names the commit even where GOFLAGS
# turns VCS stamping off.
build:
	$(GO) build -buildvcs=auto -o $(BIN)/ ./cmd/...

# loadlab and mockservice into $(go env GOBIN), else $(go env GOPATH)/bin.
install:
	$(GO) install -buildvcs=auto ./cmd/...
	@echo "installed loadlab and mockservice into $$(d=$$($(GO) env GOBIN); echo $${d:-$$($(GO) env GOPATH)/bin})"

# The main job: the replication experiment (in-process mock service, each
# client run a CPU-limited child process), its table, verdicts and reports.
run: build
	./$(BIN)/loadlab experiment --file experiments/replication.yaml --hypotheses experiments/hypotheses-v5.yaml $(EXPERIMENT_FLAGS)

# Conditions that change: phased scenarios, network faults and a crashing
# system of record (experiments/conditions.yaml).
conditions: build
	./$(BIN)/loadlab experiment --file experiments/conditions.yaml --hypotheses experiments/conditions-hypotheses-v2.yaml $(EXPERIMENT_FLAGS)

# Adaptive limits (C5-aimd, C5-vegas) and retries (C2-retries, C6) beside
# the static budgets, steady and phased.
adaptive: build
	./$(BIN)/loadlab experiment --file experiments/adaptive.yaml --hypotheses experiments/adaptive-hypotheses-v2.yaml $(EXPERIMENT_FLAGS)

# The mock dependencies alone, for loadlab run / load against them.
mock: build
	./$(BIN)/mockservice --listen $(LISTEN) --profile $(PROFILE)

# Static binaries and the files the image needs, in out/: the one build step
# that deploy/Dockerfile (in a golang image) and deploy/Dockerfile.local (on
# the host) share.
static:
	rm -rf out && mkdir -p out/static out/experiments out/empty
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath -ldflags='-s -w' -o out/static/ ./cmd/...
	cp experiments/*.yaml experiments/*.lock out/experiments/

# The image, without pulling anything: FROM scratch around out/.
image: static
	docker build -q -f deploy/Dockerfile.local -t loadlab:local .

# docker-compose.yml on a machine without a registry: no build, no pull.
up: image
	mkdir -p results
	LOADLAB_RESULTS_NAME=$${LOADLAB_RESULTS_NAME:-compose-$$(date +%Y%m%d-%H%M%S)} \
		$(COMPOSE) up --no-build --abort-on-container-exit --exit-code-from client mock mock1 client

down:
	$(COMPOSE) down --volumes --remove-orphans

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 -run 'TestNoDevelopmentProcessWords' ./deploy/repocheck

# Packages whose tests keep time on a fake clock (testing/synctest, the
# real client and the real mock service over an in-memory network) or take
# none as their subject run two at a time (go test -p 2); meanwhile the
# test binaries of every other package are built, two at a time, and then
# they run three at a time, the longest first (-parallel 4 within each),
# deploy's (Docker's) beside both from the start:
# their tests take real time as their subject (experiments in child
# processes, containers, the browser), each with a tolerance derived from
# what it measures. No test runs twice (deploy/run-tests.sh --help;
# LANES=1 in the environment runs the second group one at a time). A new
# package joins the second group unless listed here (deploy/repocheck: the
# repository's layout, size and word checks).
PARALLEL_PKGS := budgets client/advise client/cpulimit client/loadresult client/pipeline client/probe \
	client/records client/sendpool client/split client/threshold client/transport client/virtualcopy cmd/example-shop cmd/internal/cli cmd/internal/comparecmd cmd/internal/mockcmd \
	experiments/beforeafter experiments/compare experiments/design experiments/judge experiments/models experiments/plan experiments/starter \
	experiments/report experiments/report/charts experiments/resultsfile \
	mockservice/api mockservice/config mockservice/field mockservice/latency mockservice/mocktest mockservice/virtual \
	mockservice/yamlfile deploy/repocheck
# The race runtime sleeps 1 s at exit by default, in every test binary and
# every child process a test starts; 100 ms still reports a race in a
# goroutine that is ending.
export GORACE ?= atexit_sleep_ms=100

test: lint
	GO="$(GO)" GOTEST_TIMEOUT=14m bash deploy/run-tests.sh $(PARALLEL_PKGS)

# The figures of the mock service's and the client's reliability sections
# (mockservice/README.md, client/README.md): a minute of load each,
# kept out of make test.
reliability:
	LOADLAB_MEMORY=1 $(GO) test -count=1 -run GeneratorMemory -v ./client/loadgen
	LOADLAB_LONG=1 $(GO) test -count=1 -timeout 4m -run 'TestOverloadLong|TestSlowlorisLong' -v ./mockservice

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...

# The HTTP load generators side by side (loadlab load, vegeta, hey, wrk),
# each pinned to one core against nginx on the other, then each open-loop
# tool's ceiling; installs what is missing; 17 min 49 s with DURATION=10
# (the default 20 s runs take longer). Settings go in the environment, e.g.
# `make bench-peers DURATION=3 ROUNDS=1 CEILING=0`; see
# deploy/bench-peers.sh --help.
.PHONY: bench-peers
bench-peers:
	GO="$(GO)" bash deploy/bench-peers.sh

# The mock service's throughput on one core against a bare net/http handler
# doing the same JSON work, wrk on the other core; about 2.5 minutes.
# See deploy/bench-mock.sh --help.
.PHONY: bench-mock
bench-mock:
	GO="$(GO)" bash deploy/bench-mock.sh

# The open generator, wrk, the record client and the mock service, each on
# one core against what it drives on the other, in one session of
# interleaved rounds, with medians; about 13 minutes. See
# deploy/bench-limit.sh --help.
.PHONY: bench-limit
bench-limit:
	GO="$(GO)" bash deploy/bench-limit.sh

clean:
	rm -rf $(BIN) out
