# The two commands of the README:
#   make run   installs, builds and starts tandem-server on the embedded model,
#              then streams a completion from it with tandem-cli
#   make test  installs, builds and runs every CPU test
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: deps deps-test build run test clean

deps:
	./scripts/install-deps.sh

deps-test:
	./scripts/install-deps.sh --tests

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./scripts/run-demo.sh $(BUILD)

test: deps-test build
	ctest --test-dir $(BUILD) -LE gpu --output-on-failure -j 2

clean:
	rm -rf $(BUILD)
