"""What the fault proxy (fault_proxy.py) does to each request: its configuration (seeded rates and targeted rules),
the decision for one call, and the counters behind `GET /__fault_proxy/stats`. No HTTP here.

Configuration (JSON; every key optional):

    {"seed": 7, "throttle_rate": 0.3, "server_error_rate": 0.05,
     "rules": [{"operation": "CreateVpc", "action": "drop_response", "count": 1},
               {"service": "eks", "action": "throttle", "rate": 0.5},
               {"operation": "CreateRole", "action": "fail", "status": 500, "code": "InternalFailure", "after": 1}]}

Rules are tried in order before the rates; the first that fires decides. A rule matches by `service` (the SigV4
signing name: ec2, iam, sts, kms, events, sqs, eks, s3) and/or `operation` (CreateVpc); it fires on a matching
request with probability `rate` (default 1), after letting the first `after` matching requests through (default 0),
at most `count` times (default: no limit). Unsigned requests (moto's /moto-api/) are never faulted.

Decisions are reproducible: the random numbers for the n-th request of an operation come from (seed, operation, n),
not from the order in which concurrent requests happen to arrive, so a kbp run with the same seed gets the same
faults on the same calls. n counts from when the configuration was set or the counters were reset. Without a seed
one is drawn and reported in the stats, so a failing run can be replayed.
"""

from __future__ import annotations

import random
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .fault_proxy_calls import Call

THROTTLE = "throttle"
SERVER_ERROR = "server_error"
FAIL = "fail"
DROP_RESPONSE = "drop_response"
DELAY_FORWARD = "delay_forward"
ACTIONS = (THROTTLE, SERVER_ERROR, FAIL, DROP_RESPONSE, DELAY_FORWARD)

_CONFIG_KEYS = {"seed", "throttle_rate", "server_error_rate", "rules"}
_RULE_KEYS = {"service", "operation", "action", "count", "after", "rate", "status", "code", "message", "seconds"}


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Fault:
    """What to do to one request instead of (or around) forwarding it plainly."""

    kind: str
    status: int | None = None  # fail, server_error
    code: str | None = None  # fail: None means the protocol's usual code for the status
    message: str | None = None
    seconds: float = 0.0  # delay_forward


@dataclass
class Rule:
    action: str
    service: str | None = None
    operation: str | None = None
    count: int | None = None
    after: int = 0
    rate: float = 1.0
    status: int | None = None  # fail: default 500; server_error: default 500 or 503, drawn
    code: str | None = None
    message: str | None = None
    seconds: float = 0.0
    matched: int = 0
    fired: int = 0

    def matches(self, call: Call) -> bool:
        return (self.service is None or self.service == call.service) and (
            self.operation is None or self.operation == call.operation
        )

    def fault(self, drawn_status: int) -> Fault:
        if self.action == FAIL:
            return Fault(FAIL, self.status or 500, self.code, self.message)
        return Fault(self.action, self.status or drawn_status, seconds=self.seconds)

    def describe(self) -> dict:
        spec = {k: getattr(self, k) for k in ("service", "operation", "action", "count", "after", "rate")}
        return {**{k: v for k, v in spec.items() if v is not None}, "matched": self.matched, "fired": self.fired}


@dataclass
class Config:
    seed: int | str
    throttle_rate: float = 0.0
    server_error_rate: float = 0.0
    rules: list[Rule] = field(default_factory=list)


def parse_config(raw: dict) -> Config:
    """The configuration from its JSON form; ConfigError names the first thing wrong."""
    if not isinstance(raw, dict):
        raise ConfigError("the configuration must be a JSON object")
    unknown = set(raw) - _CONFIG_KEYS
    if unknown:
        raise ConfigError(f"unknown configuration keys {sorted(unknown)}; known: {sorted(_CONFIG_KEYS)}")
    seed = raw.get("seed")
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 31)
    elif not isinstance(seed, (int, str)) or isinstance(seed, bool):
        raise ConfigError("seed must be an integer or a string")
    rules = raw.get("rules", [])
    if not isinstance(rules, list):
        raise ConfigError("rules must be a list")
    return Config(
        seed=seed,
        throttle_rate=_rate(raw, "throttle_rate"),
        server_error_rate=_rate(raw, "server_error_rate"),
        rules=[_rule(r, i) for i, r in enumerate(rules)],
    )


