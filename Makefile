# Switchboard: the whole set-up of a fresh Debian/Ubuntu machine is `make run` or `make test`.
#
#   make run          install what is missing, build and start the desktop app
#   make test         deps + lint + test-rust + conformance (what CI runs through .ci/run)
#   make help         every target
#
# Tools that are not Debian packages live in .tools/ (Node 22, Python venv) and tests/npm/
# (pinned npm test tools); both are git-ignored and re-created by `make deps`.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
# Steps of `test` share target/ and the cargo lock: run them in order even under -j.
.NOTPARALLEL:

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
TOOLS := $(ROOT)/.tools
NODE22_BIN := $(TOOLS)/node22/bin
NPM_MODULES := $(ROOT)/tests/npm/node_modules
VENV_PYTHON := $(TOOLS)/venv/bin/python

CARGO ?= cargo
# One feature set for every cargo command (fmt, clippy, build, test): a different set rebuilds the
# dependency tree. Change it here only, e.g. `make test CARGO_FEATURES="--features foo"`.
CARGO_FEATURES ?=
# The same selection for every debug build, too. Cargo unifies features over the packages and
# targets it is asked for, so `-p one-crate`, or a build without test targets, resolves other
# features than `cargo test --workspace` (dev-dependencies such as tokio's `test-util`) and
# compiles a second copy of tokio and everything above it. `--workspace --all-targets` gives
# `build`, `run` and `conformance` exactly the feature set of `test-rust` and `lint`, so each of
# them reuses what the others built.
CARGO_BUILD := $(CARGO) build --workspace --all-targets $(CARGO_FEATURES)

# Where the tests, the conformance run and the benchmarks find the non-Rust peers.
TOOL_ENV := \
	PATH="$(NODE22_BIN):$(NPM_MODULES)/.bin:$$PATH" \
	SWITCHBOARD_NODE="$(NODE22_BIN)/node" \
	SWITCHBOARD_NODE_MODULES="$(NPM_MODULES)" \
	SWITCHBOARD_EVERYTHING_DIR="$(NPM_MODULES)/@modelcontextprotocol/server-everything" \
	SWITCHBOARD_TS_SDK_DIR="$(NPM_MODULES)/@modelcontextprotocol/sdk" \
	SWITCHBOARD_PYTHON="$(VENV_PYTHON)"

ARGS ?=
BENCH_ARGS ?=
# `make fuzz`: cases per property, and the seed (a fresh one each run unless given).
FUZZ_CASES ?= 20000
FUZZ_SEED ?=

.PHONY: help deps ui ui-test run build lint fmt test test-rust conformance bench bench-desktop package fuzz bindings clean distclean

help:
	@echo "Switchboard make targets:"
	@echo "  make run          deps, build and start the desktop app (under Xvfb when there is no display)"
	@echo "  make test         deps + lint + ui-test + test-rust + conformance (what CI runs)"
	@echo "  make ui           build the web view into ui/dist;  make ui-test  its unit tests (vitest)"
	@echo "  make deps         install missing system packages and local tools (idempotent)"
	@echo "  make build        cargo build --workspace --all-targets"
	@echo "  make lint         cargo fmt --check and clippy -D warnings"
	@echo "  make fmt          cargo fmt --all"
	@echo "  make test-rust    cargo test --workspace against a throwaway real keyring"
	@echo "  make conformance  the official MCP conformance suite against conformance-client"
	@echo "  make bindings     regenerate ui/src/ipc/bindings.ts from the Rust IPC types"
	@echo "  make bench        release build of sb-bench and a benchmark run (results in tests/results/bench)"
	@echo "  make bench-desktop  release app's start-up and idle memory vs a minimal Tauri app (also in bench)"
	@echo "  make package      release .deb (and AppImage where its tools can be had) in target/release/bundle"
	@echo "  make fuzz         the parsers' property tests with FUZZ_CASES=$(FUZZ_CASES) cases each and a fresh seed"
	@echo "  make clean        cargo clean and test results;  make distclean  also .tools and node_modules"

deps:
	@echo "==> deps"
	@scripts/deps.sh

# The web view: TypeScript + Vite into ui/dist, which the desktop crate embeds at compile time,
# so every cargo step that builds switchboard-desktop depends on it. Node 22 from .tools.
ui: deps
	@echo "==> ui: npm install + vite build (ui/dist)"
	@cd ui && PATH="$(NODE22_BIN):$$PATH" npm install --no-audit --no-fund --loglevel=error
	@cd ui && PATH="$(NODE22_BIN):$$PATH" npm run --silent build

ui-test: ui
	@echo "==> ui-test: vitest"
	@cd ui && PATH="$(NODE22_BIN):$$PATH" npm test --silent

run: deps ui
	@echo "==> build: cargo build --workspace --all-targets (includes switchboard-desktop)"
	$(CARGO_BUILD)
	@echo "==> run: target/debug/switchboard-desktop"
	@scripts/run-desktop.sh "$(ROOT)/target/debug/switchboard-desktop" $(ARGS)

build: deps ui
	@echo "==> build: cargo build --workspace --all-targets"
	$(CARGO_BUILD)

lint: deps ui
	@echo "==> lint: cargo fmt --all --check"
	$(CARGO) fmt --all --check
	@echo "==> lint: cargo clippy --workspace --all-targets -- -D warnings"
	$(CARGO) clippy --workspace --all-targets $(CARGO_FEATURES) -- -D warnings

fmt:
	$(CARGO) fmt --all

# No trailing message: the last line of `make test` stays conformance's "N passed, M failed".
test: deps lint ui-test test-rust conformance

