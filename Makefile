# The two commands of the README:
#   make run    set-up, then the whole embedded default through the workflow (snakemake)
#   make test   set-up, then the test suite (format, lint, pytest incl. end-to-end workflow runs, in two
#               processes: docs/testing.md)
# and the hosted evaluation on the embedded default (docs/server.md):
#   make serve  set-up, then a server and a worker on 127.0.0.1:$(PORT), state under $(SERVER_DIR)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)
# The cluster executor plugins (SLURM, Kubernetes) live outside the import path: Snakemake imports
# every executor plugin it can find at each start (about 1 s for these two, and the SLURM one asks
# `scontrol show config` for its help text, 9 s wherever SLURM's controller is down). A cluster run
# puts them on the path: PYTHONPATH=.venv/cluster-plugins (docs/cluster.md). A venv made before
# they moved has them in site-packages: the set-up uninstalls them there.
CLUSTER_PLUGINS := $(VENV)/cluster-plugins

PORT ?= 8000
SERVER_DIR ?= build/server

.PHONY: setup browser run test oneshot serve clean

$(BIN)/.installed: pyproject.toml envs/requirements.lock envs/cluster-plugins.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r envs/requirements.lock
	if $(BIN)/pip show --quiet $$(cut -d= -f1 envs/cluster-plugins.lock) 2>/dev/null; then \
		$(BIN)/pip uninstall --quiet --yes -r envs/cluster-plugins.lock; fi
	rm -rf $(CLUSTER_PLUGINS)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --target $(CLUSTER_PLUGINS) \
		-r envs/cluster-plugins.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

# Restore the DVC-pinned embedded default (data, checkpoints) from the in-repository remote.
setup: $(BIN)/.installed
	$(BIN)/dvc pull --quiet $$(git ls-files "*.dvc")

run: setup
	$(BIN)/snakemake --cores 8

oneshot: setup
	$(BIN)/python benchmark.py --data data --checkpoint artifacts/best.pt --baseline segformer-ade \
		--split test --dataset-manifest data_manifest.json --emit-submission submission.json

serve: setup
	$(BIN)/python tools/serve.py --port $(PORT) --dir $(SERVER_DIR)

# Debian's chromium, for the headless-browser test of results/leaderboard.html.
browser:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium)

test: setup browser
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint
	SEGBENCH_REQUIRE_CHROMIUM=1 $(BIN)/pytest -q -n 2 --durations=30

clean:
	rm -rf results build .snakemake submission*.json
