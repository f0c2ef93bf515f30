# The Genesis toolchain. `make` builds both commands and runs a demo;
# `make test` runs the whole suite (what CI runs).

GO      ?= go
# urfave_cli_no_docs leaves out urfave/cli's man-page generator, whose
# initialization costs about a millisecond on every start of both commands.
BUILDFLAGS ?= -tags=urfave_cli_no_docs
BIN     := bin

.PHONY: all build demo test vet fuzz bench pgo generate clean mcp-servers chromium postgres

all: build demo

# The commands are static (no cgo): a dynamically linked binary spends
# about 1.4 ms more on every start loading libc.
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(BIN)/genesisc ./cmd/genesisc
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(BIN)/forge ./cmd/forge

# demo: compile Genesis and run it; assemble a program, verify it, run it,
# and prove the run; run a nano-vm program and a VVM program (narrated)
# with scripted model replies; run the nano-vm program on the Forge
# Machine with a journal and a proof, and check the proof.
demo: build
	@mkdir -p $(BIN)/demo
	$(BIN)/genesisc build -o $(BIN)/demo/factorial.frgp examples/factorial.gen
	$(BIN)/forge exec $(BIN)/demo/factorial.frgp; echo
	$(BIN)/genesisc build -o $(BIN)/demo/hello.frgp examples/hello.fasm
	$(BIN)/forge verify $(BIN)/demo/hello.frgp
	echo "Forge" | $(BIN)/forge exec --result $(BIN)/demo/result.json $(BIN)/demo/hello.frgp
	@cat $(BIN)/demo/result.json; echo
	$(BIN)/forge keygen --force -o $(BIN)/demo/key
	echo "Forge" | $(BIN)/forge exec --proof $(BIN)/demo/proof.json --key $(BIN)/demo/key $(BIN)/demo/hello.frgp >/dev/null
	echo "Forge" | $(BIN)/forge check-proof --proof $(BIN)/demo/proof.json $(BIN)/demo/hello.frgp
	$(BIN)/genesisc run --llm mock:examples/refund.llm.json --tools mock:examples/refund.tools.json \
	    --input user_input="I bought it yesterday" examples/refund.json
	$(BIN)/genesisc run --llm mock:examples/refund.llm.json --tools mock:examples/refund.tools.json \
	    --input user_input="I broke it" --trace $(BIN)/demo/refund.trace examples/refund.json
	$(BIN)/genesisc run --llm mock:examples/review.llm.json --narrate examples/review.vvm
	$(BIN)/genesisc build -o $(BIN)/demo/refund.frgp examples/refund.json
	rm -f $(BIN)/demo/refund.journal
	$(BIN)/forge exec --llm mock:examples/refund.llm.json --tools mock:examples/refund.tools.json \
	    --input user_input="I bought it yesterday" --journal $(BIN)/demo/refund.journal \
	    --proof $(BIN)/demo/refund.proof --key $(BIN)/demo/key $(BIN)/demo/refund.frgp
	$(BIN)/forge check-proof --proof $(BIN)/demo/refund.proof --journal $(BIN)/demo/refund.journal \
	    --input user_input="I bought it yesterday" $(BIN)/demo/refund.frgp

test: vet mcp-servers chromium postgres
	$(GO) test -count=1 -timeout 20m ./...

# mcp-servers: the official MCP reference servers (npm registry) that the
# MCP tools tests run against, installed into .cache/npm (not globally)
# when node and npm are present. Without them, or without the registry,
# those tests skip and say why; the rest of `make test` is unaffected.
MCP_SERVERS := @modelcontextprotocol/server-filesystem@2026.8.31
MCP_CACHE   := .cache/npm
mcp-servers:
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	    echo "mcp-servers: node or npm is missing: the MCP reference server tests will skip"; \
	elif [ ! -x $(MCP_CACHE)/node_modules/.bin/mcp-server-filesystem ]; then \
	    timeout 180 npm install --prefix $(MCP_CACHE) --no-audit --no-fund --no-save --loglevel=error --fetch-retries=1 --fetch-timeout=30000 $(MCP_SERVERS) \
	    || echo "mcp-servers: npm install failed: the MCP reference server tests will skip"; \
	fi

