# xzbuild — two entry points on a fresh Debian machine: `make demo` and `make test`.
# Both install what is missing (apt packages when root, a .venv with the project), then run.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
APT_PACKAGES := git gcc cpp libopus0 libfreetype6 fonts-noto-cjk fonts-noto-color-emoji \
                fonts-dejavu-core espeak-ng python3-venv
STAMP  := $(VENV)/.installed

.PHONY: all install apt demo test lint unit clean

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

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -U pip
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

install: apt $(STAMP)

lint: install
	$(BIN)/ruff check xzbuild assets_gen hil tests bench
	$(BIN)/mypy

unit: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test: install lint unit

demo: install
	@bash .ci/demo.sh

clean:
	rm -rf $(VENV) demo-out .pytest_cache .mypy_cache .ruff_cache
