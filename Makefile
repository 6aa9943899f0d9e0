# The two commands a newcomer needs: `make run` and `make test`.
# Everything else is a building block of those two.
SHELL := /bin/bash

# Every Go binary of the module is static (CGO_ENABLED=0, as in the images);
# building the tests the same way lets them share one build cache with the
# binaries they build and run, which halves a cold run.
export CGO_ENABLED := 0
# -trimpath: without it Go keys its build cache by the package's folder, so
# a fresh clone elsewhere (as CI makes) recompiles every package of the
# repository and every binary the tests build (about 30 s of a warm run).
export GOFLAGS := -trimpath

.PHONY: run test tools generate build lint vet bench

## run: start a local control plane with the module on loopback (Ctrl-C stops it);
## `make run RUN_FLAGS=-disable` then disables the module as Deckhouse does
# Built, then run, not `go run`: that exits 1 on Ctrl-C whatever the program
# does, and make would report a clean stop as an error.
RUN_FLAGS ?=
run: tools bin/localrun
	bin/localrun $(RUN_FLAGS)

# Phony: go build decides whether it is up to date (then it links nothing).
# dev/cmd/localrun's test builds it here too, so that the `make run` it
# starts finds it built with the same flags.
.PHONY: bin/localrun
bin/localrun:
	@go build -o bin/localrun ./dev/cmd/localrun

## test: every test of the repository, against real components
# -parallel 4: the end-to-end tests (most on a shared control plane, the
# rest on their own) mostly wait for module passes, so four at a time fit
# on 2 cores.
# testrun (as go test) starts packages in the order named: dev/node first,
# then the packages that take longest, by their wall time in a warm run
# (dev/docs/BUILD.md), so that none of them starts last and runs on alone.
# dev/node's whole-machine test takes the machine for about 20 s before
# test/node's node starts; named later, it held one of the -p slots for
# minutes, waiting for that node to stop. test/node comes after the first
# four, in dev/node's slot: started beside it, test/node took the node lock
# whenever dev/node let it go between nodes (its killed-node test lets it
# go for its helper process), and dev/node then held its slot idle for four
# minutes (298 s for 9 CPU-seconds in one warm run). -p 4: most packages
# wait (for pods, real FEs and StarRocks' schedulers, addon-operator's
# passes) more than they compute, so four fit on 2 cores; six did not: every package
# then lived longer, and what a real FE, an apiserver or a poll burns while
# alive grew (a warm run 544 s and about 200 CPU-seconds more).
LONGEST_TESTS := ./dev/node ./test/e2e ./images/agent/internal/backup \
  ./images/agent/internal/shareddata ./test/node ./images/agent/internal/agent \
  ./images/webhook ./hooks ./dev/chartrender ./dev/images ./dev/fakefe \
  ./dev/cmd/localrun ./test/clients ./dev/realfe ./test/rbac ./test/crd \
  ./hooks/instanceobjects
# -ldflags: as go test links the binaries it runs, without the symbol table
# and DWARF (stack traces come from the pclntab), which no test reads.
# dev/cmd/testrun runs the tests as go test -count=1 does, but keeps the
# test binaries in the cache: go test links all of them anew on every run
# (about 100 CPU-s of a warm run); testrun relinks only those whose code
# changed. Its lines also say what CPU each package used.
TEST_BINARIES := $(or $(MANAGED_STARROCKS_CACHE),$(HOME)/.cache/managed-starrocks)/test-binaries
test: tools
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	  if [ -n "$$unformatted" ]; then echo "gofmt -w needed on: $$unformatted"; exit 1; fi
	go vet ./...
	go run ./dev/cmd/testrun -dir $(TEST_BINARIES) -p 4 -parallel 4 -timeout 45m -ldflags='-s -w' $(LONGEST_TESTS) ./...

## tools: build the local control plane tools and the real StarRocks FE into the cache (once)
# The FE is built from the source archive in ../shared/starrocks (see
# dev/docs/BUILD.md); without it the script says so and exits 3, and the tests
# that need the FE skip with the same message, so tools goes on. The FE's
# first build is mostly Maven downloading about 1 GB, one file after
# another: it runs beside the Go tools' compiling, which keeps both cores busy.
tools:
	@dev/scripts/starrocks-fe.sh >/dev/null & fe=$$!; \
	  dev/scripts/tools.sh all >/dev/null || { wait $$fe; exit 1; }; \
	  wait $$fe || [ $$? -eq 3 ]

## generate: regenerate deepcopy functions and crds/ from api/
generate:
	dev/scripts/generate.sh

## build: build every Go binary of the module's images into bin/
build:
	dev/scripts/build.sh

## bench: the benchmarks named in the docs
bench: tools
	go test -run '^$$' -bench . -benchmem ./...