# chromium: Debian's chromium, in which the trace viewer's page is tested
# (traceview/browser_test.go: steps, a click, no request, the screenshot
# of docs/trace-viewer.md), and an emoji font for the narration's markers.
# Installed when missing, with sudo when not root; without apt-get, or
# when the install fails, those tests skip and say why.
CHROMIUM_PKGS := chromium fonts-noto-color-emoji
chromium:
	@if command -v chromium >/dev/null; then :; \
	elif ! command -v apt-get >/dev/null; then \
	    echo "chromium: not installed, and no apt-get: the trace viewer's browser tests will skip"; \
	else \
	    sudo=; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
	    { timeout 120 $$sudo apt-get update -qq && \
	      DEBIAN_FRONTEND=noninteractive timeout 300 $$sudo apt-get install -y -qq $(CHROMIUM_PKGS) >/dev/null; } \
	    || echo "chromium: apt-get install failed: the trace viewer's browser tests will skip"; \
	fi

# postgres: Debian's postgresql, whose initdb and pg_ctl the tests of
# distributed runs (issue 19) start a private cluster with, in a
# temporary directory (internal/pgtest): no server runs beforehand and
# nothing is left behind. Installed when missing; without it (no apt-get,
# no network) those tests skip and say why.
postgres:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; then :; \
	elif ! command -v apt-get >/dev/null; then \
	    echo "postgres: no apt-get to install postgresql: the Postgres tests will skip"; \
	else \
	    (timeout 120 apt-get update -qq && timeout 300 apt-get install -y -qq postgresql >/dev/null) \
	    || echo "postgres: installing postgresql failed: the Postgres tests will skip"; \
	fi

vet:
	$(GO) vet ./...

# fuzz: a short run of every fuzz target (go test runs their seed corpora
# as part of `make test`), then GENFUZZ_N random Genesis programs on the
# three targets (forge, native, Go; CI runs 12 from a fixed seed), each
# on the default machine and on three of random memory quotas and stacks.
FUZZTIME ?= 30s
GENFUZZ_N ?= 500
GENFUZZ_SEED ?= $(shell date +%s)
fuzz:
	GENESIS_FUZZ_N=$(GENFUZZ_N) GENESIS_FUZZ_SEED=$(GENFUZZ_SEED) $(GO) test -count=1 -timeout 60m -run '^TestRandomPrograms$$' ./tests/genesis
	@$(GO) list ./... | while read pkg; do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# bench: Forge against gcc -O2 and Lua 5.4 on the same three programs, and
# the Genesis ones on every target of genesisc (forge, native, Go) against C;
# then the integer suite of issue 17 (twelve programs: gcc -O2, Genesis on
# forge, Go and native, lua5.4, luajit, luajit -joff). gcc, lua5.4 and
# luajit are installed when missing; make test needs none of them.
# Then distributed runs (issue 19): runs per second and the cost of an
# effect with 1, 2 and 3 DBOS workers on a private Postgres cluster,
# against the same runs in one process (docs/distributed.md).
BENCH_PKGS = $(shell command -v gcc >/dev/null || echo gcc) \
	$(shell command -v lua5.4 >/dev/null || echo lua5.4) \
	$(shell command -v luajit >/dev/null || echo luajit)
bench: postgres
	@test -z "$(strip $(BENCH_PKGS))" || (apt-get update -qq && apt-get install -y -qq $(BENCH_PKGS) >/dev/null)
	$(GO) run ./bench
	$(GO) run ./bench/distributed

# pgo: refresh the profile that guides the Go compiler when it builds
# bin/forge (cmd/forge/default.pgo): the interpreter running the benchmark
# programs. Worth 5-20 % on them (docs/bench.md).
pgo:
	$(GO) test ./bench -run '^$$' -bench Forge -benchtime 10x -cpuprofile cmd/forge/default.pgo -o /tmp/forge-pgo-bench.test

# generate: regenerate every ANTLR parser with the pinned antlr-ng.
generate:
	bash scripts/antlr-generate.sh

clean:
	rm -rf $(BIN) $(MCP_CACHE)
