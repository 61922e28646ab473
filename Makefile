# loadlab — see README.md. `make run` runs the main job, `make test` every test.
GO       ?= go
BIN      := bin
LISTEN   ?= 127.0.0.1:8080
PROFILE  ?= healthy

.PHONY: all build run mock test lint bench clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The main job: the replication experiment (in-process mock service, each
# client run a CPU-limited child process), its table, verdicts and reports.
run: build
	./$(BIN)/loadlab experiment --file experiments/replication.yaml --hypotheses experiments/hypotheses.yaml $(EXPERIMENT_FLAGS)

# The mock dependencies alone, for loadlab run / load against them.
mock: build
	./$(BIN)/mockservice --listen $(LISTEN) --profile $(PROFILE)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: lint
	$(GO) test -race -count=1 -timeout 14m ./...

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...

clean:
	rm -rf $(BIN)
