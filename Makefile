# blogarchive: `make demo` and `make test` on a fresh machine.
# The venvs' interpreter: the distribution's own python3 where it is 3.11 or newer and can make a
# venv, else the first python3 on PATH. Debian builds its Python with profile-guided and link-time
# optimisation, pyenv without them unless asked: the suite took 15 % less CPU on Debian's than on
# pyenv's 3.11 (docs/benchmarks.md, "The test suite"). `make clean test PYTHON=...` chooses another (a venv made
# before keeps its interpreter).
SYSTEM_PYTHON := $(shell /usr/bin/python3 -c 'import sys, ensurepip; print(sys.executable if sys.version_info >= (3, 11) else "")' 2>/dev/null)
PYTHON ?= $(or $(SYSTEM_PYTHON),python3)
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_DB ?= demo.db
PORT ?= 8001
BENCH_SIZES ?= 1000,10000
# pywb replays the exported WARC in tests/test_replay.py, from a venv of its own: it requires
# brotlipy, whose `brotli` module would shadow the one Scrapy decodes `br` with (and it pins pyOpenSSL)
PYWB_VENV ?= .venv-pywb
PYWB ?= pywb==2.10.0
# the exact versions tested, under pyproject.toml's ranges (`make lock` writes them again);
# not for the pywb venv, whose pins (brotlipy, pyOpenSSL) are not ours
CONSTRAINTS := -c constraints.txt
LOCK_VENV ?= .venv-lock

.PHONY: install demo test bench fidelity lint lock clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	# the venv's own pip (23.x) resolves trafilatura without lxml_html_clean
	$(BIN)/pip install --quiet --upgrade pip
	# setuptools' "Editable installation" box (a note that a folder named as the package may shadow it),
	# which pip shows whatever --quiet says: the one warning hidden
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/pip install --quiet $(CONSTRAINTS) -e '.[test,render]'
	# bytecode for our own modules, as pip writes it for an installed package (an editable install
	# leaves it to the first run, which cannot write it where PYTHONDONTWRITEBYTECODE is set)
	$(BIN)/python -m compileall -q crawler archive
	touch $@

$(PYWB_VENV)/.installed: Makefile
	$(PYTHON) -m venv $(PYWB_VENV)
	$(PYWB_VENV)/bin/pip install --quiet '$(PYWB)'
	touch $@

# Serve the bundled example blog on 127.0.0.1, crawl it into $(DEMO_DB), then browse it.
demo: install
	@rm -f $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
	@port=$$($(BIN)/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'); \
	  $(BIN)/python -m http.server $$port --bind 127.0.0.1 --directory tests/site >/dev/null 2>&1 & \
	  site=$$!; sleep 1; \
	  $(BIN)/blogarchive crawl http://example-notes.test/ \
	    --map-host example-notes.test=http://127.0.0.1:$$port \
	    --delay 0 --concurrency 8 --db $(DEMO_DB); \
	  status=$$?; kill $$site; exit $$status
	@echo "Archive ready: open http://127.0.0.1:$(PORT)/$(basename $(notdir $(DEMO_DB))) (Ctrl-C to stop)"
	$(BIN)/blogarchive serve --db $(DEMO_DB) --port $(PORT)

# pytest-xdist workers: on two cores three workers took 598 s (a test waiting on a server, a lease or
# a kill leaves its core to the others); four took 530 to 602 s but failed a timing-bound test in four
# runs of five (docs/benchmarks.md, "The test suite"). TEST_WORKERS=0 runs the suite in one process.
# tests/conftest.py keeps the tests of one module-scoped fixture on one worker
TEST_WORKERS ?= 3

# the two venvs installed side by side (pip keeps one core busy)
test:
	$(MAKE) --no-print-directory -j2 install $(PYWB_VENV)/.installed
	BLOGARCHIVE_PYWB=$(abspath $(PYWB_VENV))/bin $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=20 $(PYTEST_ARGS)

# By hand, never in CI: synthetic blogs on 127.0.0.1; writes docs/benchmarks.md and bench/results.json,
# then docs/scaling.md's figures and bench/scaling.json.
bench: install
	$(BIN)/pip install --quiet $(CONSTRAINTS) -e '.[test,bench]'
	$(BIN)/python -m bench.run --sizes $(BENCH_SIZES)
	$(BIN)/python -m bench.scaling --sizes $(BENCH_SIZES)

# By hand: crawl every blog of tests/corpus and ../shared/fixtures/real-blogs, score each field against
# its authors' sources; writes docs/fidelity.md (FIDELITY_ARGS="--json fidelity.json --verbose" for the mismatches).
fidelity: install
	$(BIN)/python tests/fidelity.py --out docs/fidelity.md $(FIDELITY_ARGS)

lint: install
	$(BIN)/pip install --quiet $(CONSTRAINTS) -e '.[test,lint]'
	$(BIN)/ruff check crawler archive tests bench
	$(BIN)/mypy crawler archive bench

# constraints.txt written again: the newest releases within pyproject.toml's ranges, installed into
# an empty venv with every extra; then `make test` and `make lint` say whether they hold.
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/pip install --quiet -e '.[test,lint,bench,render]'
	{ echo '# The exact set the tests, lint and benchmarks ran with: make install (and make lint, make bench)'; \
	  echo "# install pyproject.toml's ranges under these pins. Written by make lock."; \
	  $(LOCK_VENV)/bin/pip freeze --exclude-editable; } > constraints.txt
	rm -rf $(LOCK_VENV)

clean:
	rm -rf $(VENV) $(PYWB_VENV) *.egg-info .pytest_cache $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
