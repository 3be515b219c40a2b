# xzbuild — two entry points on a fresh Debian machine: `make demo` and `make test`.
# Both install what is missing (apt packages when root, a .venv with the project), then run.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
APT_PACKAGES := git gcc cpp libopus0 libfreetype6 fonts-noto-cjk fonts-noto-color-emoji \
                fonts-dejavu-core espeak-ng python3-venv mosquitto chromium nodejs cmake
STAMP  := $(VENV)/.installed
SERIAL_STUB := packaging/pyserial-labgrid
# npm packages the tests read (ESP Web Tools' install logic, axe-core for accessibility checks; ws, dotenv and
# debug: the three dependencies of the firmware author's MQTT gateway, run as a test peer; LVGL's lv_font_conv
# as the kerning reference), pinned; installed once into $(VENV)/npm/node_modules, never fetched at run time.
# esptool-js: the release site serves its browser bundle for the board pages' chip check (the 0.6 line
# ESP Web Tools 10.4.0 bundles, same detection).
NPM_PACKAGES := esp-web-tools@10.4.0 axe-core@4.14.1 ws@8.23.1 dotenv@16.6.1 debug@4.4.3 esptool-js@0.6.1 \
                lv_font_conv@1.5.3
NPM_STAMP := $(VENV)/npm/.installed-$(subst @,-,$(subst /,_,$(firstword $(NPM_PACKAGES))))

.PHONY: all install apt demo test lint unit mutations clean dist

all: test

apt:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "apt: installing$$missing"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else echo "apt: missing$$missing (run as root or install them; continuing)"; fi; \
	fi

$(STAMP): pyproject.toml $(SERIAL_STUB)/pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -U pip
	@# labgrid requires pyserial-labgrid, a fork that installs into the same serial/ package as pyserial 3.5
	@# (esptool's and pytest-embedded's): with both, whichever wheel lands last owns serial/. The fork skips
	@# re-sending an RFC2217 option whose value did not change, which drops esptool's repeated input purges
	@# on a real ser2net port, so pyserial 3.5 must own it. $(SERIAL_STUB) is a file-less pyserial-labgrid
	@# that requires pyserial==3.5: named on the same command line, it is the only candidate pip's resolver
	@# has for labgrid's requirement, so the fork is never installed and the outcome does not depend on
	@# install order. The uninstall first clears a venv an earlier Makefile filled with both (removing the
	@# fork deletes the serial/ files the two share, so pyserial goes too and is installed again below).
	$(BIN)/python -m pip uninstall -q --disable-pip-version-check -y pyserial-labgrid pyserial
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]' ./$(SERIAL_STUB)
	@touch $(STAMP)

$(NPM_STAMP): Makefile
	@mkdir -p $(VENV)/npm
	@if command -v npm >/dev/null 2>&1; then \
	  echo "npm: installing $(NPM_PACKAGES)"; \
	  npm install --silent --no-audit --no-fund --prefix $(VENV)/npm $(NPM_PACKAGES) >/dev/null && touch $@; \
	else echo "npm: not found (tests that read npm packages will fail)"; fi

install: apt $(STAMP) $(NPM_STAMP)

lint: install
	$(BIN)/ruff check xzbuild assets_gen hil tests bench
	$(BIN)/mypy
	$(BIN)/actionlint -no-color .github/workflows/*.yml

# Two workers, each module's tests on one of them (module fixtures are built once); PYTEST_JOBS=0 runs serially.
PYTEST_JOBS ?= 2
PYTEST_PAR := $(if $(filter 0,$(PYTEST_JOBS)),,-n $(PYTEST_JOBS) --dist loadscope)
# The slowest tests named at the end of every run, so the ~12-minute budget can be watched from any CI log
PYTEST_DURATIONS ?= --durations=25
unit: install
	$(BIN)/python -m pytest $(PYTEST_PAR) $(PYTEST_DURATIONS) $(PYTEST_ARGS)

test: install lint unit

# Every claim's mutation (tests/mutations/*.yaml) must make its tests fail (bench/mutations.py, docs/testing.md):
# a mutation whose code moved away from its tests survives while its `find` still applies. Weekly in slow.yml.
mutations: install
	CI=true $(BIN)/python bench/mutations.py --jobs 2

demo: install
	@bash .ci/demo.sh

# The sdist, then the wheel built from it, into dist/ (templates/ and the pinned npm bundles inside: docs/install.md)
dist: install
	rm -rf dist
	$(BIN)/python -c 'import setuptools.build_meta as b; b.build_sdist("dist")'
	$(BIN)/python -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation --wheel-dir dist \
	  dist/xzbuild-*.tar.gz

clean:
	rm -rf $(VENV) demo-out .pytest_cache .mypy_cache .ruff_cache dist
