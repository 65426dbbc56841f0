#!/usr/bin/env bash
# A real Kubernetes control plane on loopback for kbp's tests (issue 14): etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler, built from the Kubernetes project's own Go modules (kube/go.mod,
# kube/etcd/go.mod). Test infrastructure only: kbp itself has no Go in it. No kubelet, so no pod ever runs;
# what the tests need is the API: admission, CEL validation, RBAC, server-side apply, controllers.
#
#   scripts/kube.sh install        build etcd and the three control-plane binaries into the cache (no-op if there)
#   scripts/kube.sh start [DIR]    install if needed, start a control plane with its state in DIR, print export lines
#   scripts/kube.sh stop [DIR]     stop the processes started for DIR (idempotent)
#   scripts/kube.sh env [DIR]      print the export lines only
#   scripts/kube.sh restart-controller-manager [DIR]
#                                  restart kube-controller-manager, as it was started, and wait for its controllers
#
# Only the `export ...` lines go to stdout, so `eval "$(scripts/kube.sh start)"` works; everything else goes
# to stderr. The exports: KBP_KUBE_SERVER (https://127.0.0.1:PORT), KBP_KUBE_CA (the cluster CA, PEM),
# KBP_KUBE_TOKEN (an admin bearer token, group system:masters) and KUBECONFIG (the same, as a kubeconfig).
#
# Environment:
#   KBP_KUBE_CACHE          where built binaries are kept, by version
#                           (default ${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube)
#   KBP_KUBE_DIR            state dir when none is given: certificates, etcd data, logs, pid files
#                           (default ${TMPDIR:-/tmp}/kbp-kube-$UID)
#   KBP_KUBE_START_TIMEOUT  seconds to wait for /readyz (default 120)
#   KBP_KUBE_WATCH_PID      if set, the control plane is stopped when that process exits (so a killed test
#                           process does not leak one)
#   KBP_KUBE_NICE           niceness of the Go build (default 10: it takes minutes on every core there is)
#   KBP_KUBE_CA_CERT, KBP_KUBE_CA_KEY
#                           PEM files of an existing cluster CA to use instead of a new one (the emulator passes
#                           the CA its DescribeCluster reports, as an EKS cluster's endpoint is signed by its own)
#   KBP_KUBE_TOKEN_WEBHOOK  URL of a TokenReview webhook (authentication.k8s.io/v1) that authenticates bearer
#                           tokens, as EKS's aws-iam-authenticator does; the admin token keeps working beside it
#   KBP_KUBE_TOKEN_WEBHOOK_CACHE_TTL
#                           how long the apiserver trusts a webhook answer (default 10s; kube's default is 2m)
#
# DIR/audit.log has one JSON line (audit.k8s.io/v1 Event, level Metadata) per request of a user that is neither
# in system:masters (the admin token: tests, the emulator's simulated kubelets) nor a control-plane component:
# what kbp asked, through its EKS token, which is how tests and scripts/bench.sh count kbp's Kubernetes calls.
#   KBP_PYTHON              interpreter used to find free ports (default python3)
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KUBE_MOD="$REPO_ROOT/kube"
ETCD_MOD="$REPO_ROOT/kube/etcd"
PYTHON="${KBP_PYTHON:-python3}"
START_TIMEOUT_SECS="${KBP_KUBE_START_TIMEOUT:-120}"
# The service network is only bookkeeping here (ClusterIPs are allocated, nothing routes to them); EKS's
# default service CIDR, so the kubernetes Service gets the ClusterIP it has on EKS.
SERVICE_CIDR=10.100.0.0/16
KUBERNETES_SERVICE_IP=10.100.0.1

log() { echo "kube: $*" >&2; }
die() { log "error: $*"; exit 1; }
now_ms() { date +%s%3N; }