def _rate(obj: dict, key: str, where: str = "") -> float:
    value = obj.get(key, 0.0 if key != "rate" else 1.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ConfigError(f"{where}{key} must be a number from 0 to 1, not {value!r}")
    return float(value)


def _rule(raw, index: int) -> Rule:
    where = f"rules[{index}]: "
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}a rule is a JSON object")
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise ConfigError(f"{where}unknown keys {sorted(unknown)}; known: {sorted(_RULE_KEYS)}")
    action = raw.get("action")
    if action not in ACTIONS:
        raise ConfigError(f"{where}action must be one of {', '.join(ACTIONS)}, not {action!r}")
    for key in ("count", "after", "status"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ConfigError(f"{where}{key} must be a non-negative integer, not {value!r}")
    status = raw.get("status")
    if action == SERVER_ERROR and status not in (None, 500, 503):
        raise ConfigError(f"{where}server_error answers 500 or 503 (use action fail for other statuses)")
    if action == FAIL and status is not None and not 400 <= status <= 599:
        raise ConfigError(f"{where}status must be a 4xx or 5xx, not {status}")
    seconds = raw.get("seconds", 0.0)
    if action == DELAY_FORWARD and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0):
        raise ConfigError(f"{where}delay_forward needs seconds, a non-negative number")
    for key in ("service", "operation", "code", "message"):
        if key in raw and not isinstance(raw[key], str):
            raise ConfigError(f"{where}{key} must be a string")
    return Rule(
        action=action,
        service=raw.get("service"),
        operation=raw.get("operation"),
        count=raw.get("count"),
        after=raw.get("after", 0),
        rate=_rate(raw, "rate", where),
        status=status,
        code=raw.get("code"),
        message=raw.get("message"),
        seconds=float(seconds),
    )


class Injector:
    """The configuration in force and the counters; safe to call from the proxy's handler threads."""

    def __init__(self, config: Config):
        self._lock = threading.Lock()
        self._config = config
        self._sequence: Counter[str] = Counter()
        self._reset_counters()

    def _reset_counters(self) -> None:
        self._requests = 0
        self._operations: Counter[str] = Counter()
        self._faults: Counter[str] = Counter({action: 0 for action in ACTIONS})
        self._faults_by_operation: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self._statuses: Counter[str] = Counter()
        self._forwarded = 0
        self._upstream_errors = 0

    def replace(self, config: Config) -> None:
        with self._lock:
            self._config = config
            self._sequence.clear()

    def reset(self) -> None:
        """Zeroes the counters, the rules' and the random sequences' too, keeping the configuration."""
        with self._lock:
            self._reset_counters()
            self._sequence.clear()
            for rule in self._config.rules:
                rule.matched = rule.fired = 0

    def decide(self, call: Call) -> Fault | None:
        """Counts the request and says which fault, if any, it gets."""
        with self._lock:
            self._requests += 1
            self._operations[call.key] += 1
            if not call.service:
                return None
            self._sequence[call.key] += 1
            config = self._config
            rng = random.Random(f"{config.seed}/{call.key}/{self._sequence[call.key]}")
            # A fixed number of draws per request, whatever matches, keeps each decision a function of
            # (seed, operation, n) alone.
            rule_draws = [rng.random() for _ in config.rules]
            throttle_draw, server_draw, status_draw = rng.random(), rng.random(), rng.random()
            status = 500 if status_draw < 0.5 else 503
            fault = None
            for rule, draw in zip(config.rules, rule_draws):
                if not rule.matches(call):
                    continue
                rule.matched += 1
                if rule.matched > rule.after and (rule.count is None or rule.fired < rule.count) and draw < rule.rate:
                    rule.fired += 1
                    fault = rule.fault(status)
                    break
            if fault is None and throttle_draw < config.throttle_rate:
                fault = Fault(THROTTLE)
            if fault is None and server_draw < config.server_error_rate:
                fault = Fault(SERVER_ERROR, status)
            if fault is not None:
                self._faults[fault.kind] += 1
                self._faults_by_operation[call.key][fault.kind] += 1
            return fault

    def record(self, status: int | None, forwarded: bool, upstream_error: bool = False) -> None:
        """Counts what the client was answered (None: nothing, the connection was closed)."""
        with self._lock:
            self._statuses[str(status) if status is not None else "none"] += 1
            self._forwarded += forwarded
            self._upstream_errors += upstream_error

    def stats(self) -> dict:
        with self._lock:
            config = self._config
            return {
                "seed": config.seed,
                "throttle_rate": config.throttle_rate,
                "server_error_rate": config.server_error_rate,
                "requests": self._requests,
                "forwarded": self._forwarded,
                "upstream_errors": self._upstream_errors,
                "operations": dict(sorted(self._operations.items())),
                "faults": dict(self._faults),
                "faults_by_operation": {k: dict(v) for k, v in sorted(self._faults_by_operation.items())},
                "statuses": dict(sorted(self._statuses.items())),
                "rules": [rule.describe() for rule in config.rules],
            }
