# The project's user interface: `make help` lists every target.
# CI runs exactly these targets (see .ci/run).
#
# Every target that works per language takes LANGUAGES (LANGUAGE works too):
# empty means every language of conf/languages.py (every translation, for the
# targets that work on catalogs); an unknown one is refused.

PYTHON       ?= python3
VENV         := .venv
PY           := $(VENV)/bin/python
LANGUAGE     ?=
LANGUAGES    ?= $(LANGUAGE)
SPHINXOPTS   ?= -W --keep-going
STRICT       ?= 1
BASE         ?=
PORT         ?= 8000
RUNS         ?= 20
LOAD         ?= 8
COPIES       ?= 1
VERBOSE      ?=
OUTPUTS      ?=
SHARD        ?= 1/1
WORKERS      ?= auto
OUT          ?= _build/outputs.json
KEY          ?=
export SPHINXOPTS VERBOSE
# conf/ holds the build's packages: `python -m build.site`, and conf.py's extensions.
export PYTHONPATH := $(CURDIR)/conf
# Named in the "waiting for ..." message of a build that finds this one running.
export DP_COMMAND := make $(or $(MAKECMDGOALS),help)

.DEFAULT_GOAL := help
.PHONY: help venv html pdf epub outputs gettext update-po prune-po format-po format stat review \
        review-diff check seed-zh_TW livehtml test gpu-check bench stress clean

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

venv: $(VENV)/.installed ## Create .venv from requirements.txt (done by every target)

html: $(VENV)/.installed ## Build LANGUAGES (default: all) into _build/html/<lang>/; OUTPUTS= recordings to use; VERBOSE=1 shows Sphinx's progress; BASE=rev: interface strings may add only rev's glossary words
	$(PY) -m build.site html $(LANGUAGES) $(if $(OUTPUTS),--outputs $(OUTPUTS))

outputs: $(VENV)/.installed ## Execute the examples (SHARD=K/N for one shard) here; record their output into OUT, signed with KEY (unsigned without)
	$(PY) -m build.outputs record $(if $(KEY),--key "$(KEY)") --shard $(SHARD) --out $(OUT)

pdf: html ## Build LANGUAGES' PDF into _build/pdf/<lang>/, linked from the pages in _build/html/<lang>/_offline/ (after html; runs no example)
	$(PY) -m build.offline pdf $(LANGUAGES) $(if $(OUTPUTS),--outputs $(OUTPUTS))

epub: html ## Build LANGUAGES' EPUB into _build/epub/<lang>/, linked from the pages in _build/html/<lang>/_offline/ (after html; runs no example)
	$(PY) -m build.offline epub $(LANGUAGES) $(if $(OUTPUTS),--outputs $(OUTPUTS))

gettext: $(VENV)/.installed ## Extract the English messages into _build/gettext/**.pot (a removed page's template goes)
	$(PY) -m catalogs.cli gettext

update-po: $(VENV)/.installed ## Merge new English into LANGUAGES' catalogs, locale/<lang>/LC_MESSAGES/**.po
	@$(PY) -m catalogs.cli update $(LANGUAGES)

prune-po: $(VENV)/.installed ## Delete obsolete (#~) entries and catalogs of removed pages
	@$(PY) -m catalogs.cli prune $(LANGUAGES)

format-po: $(VENV)/.installed ## Rewrite LANGUAGES' catalogs in the canonical form update-po writes (wrapping, header)
	$(PY) -m catalogs.cli format $(LANGUAGES)

stat: $(VENV)/.installed ## Count translated, fuzzy and untranslated entries per catalog
	$(PY) -m catalogs.cli stat $(LANGUAGES)

review: $(VENV)/.installed ## List fuzzy and untranslated entries with old/new English
	$(PY) -m catalogs.cli review $(LANGUAGES)

review-diff: $(VENV)/.installed ## What the catalogs' entries did since BASE (default: merge base with main): _build/review/
	$(PY) -m build.review_page $(if $(BASE),--base=$(BASE)) $(LANGUAGES)

check: $(VENV)/.installed ## Check LANGUAGES' catalogs; STRICT=0 reports unfinished entries without failing; BASE=rev: only entries changed since rev
	$(PY) -m gate.run_checks --strict=$(STRICT) $(LANGUAGES)$(if $(BASE), --base=$(BASE))

seed-zh_TW: $(VENV)/.installed ## Fill empty zh_TW entries from zh_CN via OpenCC, marked fuzzy
	$(PY) -m catalogs.cli seed-zh_TW

livehtml: $(VENV)/.installed ## Live preview of one language (default zh_CN) at http://127.0.0.1:PORT (default 8000), rebuilt into _build/html/ as make html does
	$(PY) -m build.live_preview $(LANGUAGES) --port $(PORT)

# Each failure's explanation as it happens (--instafail), not after the last test.
PYTEST       = $(PY) -m pytest -ra --instafail --numprocesses=$(WORKERS) --maxprocesses=4 --dist=loadfile \
               --no-loadscope-reorder

test: $(VENV)/.installed ## Fast checks first (ruff, make check, the tests that need no built site), then the tests that build and read the site, WORKERS at once
	$(PY) -m ruff check --quiet conf tests tools
	@$(PY) -m ruff format --check --quiet conf tests tools || { echo "make format lays these files out"; exit 1; }
	@$(MAKE) --no-print-directory check
	@echo "--- the tests that need no built site ---"
	@$(PYTEST) -m "not site" tests || { echo "the tests that build the site were not run: fix the failures above first"; exit 1; }
	@echo "--- the tests that build the site once and read it ---"
	$(PYTEST) -m site tests

format: $(VENV)/.installed ## Lay out the Python of conf/, tests/ and tools/ as make test expects (ruff format)
	$(PY) -m ruff format --quiet conf tests tools

gpu-check: $(VENV)/.installed ## On a machine with GPUs: the CUDA tests, every command the pages give, the build's run; report in _build/gpu-check/
	$(PY) tests/gpu_check.py

bench: $(VENV)/.installed ## Time fresh, partial and no-change builds and the live preview; print medians
	$(PY) tools/bench.py

stress: $(VENV)/.installed ## RUNS fresh builds (default 20) under LOAD busy loops, COPIES at once; count failures
	$(PY) tools/stress.py --runs $(RUNS) --load $(LOAD) --copies $(COPIES)

clean: ## Remove every generated file (exactly the .gitignore'd outputs); waits for a running build
	@flock -n .build.lock true || echo "waiting: $$(cat .build.lock) is using this checkout's generated files;" \
	  "\`$(DP_COMMAND)\` starts when it is done (Ctrl-C to give up)"
	flock .build.lock sh -c "rm -rf _build docs/auto_examples docs/sg_execution_times.rst && find locale -name '*.mo' -delete"