# Versions come from the go.mod files, so bumping Kubernetes or etcd is a one-line change there (and a new
# cache directory here).
mod_version() { # GO_MOD MODULE
  awk -v m="$2" '($1 == "require" && $2 == m) { print $3 }' "$1"
}
KUBE_VERSION="$(mod_version "$KUBE_MOD/go.mod" k8s.io/kubernetes)"
ETCD_VERSION="$(mod_version "$ETCD_MOD/go.mod" go.etcd.io/etcd/server/v3)"
[ -n "$KUBE_VERSION" ] && [ -n "$ETCD_VERSION" ] || die "cannot read the pinned versions from kube/go.mod and kube/etcd/go.mod"
CACHE="${KBP_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbp-kube}"
KUBE_BIN="$CACHE/$KUBE_VERSION/bin"
ETCD_BIN="$CACHE/etcd-$ETCD_VERSION/bin"
KUBE_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler)
# Started in this order, stopped in the reverse one.
PROCESSES=(etcd kube-apiserver kube-controller-manager kube-scheduler)

# ---------------------------------------------------------------------------------------------------------
# install

have_binaries() {
  local c
  for c in "${KUBE_COMMANDS[@]}"; do [ -x "$KUBE_BIN/$c" ] || return 1; done
  [ -x "$ETCD_BIN/etcd" ]
}

# go build into a temporary directory next to the final one, then rename: an interrupted build leaves no
# half-written binary that a later install would take for a finished one.
go_build() { # MODULE_DIR OUT_DIR LDFLAGS PACKAGE...
  local dir="$1" out="$2" ldflags="$3"
  shift 3
  local tmp
  mkdir -p "$(dirname "$out")"
  tmp="$(mktemp -d "$(dirname "$out")/.build.XXXXXX")"
  chmod 755 "$tmp"  # mktemp makes it 0700; other users may run the binaries
  # CGO_ENABLED=0 as in Kubernetes' and etcd's own release builds: static binaries, no C compiler needed.
  # GOWORK=off: a go.work further up must not pull other modules into these builds. -mod=readonly: go.sum
  # is committed and must already name every module, so a build never edits the repository.
  if ! (cd "$dir" && CGO_ENABLED=0 GOWORK=off nice -n "${KBP_KUBE_NICE:-10}" \
    go build -mod=readonly -trimpath -ldflags="-s -w $ldflags" -o "$tmp/" "$@" >&2); then
    rm -rf "$tmp"
    die "go build of $* in ${dir#"$REPO_ROOT"/} failed (see above); the Go module proxy must be reachable for a first build"
  fi
  rm -rf "$out"
  mv "$tmp" "$out"
}

# Kubernetes' own build (hack/lib/version.sh) stamps the release into the binaries with -X. Without it they
# report v0.0.0-master: /version would not say 1.34, and the apiserver would take itself for version 0.0
# when it works out its compatibility and emulation versions.
kube_version_ldflags() {
  local date major minor pkg flags=""
  date="$(cd "$KUBE_MOD" && GOWORK=off go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)"
  major="${KUBE_VERSION#v}"; major="${major%%.*}"
  minor="${KUBE_VERSION#v*.}"; minor="${minor%%.*}"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit= -X $pkg.buildDate=$date"
  done
  echo "$flags"
}

