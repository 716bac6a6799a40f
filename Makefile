# Harvest: `make demo` and `make test` do all the set-up on a fresh machine.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN        := $(CURDIR)/bin
STACK_DIR  := $(CURDIR)/.cache/stack
STACK_BIN  := $(STACK_DIR)/bin
RUN_DIR    ?= $(CURDIR)/.run/cluster
BINARIES   := harvest-driver harvest-placer harvest-blob harvest-sim harvestctl harvest-dev terraform-provider-harvest \
              harvest-usage-prometheus harvest-import-prometheus harvest-room
# Terraform installs Harvest's provider offline from this filesystem mirror
# (registry layout), through the CLI config TF_CLI_CONFIG_FILE names.
TF_PROVIDER_VERSION := $(shell sed -n 's/^\tVersion = "\(.*\)"/\1/p' internal/version/version.go)
TF_PLATFORM := $(shell go env GOOS)_$(shell go env GOARCH)
TF_MIRROR   := $(BIN)/terraform-mirror
TF_CLI_CONFIG := $(BIN)/terraform.rc
GIT_COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || true)
LDFLAGS    := -X github.com/harvest-platform/harvest/internal/version.GitCommit=$(GIT_COMMIT)
# Acceptance tests get a generous limit: a cold cluster takes ~30 s to come up.
ACCEPTANCE_TIMEOUT ?= 30m

export HARVEST_STACK_BIN := $(STACK_BIN)
export HARVEST_BIN := $(BIN)

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-13s %s\n", $$1, $$2}'

.PHONY: build
build: ## build every Harvest binary into bin/
	@mkdir -p $(BIN)
	@for b in $(BINARIES); do \
		echo "build: $$b"; \
		go build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/$$b ./cmd/$$b; \
	done
	@# under Terraform's default registry host and OpenTofu's (make stack uses OpenTofu where there is no terraform)
	@for host in registry.terraform.io registry.opentofu.org; do \
		d=$(TF_MIRROR)/$$host/harvest-platform/harvest/$(TF_PROVIDER_VERSION)/$(TF_PLATFORM); \
		mkdir -p $$d && cp $(BIN)/terraform-provider-harvest $$d/terraform-provider-harvest_v$(TF_PROVIDER_VERSION); \
	done; \
	printf 'disable_checkpoint = true\nprovider_installation {\n  filesystem_mirror {\n    path    = "%s"\n    include = ["registry.terraform.io/harvest-platform/*", "registry.opentofu.org/harvest-platform/*"]\n  }\n}\n' "$(TF_MIRROR)" > $(TF_CLI_CONFIG); \
	echo "build: terraform provider $(TF_PROVIDER_VERSION) mirrored in $(TF_MIRROR) (TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG))"

.PHONY: stack
stack: ## build (or reuse) the pinned Nomad, Consul, MinIO and mc into .cache/stack
	@scripts/stack.sh

.PHONY: test
test: stack build clients unit fuzz acceptance acceptance-secure acceptance-install acceptance-demo acceptance-testbed acceptance-blob-race provider-docs-check ## install what is needed, then run unit tests, bounded fuzzing, and acceptance tests (on a plain and on a secure cluster; the blob tier's under the race detector; make demo twice from a private folder; a short testbed)

.PHONY: clients
clients: ## install the real S3 clients (aws, boto3, s3cmd, rclone, curl) from apt when missing
	@scripts/clients.sh

.PHONY: unit
unit: ## unit tests (no processes of the stack)
	go test -count=1 ./...

# Fuzz targets run for a bounded time each (their seed corpora run in unit).
FUZZTIME ?= 30s
FUZZ_TARGETS := placer/proxy:FuzzRewriteRequest placer/agent/ingest:FuzzIngestBody

.PHONY: fuzz
fuzz: ## run the admission proxy's job rewrite and the ingest body fuzz targets for FUZZTIME each
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz: $${t#*:} in ./$${t%%:*} for $(FUZZTIME)"; \
		go test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) ./$${t%%:*} || exit 1; \
	done

# The blob tier's acceptance tests (TestBlob*) run once, in acceptance-blob-race:
# the tests under the race detector against a harvest-blob built with it too.
BLOB_TESTS := ^TestBlob
# On the secure cluster (TLS, default-deny ACLs): the TestSecure* tests of what
# must be refused, and the main flows again (classes refresh, a job through the
# proxy, eviction); the Terraform apply is TestSecureTerraform*.
SECURE_TESTS := ^TestSecure|^TestPlacerLabelsEveryNodeFromImportedHistory$$|^TestProxyRunsAHarvestedDAGJobStageByStage$$|^TestHarvestDriverEvictsYoungestFirstAndWorkMovesOn$$

.PHONY: acceptance
acceptance: stack build clients ## acceptance tests against a real local cluster (all but the blob tier's: see acceptance-blob-race)
	go test -tags acceptance -count=1 -v -timeout $(ACCEPTANCE_TIMEOUT) -skip '$(BLOB_TESTS)|^TestSecure|^TestInstallGuide|^TestDemo|^TestTestbed' ./acceptance/...

