# Touchpoint — the two commands a newcomer needs are `make run` and `make test`.

SHELL         := /bin/bash
GO            ?= go
BIN           := bin/touchpoint
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
WORKFLOWCHECK := go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0
TEST_TIMEOUT  ?= 30m
# A count, not a duration: Go 1.26's fuzz coordinator can report its own
# -fuzztime deadline as a failure ("context deadline exceeded", no crasher;
# go.dev/issue/75804, fixed in Go 1.27). A count has no deadline to race.
FUZZTIME      ?= 50000x

.PHONY: all build build-prod run test fuzz lint bench clean

all: build

# The default build includes `touchpoint dev` (embedded Temporal + its UI).
build:
	$(GO) build -o $(BIN) ./cmd/touchpoint

# The production build leaves the embedded Temporal server out (the nodev
# tag): a smaller binary that compiles in seconds instead of minutes.
build-prod:
	CGO_ENABLED=0 $(GO) build -tags nodev -trimpath -ldflags='-s -w' -o bin/touchpoint-prod ./cmd/touchpoint

# Everything in one process: API :8080, issuer :8081, Temporal :7233, Temporal UI :8233.
run: build
	./$(BIN) dev

# Every test. Packages whose tests embed the Temporal server run without
# -race: rebuilding the server with the race detector costs many minutes
# and instruments code that is not ours; all other packages run with -race.
test:
	@set -e; \
	embedded=$$($(GO) list -test -f '{{.ImportPath}} {{join .Deps " "}}' ./... \
		| awk '/ go\.temporal\.io\/server\// {print $$1}' | sort -u); \
	all=$$($(GO) list ./...); \
	race=$$(printf '%s\n' $$all | grep -vxF -f <(printf '%s\n' $$embedded) || true); \
	plain=$$(printf '%s\n' $$all | grep -xF -f <(printf '%s\n' $$embedded) || true); \
	status=0; \
	if [ -n "$$race" ]; then $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $$race || status=1; fi; \
	if [ -n "$$plain" ]; then $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $$plain || status=1; fi; \
	$(MAKE) --no-print-directory fuzz || status=1; \
	exit $$status

# A short run of every fuzz target (their seed corpora run in every test
# run anyway); FUZZTIME=5000000x for a longer hunt.
fuzz:
	@set -e; for target in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for fn in $$(grep -h '^func Fuzz' $$target/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			echo "fuzz $$target $$fn ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$target; \
		done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags nodev ./cmd/touchpoint
	$(GO) run $(STATICCHECK) ./...
	$(GO) run $(WORKFLOWCHECK) ./workflows/...

bench:
	$(MAKE) build && ./$(BIN) bench --baseline

clean:
	rm -rf bin