install() {
  if have_binaries; then
    log "$KUBE_VERSION in $KUBE_BIN, etcd $ETCD_VERSION in $ETCD_BIN (already built)"
    return 0
  fi
  command -v go >/dev/null 2>&1 \
    || die "go not found: Go (1.24 or newer) builds the test control plane; install it, or point KBP_KUBE_CACHE at a cache that has $KUBE_VERSION/bin and etcd-$ETCD_VERSION/bin"
  mkdir -p "$CACHE"
  # Serialized, so parallel test processes on a fresh machine build once, not once each.
  exec 9>"$CACHE/.install.lock"
  flock 9
  if have_binaries; then exec 9>&-; log "built by another process meanwhile"; return 0; fi
  local started_ms
  started_ms=$(now_ms)
  if [ ! -x "$ETCD_BIN/etcd" ]; then
    log "building etcd $ETCD_VERSION into $ETCD_BIN"
    go_build "$ETCD_MOD" "$ETCD_BIN" "" go.etcd.io/etcd/server/v3
    # go build names a binary after the last path element before a major-version suffix: server.
    mv "$ETCD_BIN/server" "$ETCD_BIN/etcd"
  fi
  local c missing=0
  for c in "${KUBE_COMMANDS[@]}"; do [ -x "$KUBE_BIN/$c" ] || missing=1; done
  if [ "$missing" = 1 ]; then
    log "building ${KUBE_COMMANDS[*]} $KUBE_VERSION into $KUBE_BIN (takes minutes the first time)"
    local pkgs=()
    for c in "${KUBE_COMMANDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
    # One go build for the three, so packages they share are compiled once and in parallel.
    go_build "$KUBE_MOD" "$KUBE_BIN" "$(kube_version_ldflags)" "${pkgs[@]}"
  fi
  exec 9>&-
  log "built in $(( ($(now_ms) - started_ms) / 1000 )) s: $(cd "$KUBE_BIN" && du -sh "${KUBE_COMMANDS[@]}" | awk '{printf "%s %s, ", $2, $1}')etcd $(du -sh "$ETCD_BIN/etcd" | cut -f1)"
}

# ---------------------------------------------------------------------------------------------------------
# state dir

state_dir() { # [DIR]
  local dir="${1:-${KBP_KUBE_DIR:-${TMPDIR:-/tmp}/kbp-kube-$(id -u)}}"
  if [ -d "$dir" ]; then (cd "$dir" && pwd); else echo "$dir"; fi
}

print_env() { # DIR
  local dir="$1"
  [ -f "$dir/server" ] && [ -f "$dir/admin.token" ] \
    || die "no control plane state in $dir: run 'scripts/kube.sh start${2:+ $dir}' first"
  echo "export KBP_KUBE_SERVER=$(cat "$dir/server")"
  echo "export KBP_KUBE_CA=$dir/pki/ca.crt"
  echo "export KBP_KUBE_TOKEN=$(cat "$dir/admin.token")"
  echo "export KUBECONFIG=$dir/admin.kubeconfig"
}

# The pids of DIR's processes that still run, in the reverse order of start (the order to stop them in).
plane_pids() { # DIR
  local name pid pids=()
  for name in "${PROCESSES[@]}"; do
    pid="$(running_pid "$1" "$name" || true)"
    [ -z "$pid" ] || pids=("$pid" "${pids[@]}")
  done
  echo "${pids[*]}"
}

# kill -0 also succeeds for a zombie, which a process whose parent (this script) is gone may linger as.
alive() {
  local state
  state="$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null || true)"
  [ -n "$state" ] && [ "$state" != Z ]
}

# The pid in NAME.pid, if that process is still NAME started from this dir (pids get reused).
running_pid() { # DIR NAME
  local pid
  pid="$(cat "$1/$2.pid" 2>/dev/null || true)"
  [ -n "$pid" ] && alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "/$2 " || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$1/" || return 1
  echo "$pid"
}

# ---------------------------------------------------------------------------------------------------------
# certificates and credentials

