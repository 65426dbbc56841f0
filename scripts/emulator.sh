#!/usr/bin/env bash
# Local AWS emulator for kbp's tests and demo: moto's server with kbp's extension (emulator/kbp_emulator),
# which adds the EKS operations moto lacks and gives long operations a life cycle (see emulator/README.md).
#
#   scripts/emulator.sh install   create/refresh .venv-emulator/ from scripts/requirements-emulator.txt
#   scripts/emulator.sh start     install if needed, start the emulator on 127.0.0.1:$KBP_EMULATOR_PORT, print export lines
#   scripts/emulator.sh stop      stop the server started from $KBP_EMULATOR_DIR (idempotent)
#   scripts/emulator.sh status    exit 0 if the emulator answers on the port
#   scripts/emulator.sh env       print the export lines only
#   scripts/emulator.sh test ...  run the extension's own pytest suite (emulator/tests) with the venv's Python
#
# Only the `export ...` lines go to stdout, so `eval "$(scripts/emulator.sh start)"` works; everything else
# goes to stderr. kbp reaches the emulator only through the SDK's standard AWS_ENDPOINT_URL.
#
# Environment:
#   KBP_EMULATOR_PORT       port on 127.0.0.1 (default 4566)
#   KBP_EMULATOR_DIR        pid file and log (default <repo>/.emulator)
#   KBP_EMULATOR_VENV       virtualenv (default <repo>/.venv-emulator)
#   KBP_EMULATOR_WATCH_PID  if set, the server is stopped when that process exits (tests use this so a killed
#                           test process does not leak its server)
#   KBP_EMULATOR_PROFILE    latency profile: a name in emulator/profiles/ or a path (default instant)
#   KBP_EMULATOR_TIME_SCALE multiplies the profile's delays (default 1; 0.01 makes a 600 s cluster take 6 s)
#   KBP_EMULATOR_KUBE       `none`: clusters get no Kubernetes API server (AWS-only tests); by default each
#                           has a real control plane of its own, started with scripts/kube.sh (built before
#                           the emulator starts if need be: about 5 minutes once per machine)
#   KBP_PYTHON              interpreter used to create the virtualenv (default python3, 3.10 or newer)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${KBP_EMULATOR_PORT:-4566}"
STATE_DIR="${KBP_EMULATOR_DIR:-$REPO_ROOT/.emulator}"
VENV="${KBP_EMULATOR_VENV:-$REPO_ROOT/.venv-emulator}"
REQUIREMENTS="$REPO_ROOT/scripts/requirements-emulator.txt"
PYTHON="${KBP_PYTHON:-python3}"
START_TIMEOUT_SECS=60
ENDPOINT="http://127.0.0.1:$PORT"

log() { echo "emulator: $*" >&2; }
die() { log "error: $*"; exit 1; }
now_ms() { date +%s%3N; }

print_env() {
  echo "export AWS_ENDPOINT_URL=$ENDPOINT"
  echo "export AWS_ACCESS_KEY_ID=testing"
  echo "export AWS_SECRET_ACCESS_KEY=testing"
  echo "export AWS_REGION=us-west-2"
}

# True if a moto server answers on the port. /moto-api/ is moto's own dashboard, so another HTTP service on
# the same port does not count.
answers() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS -o /dev/null --max-time 2 "$ENDPOINT/moto-api/" 2>/dev/null
  else
    "$PYTHON" - "$ENDPOINT/moto-api/" <<'PY' 2>/dev/null
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=2)
PY
  fi
}

