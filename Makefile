# sdnmpi: `make demo` runs the main job, `make test` runs every test. Both set everything up
# first (apt packages, the venv, C builds) on Debian 12, as root.
VENV    ?= .venv
PYTHON  := $(VENV)/bin/python
PREFIX  ?= /usr/local
PYTEST_ARGS ?=

.PHONY: all setup build demo test unit-test integration-test bench install clean
.PHONY: bench-prof
.PHONY: bench-jobroute

all: build

setup:
	bash scripts/install-deps.sh

build:
	$(MAKE) -C lldpd
	$(MAKE) -C libsdnmpi

demo: setup
	$(PYTHON) -m sdnmpi.mininet_topos.demo $(DEMO_ARGS)

test: setup
	$(PYTHON) -m pytest -ra --durations=15 tests $(PYTEST_ARGS)

# `make bench` (about 2 h 10 min: the latest runs of its parts, this about 1 h, the two runs below about
# 3 and 30 min, job routing about 12 min; flow detection about 29 min with its five modes)
# or `make bench QUICK=1` (parts 1, 4 and 5 quick, 2 and 3 skipped: a few minutes each);
# ARGS="..." passes options to bench/run.py (fabric size, bandwidths, routings, ...; see
# bench/README.md); by default it runs at the link rates a probe
# chooses on the machine (--rates link-bound: the fastest rung where the emulated links, not
# ovs-vswitchd, limit a job-like load; ARGS="--rates fixed" keeps 30/15). Its second run is the
# 16-host allreduce (4 leaves of 4) at link rates chosen the same way from 12/6 down, about 3 minutes
# (at 30/15 and 20/10 its jobs are not link-bound together on a 2-core machine although the probe
# passes: README, "16 hosts").
ARGS ?= --rates link-bound
PROF_ARGS ?=
BENCH16_ARGS ?= --rates link-bound --rate-ladder 12/6,8/4 --leaves 4 --hosts-per-leaf 4 \
	--collectives allreduce --allreduce-sizes 256k,1m --reps 3 --placements random,block --routings dmodk \
	--tiny-reps 0 --planner-max-hosts 0 --iperf-seconds 3
# Its third run: Allgather, Reduce and Alltoall on the 8-host fabric at 1 and 4 MiB per rank, at link
# rates chosen the same way, about 30 minutes.
MORE_ARGS ?= --rates link-bound --collectives allgather,reduce,alltoall --more-sizes 1m,4m \
	--tiny-reps 0 --planner-max-hosts 0 --iperf-seconds 3
bench: setup
	$(VENV)/bin/pip install -q -r requirements-bench.txt
	$(PYTHON) bench/run.py $(if $(QUICK),--quick) $(ARGS)
	$(if $(QUICK),,$(PYTHON) bench/run.py $(BENCH16_ARGS))
	$(if $(QUICK),,$(PYTHON) bench/run.py $(MORE_ARGS))
	$(PYTHON) bench/bench_jobroute_mininet.py $(if $(QUICK),--quick) $(JOBROUTE_ARGS)
	$(PYTHON) bench/bench_flowdetect.py $(if $(QUICK),--quick) $(FLOWDETECT_ARGS)

# Traffic-aware job routing on Mininet (docs/jobroute.md): D-mod-K, ECMP and the SDN planners on
# the pattern program (hpcc with JOBROUTE_ARGS="--programs patterns,hpcc"), k=4 fat-tree and the
# 8-host 2:1 fabric; about 12 minutes.
bench-jobroute: setup
	$(PYTHON) bench/bench_jobroute_mininet.py $(JOBROUTE_ARGS)

# The traffic profiler's overhead (docs/profiler.md): a markdown table, about 2 minutes.
bench-prof: setup
	$(PYTHON) bench/prof_overhead.py $(PROF_ARGS)

# Flow detection without hints (docs/flows.md): the pattern programs on the k=4 fat-tree under
# none/threshold/learned/learned-slide/hints at 5/5 Mbit/s, about 29 minutes (also part of `make bench`; QUICK=1:
# permutation and two-phases once, about 9 minutes); runs Mininet, so under the machine's lock.
.PHONY: bench-flowdetect
bench-flowdetect: setup
	flock /tmp/sdnmpi-mininet.lock $(PYTHON) bench/bench_flowdetect.py $(if $(QUICK),--quick) $(FLOWDETECT_ARGS)

unit-test: setup
	$(PYTHON) -m pytest -ra tests/unit $(PYTEST_ARGS)

integration-test: setup
	$(PYTHON) -m pytest -ra tests/integration $(PYTEST_ARGS)

install: build
	$(MAKE) -C lldpd install PREFIX=$(PREFIX)
	$(MAKE) -C libsdnmpi install PREFIX=$(PREFIX)

clean:
	$(MAKE) -C lldpd clean
	$(MAKE) -C libsdnmpi clean
	rm -rf build *.egg-info .pytest_cache
