# The two commands of the README:
#   make run    set-up, then the whole embedded default through the workflow (snakemake)
#   make test   set-up, then the test suite (format, lint, pytest incl. end-to-end workflow runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)
# Snakemake imports the SLURM executor plugin at every start, and the plugin asks `scontrol show
# config` for its help text: about 9 s wherever SLURM is installed but its controller is down.
# Runs that do not use SLURM point it at an empty configuration, which answers at once.
LOCAL_SNAKEMAKE := SLURM_CONF=/dev/null $(BIN)/snakemake

.PHONY: setup browser run test oneshot clean

$(BIN)/.installed: pyproject.toml envs/requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r envs/requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

# Restore the DVC-pinned embedded default (data, checkpoints) from the in-repository remote.
setup: $(BIN)/.installed
	$(BIN)/dvc pull --quiet $$(git ls-files "*.dvc")

run: setup
	$(LOCAL_SNAKEMAKE) --cores 8
	cat results/leaderboard.md

oneshot: setup
	$(BIN)/python benchmark.py --data data --checkpoint artifacts/best.pt --baseline segformer-ade \
		--split test --dataset-manifest data_manifest.json --emit-submission submission.json

# Debian's chromium, for the headless-browser test of results/leaderboard.html.
browser:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium)

test: setup browser
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(LOCAL_SNAKEMAKE) --lint
	SEGBENCH_REQUIRE_CHROMIUM=1 $(BIN)/pytest -q

clean:
	rm -rf results build .snakemake submission*.json