.PHONY: acceptance-secure
acceptance-secure: stack build clients ## the main flows and the refusals on a cluster with TLS and Consul and Nomad ACLs in default-deny (dev-cluster up -secure)
	HARVEST_ACCEPTANCE_SECURE=1 go test -tags acceptance -count=1 -v -timeout $(ACCEPTANCE_TIMEOUT) -run '$(SECURE_TESTS)' ./acceptance/...

.PHONY: acceptance-install
acceptance-install: stack build clients ## docs/install.md followed literally on a cluster of agents only (dev-cluster up -bare)
	HARVEST_ACCEPTANCE_BARE=1 go test -tags acceptance -count=1 -v -timeout $(ACCEPTANCE_TIMEOUT) -run '^TestInstallGuide' ./acceptance/...

.PHONY: acceptance-demo
acceptance-demo: stack build clients ## make demo's flow twice in a row, from a clone inside a 0700 folder, on a cluster of its own
	HARVEST_ACCEPTANCE_DEMO=1 go test -tags acceptance -count=1 -v -timeout $(ACCEPTANCE_TIMEOUT) -run '^TestDemo' ./acceptance/...

.PHONY: acceptance-testbed
acceptance-testbed: stack build clients ## a short testbed (3 clients, H, 6 minutes of x10 replay) on a cluster of its own; asserts its report's invariants
	HARVEST_ACCEPTANCE_TESTBED=1 go test -tags acceptance -count=1 -v -timeout $(ACCEPTANCE_TIMEOUT) -run '^TestTestbed' ./acceptance/...

.PHONY: acceptance-blob-race
acceptance-blob-race: stack build clients ## the blob tier's acceptance tests with the race detector, in the tests and in harvest-blob
	@mkdir -p $(BIN)/race
	go build -race -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/race/harvest-blob ./cmd/harvest-blob
	HARVEST_BLOB_BIN=$(BIN)/race/harvest-blob go test -race -tags acceptance -count=1 -v -timeout $(ACCEPTANCE_TIMEOUT) \
		-run '$(BLOB_TESTS)' ./acceptance/...

.PHONY: demo
demo: stack build ## start the local cluster and run the platform's main flow
	@scripts/demo.sh

.PHONY: cluster-up
cluster-up: stack build ## start the local cluster (left running; stop with make cluster-down)
	@$(BIN)/harvest-dev dev-cluster up -run-dir $(RUN_DIR)

.PHONY: cluster-down
cluster-down: ## stop the local cluster and remove everything it started
	@if [ -x $(BIN)/harvest-dev ]; then $(BIN)/harvest-dev dev-cluster down -run-dir $(RUN_DIR); \
	else go run ./cmd/harvest-dev dev-cluster down -run-dir $(RUN_DIR); fi

.PHONY: provider-docs
provider-docs: stack build ## regenerate the Terraform provider's docs (terraform-plugin-docs) into terraform/provider/docs
	@scripts/provider-docs.sh

.PHONY: provider-docs-check
provider-docs-check: stack build ## fail when terraform/provider/docs is not what the provider's schema generates
	@scripts/provider-docs.sh -check

.PHONY: bench
bench: ## run the benchmarks
	go test -run '^$$' -bench . -benchmem ./...

.PHONY: sim-report
sim-report: build ## regenerate the simulator's plots, CSVs and a markdown summary into out/sim-report
	HARVEST_SIM=$(BIN)/harvest-sim scripts/sim-report.sh

.PHONY: sim-departures
sim-departures: build ## the paper preset's departures (room, heartbeat fill, typing oracle) one at a time, then together, into out/sim-departures
	HARVEST_SIM=$(BIN)/harvest-sim scripts/sim-departures.sh

.PHONY: lint
lint: check-plugins ## gofmt, go vet (with and without the acceptance tag), check-plugins, no tracked build cache
	@if [ -n "$$(git ls-files .cache .run bin)" ]; then \
		echo "lint: .cache, .run or bin is tracked by git (a worktree's symlink?): git rm --cached it"; exit 1; fi
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go vet ./...
	go vet -tags acceptance ./acceptance/...

.PHONY: check-plugins
check-plugins: ## fail when plugins/ (the plugin SDK) or an example plugin imports Harvest outside plugins/
	@scripts/check-plugins.sh

.PHONY: proto
proto: ## regenerate the plugins' gRPC code from plugins/*/proto/*.proto (protoc from apt, pinned Go generators)
	@scripts/proto.sh

.PHONY: dist
dist: ## versioned release archives of every binary for linux/amd64 and linux/arm64, with SHA256SUMS, into dist/
	@scripts/dist.sh

.PHONY: clean
clean: ## remove build output (the stack cache stays; rm -rf .cache to rebuild it)
	rm -rf $(BIN) dist
