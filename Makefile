# llmslo: make help lists the targets.
SHELL := /bin/bash
GO ?= go
GOBIN := $(shell $(GO) env GOPATH)/bin
BUILDER_VERSION := v0.165.0
BUILDER := $(GOBIN)/builder
DIST := dist/otelcol-llmslo
FUZZTIME ?= 30s
DURATION ?= 30s
RATE ?= 20
RAMP ?=
INCIDENT ?=

.PHONY: help
help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(BUILDER):
	@echo ">> installing the collector builder $(BUILDER_VERSION)"
	@scripts/progress.sh "installing the builder" $(GO) install go.opentelemetry.io/collector/cmd/builder@$(BUILDER_VERSION)

.PHONY: dist
dist: $(BUILDER) ## Build the collector distribution into ./dist (the first build downloads modules: minutes)
	@echo ">> building $(DIST) from builder-config.yaml (the first build downloads and compiles the collector: minutes)"
	@mkdir -p dist
	@PROGRESS_LOG=dist/build.log scripts/progress.sh "building $(DIST) (log: dist/build.log)" $(BUILDER) --config builder-config.yaml
	@[ "$$($(DIST) components | grep -c '^ *- name: llm_slo$$')" = 2 ] || { echo "$(DIST) lacks the llm_slo processor or connector" >&2; exit 1; }
	@echo ">> built $(DIST) with the llm_slo processor and connector"

.PHONY: dist-sources
dist-sources: $(BUILDER) ## Generate the distribution's sources into ./dist without compiling them (bench links them with symbols)
	@$(BUILDER) --config builder-config.yaml --skip-compilation > /dev/null

.PHONY: cli
cli: ## Build the llmslo command (rules, dashboard, report, capture) into bin/llmslo
	cd tools && $(GO) build -o ../bin/llmslo ./cmd/llmslo

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(GOBIN)/golangci-lint

$(GOLANGCI_LINT):
	@echo ">> installing golangci-lint $(GOLANGCI_LINT_VERSION) (built from source: a few minutes)"
	$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint with the checked-in .golangci.yml (the component module, tools/, bench/ and tools/slothcompat/)
	$(GOLANGCI_LINT) run ./...
	cd tools && $(GOLANGCI_LINT) run ./...
	cd bench && $(GOLANGCI_LINT) run ./...
	cd tools/slothcompat && $(GOLANGCI_LINT) run ./...

.PHONY: test-unit
test-unit: ## Fast inner loop: vet and every unit, golden and fuzz-seed test under the race detector (the component module, then tools/)
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...
	cd tools && $(GO) vet ./... && $(GO) test -race -count=1 ./...

.PHONY: test
test: test-unit test-sloth dist validate ## Everything: unit tests, Sloth equivalence, the built distribution, its configs, end to end
	cd tools && $(GO) test -tags e2e -race -count=1 -timeout 45m -v ./e2e/...

.PHONY: test-sloth
test-sloth: ## Run Sloth's own generator on `llmslo rules --format sloth` and compare with `llmslo rules` (module tools/slothcompat/)
	cd tools/slothcompat && $(GO) test -count=1 -v ./...

.PHONY: validate
validate: ## Validate every example collector config with the built distribution
	@for f in config/*.yaml; do echo ">> validate $$f"; $(DIST) validate --config $$f || exit 1; done

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 30s)
	@for mod in . tools; do \
	  for pkg in $$(cd $$mod && $(GO) list ./...); do \
	    for target in $$(cd $$mod && $(GO) test -list 'Fuzz.*' $$pkg | grep '^Fuzz'); do \
	      echo ">> $$pkg $$target"; (cd $$mod && $(GO) test -run XXX -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg) || exit 1; \
	    done; \
	  done; \
	done

.PHONY: run
run: dist ## Build, start the collector on config/demo.yaml, send sample spans and ~30s of load (DURATION, RATE; RAMP=5:60 rises past the engines' capacity), show the live table and the report on the captured traces, stop; INCIDENT=queue|long_prompt|ttft injects one at 10s
	@DURATION=$(DURATION) RATE=$(RATE) RAMP=$(RAMP) INCIDENT=$(INCIDENT) scripts/demo.sh

.PHONY: soak
soak: dist ## Soak the built collector: SOAK_DURATION (600s) at SOAK_RATE (1500) requests/s with the backend down SOAK_OUTAGE (60) seconds from SOAK_OUTAGE_AT (240); fails on any span lost or counted twice
	scripts/soak.sh

.PHONY: collector
collector: dist ## Run the distribution alone on config/collector.yaml (OTLP on 0.0.0.0:4317/4318)
	$(DIST) --config config/collector.yaml

.PHONY: bench
bench: ## Benchmarks side by side (processor vs bare pass, connector vs spanmetrics, the built collector); writes BENCHMARKS.md
	bench/run.sh

.PHONY: bench-instructions
bench-instructions: ## Only the built collectors' instructions per span under callgrind (CALLGRIND_N, CALLGRIND_REPS, CALLGRIND_SHAPES, CALLGRIND_ARMS, CALLGRIND_EXPORTER; part of bench)
	bench/collector_instructions.sh

.PHONY: clean
clean: ## Remove build output
	rm -rf dist bin
