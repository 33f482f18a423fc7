# Touchpoint — the commands a newcomer needs are `make run`, `make check` (minutes) and `make test`.

SHELL         := /bin/bash
GO            ?= go
BIN           := bin/touchpoint
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
WORKFLOWCHECK := go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0
TEST_TIMEOUT  ?= 30m
# The release a build is, linked into the binary: a versioned worker's
# Build ID. Without git (a Docker build) the Dockerfile passes its own.
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null)
VERSION_FLAG  := $(if $(VERSION),-X main.version=$(VERSION))
# A count, not a duration: Go 1.26's fuzz coordinator can report its own
# -fuzztime deadline as a failure ("context deadline exceeded", no crasher;
# go.dev/issue/75804, fixed in Go 1.27). A count has no deadline to race.
FUZZTIME      ?= 50000x

.PHONY: all build build-prod run check gofmt test test-files fuzz bench-smoke lint bench clean

all: build

# The default build includes `touchpoint dev` (embedded Temporal + its UI).
build:
	$(GO) build -ldflags='$(VERSION_FLAG)' -o $(BIN) ./cmd/touchpoint

# The production build leaves the embedded Temporal server out (the nodev
# tag): a smaller binary that compiles in seconds instead of minutes.
build-prod:
	CGO_ENABLED=0 $(GO) build -tags nodev -trimpath -ldflags='-s -w $(VERSION_FLAG)' -o bin/touchpoint-prod ./cmd/touchpoint

# Everything in one process: API :8080, issuer :8081, Temporal :7233, Temporal UI :8233.
run: build
	./$(BIN) dev

# Every test, every package of ours under -race. No test links the
# Temporal server (rebuilding it with the race detector would cost many
# minutes and instrument code that is not ours): tests that need one start
# a dev server in a helper process (internal/testtemporal), and tests of
# whole processes run the touchpoint binary (internal/testbin). Both
# binaries are built once here, without -race. The tests are built with
# -tags nodev, so they leave out `dev` and its embedded server (`dev`
# itself is tested through the real binary), and with -tags record, so the
# recorders of workflow histories run too (a history recorded before is
# kept). devtemporal, whose one job is to embed the server, runs without
# tags or -race. test-files checks that these two runs leave no test file
# out.
TEST_BIN          := $(CURDIR)/bin/touchpoint
TEST_TEMPORAL_BIN := $(CURDIR)/bin/testtemporal-server
RACE_TAGS         := nodev record
RACE_PKGS          = $$($(GO) list ./... | grep -vx 'github.com/touchpoint/touchpoint/devtemporal')

test:
	@set -e; \
	$(GO) build -o $(TEST_BIN) ./cmd/touchpoint; \
	$(GO) build -o $(TEST_TEMPORAL_BIN) ./internal/testtemporal/testtemporal-server; \
	export TOUCHPOINT_TEST_BIN=$(TEST_BIN) TOUCHPOINT_TEST_TEMPORAL_BIN=$(TEST_TEMPORAL_BIN); \
	status=0; \
	$(GO) test -race -tags '$(RACE_TAGS)' -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PKGS) || status=1; \
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./devtemporal/ || status=1; \
	$(MAKE) --no-print-directory fuzz || status=1; \
	$(MAKE) --no-print-directory bench-smoke || status=1; \
	exit $$status

# The benchmarks at scale, once each over a few thousand rows: they are
# run by hand on a quiet machine, and this keeps them running as the
# schema and the code move under them.
bench-smoke:
	TOUCHPOINT_CONSOLE_BENCH_ROWS=2000 TOUCHPOINT_PARTITION_BENCH_ROWS=12000 \
		$(GO) test -tags nodev -run '^$$' -bench 'BenchmarkPages|BenchmarkPartitionsAtScale' -benchtime 1x ./console/ ./store/partitiondb/

test-files:
	@.ci/untested-files '$(RACE_TAGS)' "$(RACE_PKGS)" '' ./devtemporal/

# A short run of every fuzz target (their seed corpora run in every test
# run anyway); FUZZTIME=5000000x for a longer hunt.
fuzz:
	@set -e; for target in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for fn in $$(grep -h '^func Fuzz' $$target/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			echo "fuzz $$target $$fn ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$target; \
		done; \
	done

# The fast loop, a few minutes on two cores with a warm build cache:
# gofmt, vet, and the tests of the pure packages — those whose tests need
# no PostgreSQL, Temporal server, touchpoint binary or browser, worked out
# from their imports by .ci/pure-packages. CI runs it first.
check: gofmt
	$(GO) vet -tags nodev ./...
	$(GO) test -tags nodev $$(.ci/pure-packages)

gofmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

lint: gofmt
	$(GO) vet ./...
	$(GO) vet -tags nodev ./...
	$(GO) vet -tags record ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(WORKFLOWCHECK) ./workflows/...

bench:
	$(MAKE) build && ./$(BIN) bench --baseline

clean:
	rm -rf bin
