# LMDBRealm: `make run` runs the ArticleCache example on its bundled sample, `make test` runs the tests.
# Both install LMDB's development files first when they are missing.

SWIFT ?= swift

.PHONY: run test deps build bench-objects clean

# liblmdb-dev (headers and library) and pkg-config, from Debian's packages.
deps:
	@if pkg-config --exists lmdb 2>/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "Installing liblmdb-dev and pkg-config (apt-get)..." >&2; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq liblmdb-dev pkg-config >/dev/null; \
	else \
		echo "error: LMDB's development files are missing. Install them with:" >&2; \
		echo "    sudo apt-get install liblmdb-dev pkg-config" >&2; \
		exit 1; \
	fi

build: deps
	$(SWIFT) build

run: deps
	$(SWIFT) run ArticleCache fetch

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test

# The object layer's hot paths at 100,000 objects, against the raw LMDBKit floor.
bench-objects: deps
	$(SWIFT) run -c release LMDBRealmBench

clean:
	rm -rf .build