requirements_hash() {
  { cat "$REQUIREMENTS"; "$PYTHON" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

# Creates an empty virtualenv at $VENV with pip in it. Debian's python3 ships venv without ensurepip unless
# python3-venv is installed, so fall back to virtualenv from PyPI, then to apt.
create_venv() {
  rm -rf "$VENV"
  if "$PYTHON" -m venv "$VENV" >&2 2>&1 && [ -x "$VENV/bin/pip" ]; then return 0; fi
  rm -rf "$VENV"
  log "'$PYTHON -m venv' cannot create a venv with pip; trying virtualenv from PyPI"
  if "$PYTHON" -m pip install --quiet --disable-pip-version-check --user virtualenv >&2 2>&1 \
    && "$PYTHON" -m virtualenv --quiet "$VENV" >&2 2>&1 && [ -x "$VENV/bin/pip" ]; then return 0; fi
  rm -rf "$VENV"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    local minor
    minor="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    log "installing python${minor}-venv with apt-get"
    apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python${minor}-venv" >&2 \
      || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2 || true
    local py
    # Debian's python3-venv only helps Debian's own python3, not one from pyenv or a tarball.
    for py in "$PYTHON" /usr/bin/python3; do
      rm -rf "$VENV"
      if "$py" -m venv "$VENV" >&2 2>&1 && [ -x "$VENV/bin/pip" ]; then return 0; fi
    done
  fi
  die "cannot create a Python virtualenv at $VENV: install python3-venv (Debian/Ubuntu) or virtualenv"
}

# Installs the pinned emulator into $VENV unless the stored hash says it is already there. Serialized with
# flock so parallel test processes on a fresh clone do not install into the same venv at once.
install() {
  command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found; install Python 3 (3.10 or newer)"
  [ -f "$REQUIREMENTS" ] || die "missing $REQUIREMENTS"
  local want
  want="$(requirements_hash)"
  if [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null || true)" = "$want" ]; then return 0; fi
  mkdir -p "$(dirname "$VENV")"
  local lock="$VENV.lock"
  exec 9>"$lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  # Someone else may have finished the install while we waited for the lock.
  if [ "$(cat "$VENV/.requirements.sha256" 2>/dev/null || true)" = "$want" ]; then exec 9>&-; return 0; fi
  log "installing moto into $VENV from $(basename "$REQUIREMENTS") (about a minute)"
  create_venv
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$REQUIREMENTS" >&2 \
    || { rm -rf "$VENV"; die "pip install -r $REQUIREMENTS failed (is PyPI reachable?)"; }
  echo "$want" >"$VENV/.requirements.sha256"
  exec 9>&-
  log "installed $("$VENV/bin/pip" show moto 2>/dev/null | sed -n 's/^Version: /moto /p')"
}

# kill -0 also succeeds for a zombie, and the server's parent (this script) is gone, so it may linger as one
# until some reaper gets to it.
alive() {
  local state
  state="$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null || true)"
  [ -n "$state" ] && [ "$state" != Z ]
}

# The pid in the pid file, if that process is still our emulator (pids get reused).
running_pid() {
  local pid
  pid="$(cat "$STATE_DIR/moto.pid" 2>/dev/null || true)"
  [ -n "$pid" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q kbp_emulator || return 1
  echo "$pid"
}

start() {
  if answers; then
    log "already answering at $ENDPOINT"
    print_env
    return 0
  fi
  install
  # Built now, not inside the first CreateCluster (whose caller would time out on a 5-minute Go build).
  if [ "${KBP_EMULATOR_KUBE:-real}" != none ]; then "$REPO_ROOT/scripts/kube.sh" install; fi
  mkdir -p "$STATE_DIR"
  local logfile="$STATE_DIR/moto.log"
  : >"$logfile"
  log "starting moto with kbp_emulator on $ENDPOINT, profile ${KBP_EMULATOR_PROFILE:-instant} x${KBP_EMULATOR_TIME_SCALE:-1} (log: $logfile)"
  # stdio goes to the log so callers that capture our output (tests) are not held open by the server.
  # KBP_EMULATOR_PROFILE and KBP_EMULATOR_TIME_SCALE reach the launcher through the environment.
  PYTHONPATH="$REPO_ROOT/emulator${PYTHONPATH:+:$PYTHONPATH}" MOTO_IAM_LOAD_MANAGED_POLICIES=true \
    nohup "$VENV/bin/python" -m kbp_emulator -H 127.0.0.1 -p "$PORT" </dev/null >>"$logfile" 2>&1 &
  local pid=$!
  echo "$pid" >"$STATE_DIR/moto.pid"

  if [ -n "${KBP_EMULATOR_WATCH_PID:-}" ]; then
    local watched="$KBP_EMULATOR_WATCH_PID"
    nohup bash -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; kill -9 "$2" 2>/dev/null' \
      watchdog "$watched" "$pid" </dev/null >/dev/null 2>&1 &
    echo $! >"$STATE_DIR/watchdog.pid"
  fi

  local started_ms
  started_ms=$(now_ms)
  while :; do
    if ! alive "$pid"; then
      tail -n 20 "$logfile" >&2 || true
      rm -f "$STATE_DIR/moto.pid"
      die "the emulator exited during startup (port $PORT in use? bad KBP_EMULATOR_PROFILE?)"
    fi
    # "Running on" is printed by werkzeug only after it bound the port: without it, an answer could come
    # from another server that won a race for the same port.
    if grep -q "Running on" "$logfile" && answers; then break; fi
    if (( $(now_ms) - started_ms >= START_TIMEOUT_SECS * 1000 )); then
      tail -n 20 "$logfile" >&2 || true
      stop_server
      die "the emulator did not answer on $ENDPOINT within ${START_TIMEOUT_SECS}s"
    fi
    sleep 0.1
  done
  log "ready at $ENDPOINT (pid $pid) after $(( $(now_ms) - started_ms )) ms"
  print_env
}

stop_server() {
  local pid
  if [ -f "$STATE_DIR/watchdog.pid" ]; then
    kill "$(cat "$STATE_DIR/watchdog.pid")" 2>/dev/null || true
    rm -f "$STATE_DIR/watchdog.pid"
  fi
  if pid="$(running_pid)"; then
    # SIGKILL: moto keeps everything in memory, so there is nothing to flush, and after SIGTERM its Python
    # teardown takes 1.5 s, which adds up over a test suite that starts one server per test.
    kill -9 "$pid" 2>/dev/null || true
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.05; done
    log "stopped (pid $pid)"
    # The control planes of its EKS clusters go with it, now: a test deletes this directory right after, and
    # kube.sh's watchdog, which would stop them too, is only the fallback for an emulator that was killed.
    local plane
    for plane in "$STATE_DIR"/kube/*/plane; do
      [ -d "$plane" ] || continue
      "$REPO_ROOT/scripts/kube.sh" stop "$plane" >/dev/null 2>&1 &
    done
    wait
  else
    log "not running (no live pid in $STATE_DIR/moto.pid)"
  fi
  rm -f "$STATE_DIR/moto.pid"
}

# The extension's pytest suite; it runs its own in-process server, so nothing needs to be running.
run_tests() {
  install
  cd "$REPO_ROOT/emulator"
  PYTHONPATH="$REPO_ROOT/emulator${PYTHONPATH:+:$PYTHONPATH}" exec "$VENV/bin/python" -m pytest "$@"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop_server ;;
  status)
    if answers; then log "answering at $ENDPOINT"; else log "not answering at $ENDPOINT"; exit 1; fi ;;
  env) print_env ;;
  test) shift; run_tests "$@" ;;
  *) echo "usage: $0 install|start|stop|status|env|test [pytest args]" >&2; exit 2 ;;
esac
