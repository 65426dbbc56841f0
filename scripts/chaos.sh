#!/usr/bin/env bash
# Seeded fault storms against the emulator: for each seed, apply + a no-op plan + destroy of the minimal
# blueprint through the fault proxy (25 % of calls throttled, 5 % answered with a server error), after one run
# without faults. Every run must succeed first time and leave nothing; the table printed at the end gives wall
# times, requests, faults injected and apply's retries against the fault-free run.
#   scripts/chaos.sh [SEEDS]      SEEDS: 1-20 (default) or a list such as 3,5,8
# About 30 s per seed on 2 cores. The test suite (scripts/test.sh) runs the same test with two seeds.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/kbp-target}"
scripts/emulator.sh install
KBP_CHAOS_SEEDS="${1:-1-20}" cargo nextest run --profile chaos --test it --no-capture \
  -E 'test(=faults::apply_plan_and_destroy_succeed_first_time_in_a_throttling_storm)'