# A virtual display (the e2e tests drive the real window through tauri-driver; screenshots land in
# tests/results/e2e) and a private D-Bus session with a fresh, unlocked GNOME Keyring
# (scripts/with-keyring.sh), so tests that set SWITCHBOARD_TEST_KEYRING=1 use the real Secret
# Service and never a user's keyring.
# Where the time goes (issue 26 point 7): the build's seconds, then each test binary's run time
# from the log kept in tests/results/test-rust.log (scripts/test-times.sh).
test-rust: deps ui
	@echo "==> test-rust: cargo build --workspace --all-targets (the CLI tests run target/debug/switchboard)"
	@start=$$(date +%s); $(CARGO_BUILD); echo "==> test-rust: the build took $$(( $$(date +%s) - start )) s"
	@echo "==> test-rust: xvfb-run -a dbus-run-session -- scripts/with-keyring.sh cargo test --workspace"
	@mkdir -p tests/results/e2e
	@start=$$(date +%s); $(TOOL_ENV) PATH="$(TOOLS)/cargo/bin:$$PATH" \
		SWITCHBOARD_TEST_KEYRING=1 SWITCHBOARD_REQUIRE_PEERS=1 SWITCHBOARD_REQUIRE_E2E=1 NO_AT_BRIDGE=1 \
		xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- scripts/with-keyring.sh \
		$(CARGO) test --workspace $(CARGO_FEATURES) 2>&1 | tee tests/results/test-rust.log; \
		scripts/test-times.sh tests/results/test-rust.log; \
		echo "==> test-rust: cargo test took $$(( $$(date +%s) - start )) s"

conformance: deps ui
	@echo "==> conformance: cargo build --workspace --all-targets (includes conformance-client)"
	$(CARGO_BUILD)
	@echo "==> conformance: tests/conformance/run.sh"
	@$(TOOL_ENV) CONFORMANCE_NODE="$(NODE22_BIN)/node" tests/conformance/run.sh

# Release bundles with Tauri's bundler (the npm @tauri-apps/cli that `make ui` installs in ui/):
# the .deb with the app, the CLI as /usr/bin/switchboard, desktop entry and icons; the AppImage is
# tried and skipped with what is missing when its tools cannot be downloaded (scripts/package.sh).
package: deps ui
	@echo "==> package: scripts/package.sh"
	@CARGO="$(CARGO)" CARGO_FEATURES="$(CARGO_FEATURES)" SWITCHBOARD_NODE="$(NODE22_BIN)/node" scripts/package.sh

# Release artifacts serve only the benchmarks, so this one selection is their own.
bench: deps ui
	@echo "==> bench: cargo build --release -p switchboard-tests --bins"
	$(CARGO) build --release -p switchboard-tests --bins $(CARGO_FEATURES)
	@echo "==> bench: target/release/sb-bench $(BENCH_ARGS)"
	@mkdir -p tests/results/bench
	@$(TOOL_ENV) SWITCHBOARD_BENCH_OUT="$(ROOT)/tests/results/bench" \
		"$(ROOT)/target/release/sb-bench" $(BENCH_ARGS)
	@CARGO="$(CARGO)" CARGO_FEATURES="$(CARGO_FEATURES)" SWITCHBOARD_BENCH_OUT="$(ROOT)/tests/results/bench" \
		scripts/bench-desktop.sh

# The desktop app's start-up time and idle memory against a minimal Tauri 2 app, release builds,
# under Xvfb (issue 14; scripts/bench-desktop.sh). Also the last step of `bench`.
bench-desktop: deps ui
	@echo "==> bench-desktop: scripts/bench-desktop.sh"
	@mkdir -p tests/results/bench
	@CARGO="$(CARGO)" CARGO_FEATURES="$(CARGO_FEATURES)" SWITCHBOARD_BENCH_OUT="$(ROOT)/tests/results/bench" \
		scripts/bench-desktop.sh

# The property tests of every parser that reads outside bytes (src-tauri/crates/core/tests/props;
# `make test` runs them with 64 cases and a fixed seed) with many more cases and a fresh seed,
# printed so that a failure can be replayed with FUZZ_SEED. A debug build with test-rust's
# selection: it reuses what `make test` built, which at 20,000 cases saves more than a release
# build of the dependency tree would. A shrunk failure is saved under
# src-tauri/crates/core/tests/proptest-regressions/: commit it, and every later run replays it.
fuzz: deps
	@seed="$(FUZZ_SEED)"; seed="$${seed:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"; \
		echo "==> fuzz: $(FUZZ_CASES) cases per property, seed $$seed (replay: make fuzz FUZZ_SEED=$$seed)"; \
		PROPTEST_CASES=$(FUZZ_CASES) PROPTEST_RNG_SEED=$$seed \
		$(CARGO) test --workspace $(CARGO_FEATURES) --test props

# Regenerate ui/src/ipc/bindings.ts from the Rust IPC types (CI fails when it is stale).
bindings: ui
	SWITCHBOARD_WRITE_BINDINGS=1 $(CARGO) test --workspace $(CARGO_FEATURES) bindings_are_current
	SWITCHBOARD_WRITE_BINDINGS=1 $(CARGO) test --workspace $(CARGO_FEATURES) isolation_allowlist_is_current

clean:
	@echo "==> clean: cargo clean, tests/results"
	$(CARGO) clean
	rm -rf tests/results

distclean: clean
	@echo "==> distclean: .tools, tests/npm/node_modules, ui/node_modules, ui/dist"
	rm -rf .tools tests/npm/node_modules ui/node_modules ui/dist
