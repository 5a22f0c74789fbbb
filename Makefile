# The project's user interface: `make help` lists every target.
# CI runs exactly these targets (see .ci/run).

PYTHON       ?= python3
VENV         := .venv
PY           := $(VENV)/bin/python
LANGUAGES    ?= en zh_CN zh_TW
LANGUAGE     ?= zh_CN
TRANSLATIONS := zh_CN zh_TW
SPHINXOPTS   ?= -W --keep-going
STRICT       ?= 1
PORT         ?= 8000
RUNS         ?= 20
LOAD         ?= 8
SIDE_BY_SIDE ?= 1
export SPHINXOPTS
# Named in the "waiting for ..." message of a build that finds this one running.
export DP_COMMAND := make $(or $(MAKECMDGOALS),help)

.DEFAULT_GOAL := help
.PHONY: help venv html gettext update-po prune-po stat review check seed-zh_TW \
        livehtml test bench stress clean

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

venv: $(VENV)/.installed ## Create .venv from requirements.txt (done by every target)

html: $(VENV)/.installed ## Build LANGUAGES (default: all three) into _build/html/<lang>/
	$(PY) conf/build_site.py html $(LANGUAGES)

gettext: $(VENV)/.installed ## Extract the English messages into _build/gettext/**.pot
	$(PY) -m sphinx -b gettext -c conf $(SPHINXOPTS) -d _build/doctrees/gettext \
	  docs _build/gettext

update-po: gettext ## Merge new English into locale/<lang>/LC_MESSAGES/**.po
	$(PY) conf/update_catalogs.py update _build/gettext $(TRANSLATIONS)

prune-po: gettext ## Delete obsolete (#~) entries and catalogs of removed pages
	$(PY) conf/update_catalogs.py prune _build/gettext $(TRANSLATIONS)

stat: $(VENV)/.installed ## Count translated, fuzzy and untranslated entries per catalog
	$(PY) conf/catalog_report.py stat $(TRANSLATIONS)

review: $(VENV)/.installed ## List LANGUAGE's fuzzy and untranslated entries with old/new English
	$(PY) conf/catalog_report.py review $(LANGUAGE)

check: $(VENV)/.installed ## Check the catalogs; STRICT=0 reports unfinished entries without failing
	$(PY) conf/po_checks.py --strict=$(STRICT) $(TRANSLATIONS)

seed-zh_TW: $(VENV)/.installed ## Fill empty zh_TW entries from zh_CN via OpenCC, marked fuzzy
	$(PY) conf/seed_zh_tw.py

livehtml: $(VENV)/.installed ## Live preview of LANGUAGE (default zh_CN) at http://127.0.0.1:PORT (default 8000)
	$(PY) conf/live_preview.py $(LANGUAGE) --port $(PORT)

test: $(VENV)/.installed ## Run the whole test suite (builds the site once)
	$(PY) -m pytest -ra tests

bench: $(VENV)/.installed ## Time fresh, partial and no-change builds and the live preview; print medians
	$(PY) conf/bench.py

stress: $(VENV)/.installed ## RUNS fresh builds (default 20) under LOAD busy loops, SIDE_BY_SIDE at once; count failures
	$(PY) conf/stress.py --runs $(RUNS) --load $(LOAD) --side-by-side $(SIDE_BY_SIDE)

clean: ## Remove every generated file (exactly the .gitignore'd outputs); waits for a running build
	$(PYTHON) conf/checkout_lock.py "$(DP_COMMAND)" -- sh -c \
	  "rm -rf _build docs/auto_examples docs/sg_execution_times.rst && find locale -name '*.mo' -delete"
