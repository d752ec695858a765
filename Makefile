# letterbox's tasks. `make test` is what the README and .ci/run use.

GO ?= go
MODULE := $(shell $(GO) list -m)

# The race detector runs on the packages with concurrency of their own (the broker, the client,
# the command line that runs them); everything else runs without it, to keep `make test` well
# under 15 minutes on 2 cores.
RACE_PKGS := ./broker/... ./client/... ./internal/...
# The official Go client (v0.19.0) races with itself when a producer reconnects with sends in
# flight; the tests that move topics under it are built only without the race detector
# (go:build !race) and run on their own.
NORACE_TESTS := ^TestOfficial(ProducerFollowsMoves|ClientAcrossMoves)$$
# The cluster fixture (internal/clustertest) and the broker's hook it drives (broker/frontend.go)
# are built with this tag only: the tests pass it, the binary is built without it.
TEST_TAGS := clustertest
TEST_TIMEOUT ?= 10m
FUZZTIME ?= 60s

TOOLS_BIN := $(CURDIR)/bin/tools
PROTOC_GEN_GO_VERSION := v1.36.12
# staticcheck 2026.2.2, which supports Go 1.26.
STATICCHECK_VERSION := v0.8.2
# golangci-lint, for its duplicate-code linter (dupl) only: see .golangci.yml.
GOLANGCI_LINT_VERSION := v2.15.0

.PHONY: build test test-upstream bench fuzz proto lint fmt test-update

# -buildvcs=true: `letterbox version` names the commit even where GOFLAGS turns stamping off.
# (Go stamps a checkout whose .git is a directory; a build in a git worktree says devel.)
build:
	$(GO) build -buildvcs=true -o bin/letterbox .

# Release archives for linux, darwin and windows on amd64 and arm64, with README.md, LICENSE
# and SHA256SUMS, in $(DIST_DIR). VERSION (v1.2.3) is stamped into the binaries and names the
# archives; without it they carry the version Go stamps from the checkout. Two runs on the same
# commit with the same Go give the same bytes (internal/release says how).
VERSION ?=
DIST_DIR ?= dist
dist:
	$(GO) run ./internal/release -version '$(VERSION)' -out '$(DIST_DIR)'

test:
	$(GO) vet ./...
	$(GO) vet -tags $(TEST_TAGS) ./...
	$(GO) test -tags $(TEST_TAGS) -race -timeout $(TEST_TIMEOUT) $(RACE_PKGS)
	$(GO) test -tags $(TEST_TAGS) -timeout $(TEST_TIMEOUT) -run '$(NORACE_TESTS)' ./client/ ./internal/clustertest/
	$(GO) test -tags $(TEST_TAGS) -timeout $(TEST_TIMEOUT) $$($(GO) list ./... | grep -v -e '^$(MODULE)/broker' -e '^$(MODULE)/client' -e '^$(MODULE)/internal')

# The official Go client's own integration tests (its pulsar and pulsaradmin packages, built from
# the module cache) against `letterbox broker --in-memory` started with that client's
# standalone.conf, as its CI runs them against `pulsar standalone`; .ci/upstream lists the tests
# that do not apply and why. Not part of `make test`: they need the fixed ports 6650, 6651, 8080
# and 8443, and fetch the modules of the client's own tests (testcontainers among them).
test-upstream:
	.ci/upstream

# Benchmarks report numbers; they never assert on time. bench/ measures the broker (in memory
# and durable), our client, replay and the TUI beside the ceiling a null broker allows, in
# about five minutes, and writes docs/performance.md (`go run ./bench -only ...` for parts).
bench:
	$(GO) run ./bench -out docs/performance.md

# The fuzzers, FUZZTIME each: the frame decoder, the metadata and per-entry command decoders
# against proto.Unmarshal (same message or same refusal), and sequences of decoded commands
# against an in-process broker (neither a panic nor a broker that stops answering a bystander
# may come of them). FUZZPARALLEL bounds the fuzzing processes (default: one per CPU). The
# broker's goroutines make its coverage vary from run to run, so many inputs look new:
# minimizing each for the default minute would leave no time to fuzz, hence FUZZMINIMIZE.
FUZZMINIMIZE ?= 10x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeFrame$$' -fuzztime $(FUZZTIME) $(if $(FUZZPARALLEL),-parallel $(FUZZPARALLEL)) ./client/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzMetadataDecoders$$' -fuzztime $(FUZZTIME) $(if $(FUZZPARALLEL),-parallel $(FUZZPARALLEL)) ./client/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzFastCommands$$' -fuzztime $(FUZZTIME) $(if $(FUZZPARALLEL),-parallel $(FUZZPARALLEL)) ./client/wire/
	$(GO) test -run '^$$' -fuzz '^FuzzBrokerCommands$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) \
		$(if $(FUZZPARALLEL),-parallel $(FUZZPARALLEL)) ./broker/

# Regenerates client/wire/pb from client/wire/proto/pulsar.proto with a pinned protoc-gen-go,
# installed under bin/tools so the one on PATH (if any) does not matter.
proto:
	@command -v protoc >/dev/null 2>&1 || { \
		echo "make proto: protoc not found; install the protobuf compiler (Debian/Ubuntu: protobuf-compiler)" >&2; \
		exit 1; }
	GOBIN=$(TOOLS_BIN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	PATH="$(TOOLS_BIN):$$PATH" protoc --proto_path=client/wire/proto \
		--go_out=client/wire/pb --go_opt=paths=source_relative client/wire/proto/pulsar.proto

lint:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (make fmt):"; echo "$$unformatted"; exit 1; \
	fi
	$(GO) vet ./...
	$(GO) vet -tags $(TEST_TAGS) ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags $(TEST_TAGS) ./...
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...

fmt:
	gofmt -w .

# Rewrites the TUI's golden files from the current views.
test-update:
	@if [ -d tui ]; then \
		$(GO) test -tags $(TEST_TAGS) ./tui/... -update; \
	else \
		echo "make test-update: no golden files yet (there is no tui/ directory)"; \
	fi