# The cluster CA signs the apiserver's serving certificate and the client certificates of the controller
# manager and the scheduler; the controller manager also signs CSRs with it (--cluster-signing-*), as EKS's
# does. ECDSA P-256: generating it costs milliseconds, RSA noticeably more on every start.
make_pki() { # DIR
  local pki="$1/pki"
  rm -rf "$pki"
  mkdir -p "$pki"
  (
    cd "$pki"
    umask 077
    if [ -n "${KBP_KUBE_CA_CERT:-}" ]; then
      cp "$KBP_KUBE_CA_CERT" ca.crt && cp "${KBP_KUBE_CA_KEY:?KBP_KUBE_CA_KEY must name the key of KBP_KUBE_CA_CERT}" ca.key
    else
      openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
      openssl req -x509 -new -key ca.key -out ca.crt -days 3650 -subj "/CN=kbp-kube-ca" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
    fi
    issue apiserver "/CN=kube-apiserver" serverAuth \
      "DNS:localhost,IP:127.0.0.1,IP:$KUBERNETES_SERVICE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    # The CN is the user name, O the group: the bootstrap RBAC policy binds system:kube-scheduler to its user.
    # The controller manager's controllers all act as the controller manager itself, in system:masters, rather
    # than each with a service account of its own (--use-service-account-credentials, as kubeadm and EKS run
    # it): minting those accounts one by one doubled the time to a usable plane (8.6 s instead of 4.0 s), and
    # what the tests exercise is the RBAC of kbp and its access entries, not that of the built-in controllers.
    issue kube-controller-manager "/CN=system:kube-controller-manager/O=system:masters" clientAuth ""
    issue kube-scheduler "/CN=system:kube-scheduler" clientAuth ""
    # Service-account tokens are signed with this key (RS256, as EKS's are) and verified with its public half.
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
    openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
    chmod 644 ./*.crt sa.pub
  )
  # Checked here: set -e does not apply inside a subshell whose status is tested.
  local f
  for f in ca.crt ca.key apiserver.crt apiserver.key kube-controller-manager.crt kube-controller-manager.key \
    kube-scheduler.crt kube-scheduler.key sa.key sa.pub; do
    [ -s "$pki/$f" ] || die "openssl could not create $pki/$f (is openssl 1.1.1 or newer installed?)"
  done
}

issue() { # NAME SUBJECT EXTENDED_KEY_USAGE SUBJECT_ALT_NAMES (run in the pki dir)
  local ext="keyUsage=critical,digitalSignature"$'\n'"extendedKeyUsage=$3"
  [ -z "$4" ] || ext+=$'\n'"subjectAltName=$4"
  openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null
  openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
    -extfile <(echo "$ext") -out "$1.crt" 2>/dev/null
  rm -f "$1.csr"
}

write_kubeconfig() { # FILE SERVER CA USER_LINES...
  local file="$1" server="$2" ca="$3"
  shift 3
  {
    cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kbp-kube
  cluster:
    server: $server
    certificate-authority: $ca
users:
- name: user
  user:
EOF
    local line
    for line in "$@"; do echo "    $line"; done
    cat <<EOF
contexts:
- name: kbp-kube
  context:
    cluster: kbp-kube
    user: user
current-context: kbp-kube
EOF
  } >"$file"
  chmod 600 "$file"
}

# ---------------------------------------------------------------------------------------------------------
# start

# N distinct ports that were free a moment ago. Bound all at once so they differ; another process may still
# take one before our server binds it, which start() detects and retries.
free_ports() { # N
  "$PYTHON" - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

launch() { # DIR NAME BINARY ARGS...
  local dir="$1" name="$2" bin="$3"
  shift 3
  # stdio goes to the log, so callers that capture our output (tests) are not held open by the servers.
  nohup "$bin" "$@" </dev/null >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/$name.pid"
  printf '%s\0' "$bin" "$@" >"$dir/$name.cmd"  # for restart
}

# Waits until CHECK succeeds, or fails if NAME exits or the deadline passes. Returns 2 when NAME died
# because its port was taken (the caller retries with other ports).
wait_for() { # DIR NAME DEADLINE_MS CHECK...
  local dir="$1" name="$2" deadline="$3"
  shift 3
  while ! "$@"; do
    if ! running_pid "$dir" "$name" >/dev/null; then
      if grep -q "address already in use" "$dir/logs/$name.log"; then return 2; fi
      tail -n 25 "$dir/logs/$name.log" >&2 || true
      log "error: $name exited during startup; its log: $dir/logs/$name.log"
      return 1
    fi
    if (( $(now_ms) >= deadline )); then
      tail -n 25 "$dir/logs/$name.log" >&2 || true
      log "error: $name was not ready within ${START_TIMEOUT_SECS}s (KBP_KUBE_START_TIMEOUT); its log: $dir/logs/$name.log"
      return 1
    fi
    sleep 0.1
  done
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$@" 2>/dev/null; }

# One attempt at starting the four processes on fresh ports. Returns 2 if a port was taken meanwhile.
start_processes() { # DIR
  local dir="$1" pki="$1/pki" deadline etcd_port peer_port api_port kcm_port sched_port
  deadline=$(( $(now_ms) + START_TIMEOUT_SECS * 1000 ))
  read -r etcd_port peer_port api_port kcm_port sched_port <<<"$(free_ports 5 || true)"
  [ -n "$sched_port" ] || die "cannot find free ports with $PYTHON (set KBP_PYTHON to a Python 3)"
  local server="https://127.0.0.1:$api_port"
  rm -rf "$dir/etcd"

  # etcd: plain HTTP on loopback; fsync off because the data lives only as long as the test.
  launch "$dir" etcd "$ETCD_BIN/etcd" --name kbp --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "kbp=http://127.0.0.1:$peer_port" --unsafe-no-fsync --log-level warn
  wait_for "$dir" etcd "$deadline" http_ok "http://127.0.0.1:$etcd_port/health" || return $?

  local webhook=()
  if [ -n "${KBP_KUBE_TOKEN_WEBHOOK:-}" ]; then
    # The webhook is a "cluster" to the apiserver, described by a kubeconfig; plain HTTP on loopback.
    cat >"$dir/token-webhook.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: token-webhook
  cluster:
    server: $KBP_KUBE_TOKEN_WEBHOOK
users:
- name: apiserver
contexts:
- name: token-webhook
  context:
    cluster: token-webhook
    user: apiserver
current-context: token-webhook
EOF
    webhook=(--authentication-token-webhook-config-file="$dir/token-webhook.kubeconfig"
      --authentication-token-webhook-version=v1
      --authentication-token-webhook-cache-ttl="${KBP_KUBE_TOKEN_WEBHOOK_CACHE_TTL:-10s}")
  fi

  cat >"$dir/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  userGroups: ["system:masters", "system:nodes", "system:serviceaccounts"]
- level: None
  users: ["system:kube-controller-manager", "system:kube-scheduler", "system:apiserver"]
- level: None
  nonResourceURLs: ["/readyz*", "/healthz*", "/livez*"]
- level: Metadata
EOF

  # --endpoint-reconciler-type=none: the reconciler would publish 127.0.0.1 as the endpoint of the
  # kubernetes Service, which Endpoints validation rejects (loopback), and log that error forever.
  launch "$dir" kube-apiserver "$KUBE_BIN/kube-apiserver" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --token-auth-file="$dir/tokens.csv" ${webhook[@]+"${webhook[@]}"} \
    --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --endpoint-reconciler-type=none --profiling=false \
    --audit-policy-file="$dir/audit-policy.yaml" --audit-log-path="$dir/audit.log" --audit-log-format=json
  # /readyz is readable without credentials (system:public-info-viewer) and only ok once the bootstrap RBAC
  # policy, the CRD informers and the other post-start hooks are done.
  wait_for "$dir" kube-apiserver "$deadline" http_ok --cacert "$pki/ca.crt" "$server/readyz" || return $?

  # The controller manager and the scheduler get client certificates; users come with the admin token or,
  # when KBP_KUBE_TOKEN_WEBHOOK is set, with whatever bearer token that webhook accepts (EKS tokens).
  # Their own HTTPS ports serve /healthz (always allowed), used below to see them up. No
  # --authentication/authorization-kubeconfig: that delegation would look for a front-proxy CA this apiserver
  # does not have and log an error about it every few seconds, and nothing here needs their /metrics.
  local c port
  for c in kube-controller-manager kube-scheduler; do
    write_kubeconfig "$dir/$c.kubeconfig" "$server" "$pki/ca.crt" \
      "client-certificate: $pki/$c.crt" "client-key: $pki/$c.key"
  done
  # --pvclaimbinder-sync-period=1s: binding a claim to the volume that names it takes two passes of the volume
  # binder, the second often only at its periodic resync (15 s by default); tests should not wait for that.
  launch "$dir" kube-controller-manager "$KUBE_BIN/kube-controller-manager" \
    --kubeconfig="$dir/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$kcm_port" --leader-elect=false \
    --root-ca-file="$pki/ca.crt" \
    --service-account-private-key-file="$pki/sa.key" \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --pvclaimbinder-sync-period=1s --profiling=false
  launch "$dir" kube-scheduler "$KUBE_BIN/kube-scheduler" \
    --kubeconfig="$dir/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$sched_port" --leader-elect=false --profiling=false
  # -k: these two serve with a certificate they make up in memory; this only asks whether they are up.
  for c in kube-controller-manager:$kcm_port kube-scheduler:$sched_port; do
    port="${c#*:}"; c="${c%%:*}"
    wait_for "$dir" "$c" "$deadline" http_ok -k "https://127.0.0.1:$port/healthz" || return $?
  done
  # The controller manager answers /healthz before its controllers run: it starts them one by one, and their
  # informers only after the last. The garbage collector says when its monitors have synced, which is after
  # that; until then no ReplicaSet gets pods, no claim is bound and no aggregated ClusterRole has rules.
  wait_for "$dir" kube-controller-manager "$deadline" \
    grep -q "all resource monitors have synced" "$dir/logs/kube-controller-manager.log" || return $?
  echo "$server" >"$dir/server"
}

start() { # [DIR]
  local dir
  mkdir -p "$(state_dir "${1:-}")"
  dir="$(state_dir "${1:-}")"
  if running_pid "$dir" kube-apiserver >/dev/null && [ -f "$dir/server" ] \
    && http_ok --cacert "$dir/pki/ca.crt" "$(cat "$dir/server")/readyz"; then
    log "already running from $dir at $(cat "$dir/server")"
    print_env "$dir"
    return 0
  fi
  # Leftovers of an earlier start in this dir (a crashed process, a half start) go first.
  stop_all "$dir" quiet
  install
  command -v openssl >/dev/null 2>&1 || die "openssl not found; install it (apt-get install openssl)"
  command -v curl >/dev/null 2>&1 || die "curl not found; install it (apt-get install curl)"
  local started_ms
  started_ms=$(now_ms)
  rm -f "$dir/server"
  mkdir -p "$dir/logs"
  make_pki "$dir"
  # A static admin credential for the tests' and the emulator's own calls: one bearer token in group
  # system:masters.
  local token
  token="$(openssl rand -hex 24)"
  (umask 077 && echo "$token,kbp-admin,kbp-admin,\"system:masters\"" >"$dir/tokens.csv" && echo "$token" >"$dir/admin.token")

  local attempt rc
  for attempt in 1 2 3; do
    rc=0
    start_processes "$dir" || rc=$?
    [ "$rc" = 0 ] && break
    stop_all "$dir" quiet
    [ "$rc" = 2 ] || die "the control plane did not start; logs are in $dir/logs"
    log "a port was taken by another process meanwhile; trying other ports ($attempt/3)"
  done
  [ "$rc" = 0 ] || die "no free ports after 3 attempts; logs are in $dir/logs"
  write_kubeconfig "$dir/admin.kubeconfig" "$(cat "$dir/server")" "$dir/pki/ca.crt" "token: $token"

  if [ -n "${KBP_KUBE_WATCH_PID:-}" ]; then
    # The pids go on its command line: the caller may delete DIR before the watchdog first reads it.
    local started=()
    read -r -a started <<<"$(plane_pids "$dir")"
    nohup "$REPO_ROOT/scripts/kube.sh" _watch "$KBP_KUBE_WATCH_PID" "$dir" "${started[@]}" </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/watchdog.pid"
  fi
  log "ready at $(cat "$dir/server") after $(( $(now_ms) - started_ms )) ms (state and logs: $dir)"
  print_env "$dir"
}

# ---------------------------------------------------------------------------------------------------------
# stop

# SIGTERM lets each one shut down cleanly (the apiserver drains, etcd closes its data); SIGKILL after 10 s.
stop_all() { # DIR [quiet]
  local dir="$1" quiet="${2:-}" i name pid stopped=()
  if [ -f "$dir/watchdog.pid" ]; then
    pid="$(cat "$dir/watchdog.pid")"
    # Only our own watchdog: its command line names this dir.
    if [ "$pid" != "$$" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "_watch"; then
      kill "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/watchdog.pid"
  fi
  for (( i = ${#PROCESSES[@]} - 1; i >= 0; i-- )); do
    name="${PROCESSES[$i]}"
    if pid="$(running_pid "$dir" "$name")"; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
      if alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
      stopped+=("$name ($pid)")
    fi
    rm -f "$dir/$name.pid"
  done
  # So that env no longer hands out the address of a server that is gone.
  rm -f "$dir/server"
  [ -n "$quiet" ] && return 0
  if [ ${#stopped[@]} -gt 0 ]; then log "stopped ${stopped[*]}"; else log "nothing running from $dir"; fi
}

stop() { # [DIR]
  local dir="${1:-${KBP_KUBE_DIR:-${TMPDIR:-/tmp}/kbp-kube-$(id -u)}}"
  [ -d "$dir" ] || { log "nothing running from $dir"; return 0; }
  stop_all "$(cd "$dir" && pwd)"
}

# The watchdog: stops the control plane once the watched process is gone.
watch() { # PID DIR [PIDS...]
  # The pids are kept in memory: whoever started the plane may delete DIR (a test's temporary directory) before
  # or as it exits, and the processes must still go then. New ones are read while DIR is there (a restarted
  # controller manager has a new pid). Each is checked to still be ours (its command line names DIR) before it
  # is signalled.
  local watched="$1" dir="$2" pid
  shift 2
  local pids=("$@")
  while kill -0 "$watched" 2>/dev/null; do
    if [ -d "$dir" ]; then
      # Added to, never replaced: DIR may be half deleted right now, its pid files partly gone.
      local now=()
      read -r -a now <<<"$(plane_pids "$dir")"
      for pid in "${now[@]}"; do
        [[ " ${pids[*]} " == *" $pid "* ]] || pids=("$pid" "${pids[@]}")
      done
    fi
    [ -n "${pids[*]}" ] && ours "${pids[-1]}" "$dir" || break
    sleep 1
  done
  rm -f "$dir/watchdog.pid" 2>/dev/null || true
  for pid in "${pids[@]}"; do
    ours "$pid" "$dir" || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
  done
  [ ! -d "$dir" ] || stop_all "$dir" quiet
}

# Whether PID is alive and was started with DIR in its command line.
ours() { # PID DIR
  alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2/"
}

# The controller manager's garbage collector looks for new resource kinds every 30 s (a fixed period): a
# custom object deleted in the foreground within 30 s of its CRD waits that long for the collector to notice
# it. A restarted controller manager knows every kind there is at once; the emulator restarts it when CRDs
# have been added.
restart_controller_manager() { # [DIR]
  local dir pid name=kube-controller-manager cmd=() deadline
  dir="$(state_dir "${1:-}")"
  [ -f "$dir/$name.cmd" ] || die "no $name was started from $dir"
  mapfile -d '' cmd <"$dir/$name.cmd"
  if pid="$(running_pid "$dir" "$name")"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
  fi
  deadline=$(( $(now_ms) + START_TIMEOUT_SECS * 1000 ))
  launch "$dir" "$name" "${cmd[@]}"
  wait_for "$dir" "$name" "$deadline" grep -q "all resource monitors have synced" "$dir/logs/$name.log" \
    || die "$name did not come back; its log: $dir/logs/$name.log"
}

case "${1:-}" in
  install) install ;;
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  env) print_env "$(state_dir "${2:-}")" "${2:-}" ;;
  restart-controller-manager) restart_controller_manager "${2:-}" ;;
  _watch) shift; watch "$@" ;;
  *) echo "usage: $0 install | start [DIR] | stop [DIR] | env [DIR]" >&2; exit 2 ;;
esac
