"""Settings, each declared once with its default and help text (CONTRACT §6).

Secrets (API keys, tokens) are read when needed through `secret()` and are never
stored on the Settings object, so they cannot leak into checkpoints, records or logs.
"""
from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Setting:
    name: str
    default: str | None
    help: str
    secret: bool = False
    kind: type | None = None  # int or float for a numeric setting...
    bounds: tuple[float, float] | None = None  # ...and its inclusive, finite range
    demo: str | None = None  # the value when INCIDENTIQ_SOURCE=demo and the setting is unset


SETTINGS: tuple[Setting, ...] = (
    Setting("INCIDENTIQ_DATA_DIR", "./data", "checkpoints, records, knowledge index"),
    Setting("INCIDENTIQ_DATABASE_URL", None, "`postgresql://user:password@host:5432/db` (add `?options=-csearch_path%3Dname`"
            " for a schema of its own): checkpoints and records in PostgreSQL, shared by workbench and poller"
            " processes on many machines (one poller works at a time); unset = SQLite files in the data dir;"
            " its password is masked wherever text is shown or stored"),
    Setting("INCIDENTIQ_SOURCE", "demo", "`demo` (bundled sample stream), `file:PATH`, or `splunk`"),
    Setting("OPENAI_API_KEY", None, "key for an OpenAI-compatible endpoint; unset = offline analyzer", secret=True),
    Setting("OPENAI_BASE_URL", None, "base URL of an OpenAI-compatible endpoint"),
    Setting("INCIDENTIQ_MODEL", None, "chat model name for the analyst (e.g. gpt-4o-mini)"),
    Setting("INCIDENTIQ_MODEL_TIMEOUT", "30", "seconds before a model or embeddings request times out (then 2 retries)",
            kind=float, bounds=(0.1, 600)),
    Setting("INCIDENTIQ_MODEL_BREAKER_FAILURES", "3", "consecutive failed model calls after which the analyst skips the model"
            " (and analyses offline, labelled) for INCIDENTIQ_MODEL_BREAKER_SECONDS", kind=int, bounds=(1, 1000)),
    Setting("INCIDENTIQ_MODEL_BREAKER_SECONDS", "60", "seconds the model is skipped once the breaker opens; then it is"
            " tried again", kind=float, bounds=(0, 86400)),
    Setting("INCIDENTIQ_MODEL_OUTPUT", "json_schema", "how the model returns structured answers: `json_schema` or `function_calling`"),
    Setting("INCIDENTIQ_EMBEDDINGS", "offline", "`offline` (hashed n-grams, no download) or `openai:MODEL`"),
    Setting("SPLUNK_URL", None, "Splunk management URL, e.g. https://splunk:8089"),
    Setting("SPLUNK_TOKEN", None, "Splunk bearer token", secret=True),
    Setting("SPLUNK_QUERY", "search index=main log_level=ERROR", "Splunk search for error events"),
    Setting("SPLUNK_VERIFY_TLS", "true", "`true`, `false` (self-signed management port), or the path of a CA bundle"),
    Setting("SPLUNK_OVERLAP_SECONDS", "300", "each Splunk window re-reads this much of the previous one, for late-indexed events",
            kind=float, bounds=(0, 86400)),
    Setting("SPLUNK_LOOKBACK_SECONDS", "900", "how far back the first Splunk poll reads", kind=float, bounds=(0, 2592000)),
    Setting("INCIDENTIQ_CRITICAL_SERVICES", "", "comma-separated names or glob patterns of services whose "
            "incidents are raised one severity step (from high); each pattern is matched against the whole "
            "service name and each of its `-`/`_`/`.`-separated words, never a substring: `pos` matches "
            "`pos-api`, not `postgres-primary`",
            demo="checkout*,payment*,order*,pos,register*"),
    Setting("CODE_FIX_MIN_CONFIDENCE", "0.5", "router threshold for code_fix eligibility", kind=float, bounds=(0, 1)),
    Setting("INCIDENTIQ_REOPEN_MINUTES", "30", "minutes after close before a matching event opens a new incident",
            kind=float, bounds=(0, 525600)),
    Setting("INCIDENTIQ_MAX_EVENT_BYTES", "262144", "largest accepted log line in bytes; larger lines are dead-lettered",
            kind=int, bounds=(1024, 16777216)),
    Setting("INCIDENTIQ_POLL_INTERVAL", "2", "seconds between polls of the log source", kind=float, bounds=(0.05, 3600)),
    Setting("INCIDENTIQ_MERGE_DELAY", "30", "poller: seconds new evidence for an incident awaiting approval gathers "
            "before its analysis re-runs (`ingest` merges at once)", kind=float, bounds=(0, 86400)),
    Setting("INCIDENTIQ_DEMO_SPEED", "600", "demo source: how many times faster than real time the sample day replays",
            kind=float, bounds=(0.001, 1000000)),
    Setting("INCIDENTIQ_REPO_DIR", "./samples/pos-backend", "read-only source tree code_fix proposes diffs against"),
    Setting("INCIDENTIQ_RETENTION_DAYS", "30", "days after its decision before an incident's history is compacted "
            "(`prune`, and the poller hourly): its record, audit, fix and the checkpoints of the gate and the end stay",
            kind=float, bounds=(0, 36500)),
    Setting("INCIDENTIQ_LOG_FORMAT", "auto", "how log lines are read: `auto` (detected per file from its first lines), "
            "`json`, `logfmt`, `syslog`, `syslog5424`, `apache`, `nginx`, `log4j`, `glog`, `golog`, `bracket-time`, `logcat`, "
            "`text`, or `custom` (INCIDENTIQ_LOG_PATTERN)"),
    Setting("INCIDENTIQ_LOG_PATTERN", None, "a regex with named groups `message` (required), `time`, `level`, `service`, "
            "`host` for lines of your own format; tried first on every line"),
    Setting("INCIDENTIQ_SOURCE_TZ", "UTC", "time zone of log times written without an offset (an IANA name such as "
            "`Europe/Berlin`, or `UTC`)"),
    Setting("INCIDENTIQ_OPEN_LEVEL", "ERROR", "the lowest level that opens an incident: `WARN`, `ERROR` or `FATAL` "
            "(lower levels are kept as context for log windows)"),
    Setting("INCIDENTIQ_OPEN_SIGNATURES", "on", "`on`: a WARN line that carries a known error signature (one of the "
            "knowledge base's docs) opens an incident too; `off`: only the level decides"),
    Setting("INCIDENTIQ_POLLER", "on", "web app: `on` runs the source's poller in a background thread; `off` only "
            "shows what is in the data dir (tests, or when `python -m pipeline poll` runs elsewhere)"),
    # -- who may decide (docs/CONTRACT.md §6) --
    Setting("INCIDENTIQ_AUTH", "demo", "web app sign-in: `demo` (a typed name, no sign-in: anyone may act as anyone; "
            "for demos and a single trusted desk) or `oidc` (st.login against the configured provider; typed names "
            "are refused)"),
    Setting("INCIDENTIQ_ROLES_CLAIM", "roles", "the ID-token claim whose values name roles (`viewer`, `reviewer`, "
            "`admin`) or groups the roles file maps"),
    Setting("INCIDENTIQ_ROLES_FILE", None, "a TOML or JSON file mapping users, emails and groups to roles "
            "(`[roles]` table: `\"ann@example.com\" = \"reviewer\"`, `\"group:sre\" = \"admin\"`)"),
    Setting("INCIDENTIQ_DEFAULT_ROLE", None, "the role of a person no claim or mapping names; unset: `admin` "
            "while neither a roles file nor oidc is configured (a typed name proves nothing, so a lower role would "
            "hide features without protecting them), `viewer` otherwise"),
    Setting("INCIDENTIQ_TOKENS_FILE", None, "a TOML or JSON file of API tokens for the CLI (`[[tokens]]` with "
            "`name`, `sha256`, `role`, optional `user` and `expires`): only hashes, made by `python -m pipeline token`"),
    Setting("INCIDENTIQ_TOKEN", None, "the CLI's API token (or `--token`); checked against the tokens file",
            secret=True),
    Setting("INCIDENTIQ_TWO_PERSON", "critical,changes_files", "which approvals need two distinct reviewers: "
            "comma-separated `critical` (severity critical), `high` (high or critical), `changes_files` (the fix "
            "proposal would change files), or `off`"),
    Setting("INCIDENTIQ_SLA_HOURS", "critical=1,high=4,medium=24,low=72", "hours a reviewer has to decide, "
            "per severity, from the SLA base (INCIDENTIQ_SLA_FROM)"),
    Setting("INCIDENTIQ_SLA_FROM", "first_seen", "the SLA base: `first_seen` (the first error's time) or "
            "`opened` (when the incident was opened here; the demo's default, whose sample day is in the past)",
            demo="opened"),
    Setting("INCIDENTIQ_EXPIRE_AFTER_HOURS", "0", "hours past the SLA deadline (after escalation) before the "
            "poller expires an incident through the gate as `system`; `0` never expires", kind=float, bounds=(0.0, 8760.0)),
    Setting("INCIDENTIQ_NOTIFY_URLS", None, "comma-separated incoming-webhook URLs (Slack or Teams format) told "
            "of new critical incidents, escalations, expiries and decisions; a secret: only hosts are shown",
            secret=True),
)

_BY_NAME = {s.name: s for s in SETTINGS}


def raw(name: str) -> str | None:
    """The configured value of a non-secret setting (environment first, then default)."""
    setting = _BY_NAME[name]
    if setting.secret:
        raise KeyError(f"{name} is a secret; read it with secret()")
    value = os.environ.get(name)
    return value if value not in (None, "") else setting.default


def critical_services(source: str) -> tuple[str, ...]:
    """INCIDENTIQ_CRITICAL_SERVICES as lowered patterns; the demo's own list for the demo source."""
    setting = _BY_NAME["INCIDENTIQ_CRITICAL_SERVICES"]
    text = os.environ.get(setting.name)
    if text is None and source == "demo":
        # the sample day's business (a retail point of sale) is the demo's policy, not the engine's
        text = setting.demo
    return tuple(dict.fromkeys(p.strip().lower() for p in (text or setting.default or "").split(",") if p.strip()))


def secret(name: str) -> str | None:
    """A secret, read at the moment it is needed and never cached: the environment first, then
    `.streamlit/secrets.toml` (read as a file, so the poller thread never calls Streamlit)."""
    if not _BY_NAME[name].secret:
        raise KeyError(f"{name} is not a secret")
    value = os.environ.get(name)
    if value:
        return value
    return _secrets_file_value(name)


SECRETS_FILES = (Path(".streamlit") / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml")


def _secrets_file_value(name: str) -> str | None:
    for path in SECRETS_FILES:
        try:
            with path.open("rb") as handle:
                value = tomllib.load(handle).get(name)
        except (FileNotFoundError, PermissionError, tomllib.TOMLDecodeError):
            continue
        if isinstance(value, str) and value:
            return value
    return None


PROJECT_ROOT = Path(__file__).resolve().parent.parent


def number(name: str) -> float | int:
    """A numeric setting within its declared finite range, or a one-line UsageError naming it
    (`inf`, `nan`, `1e300` and huge integers are refused here, not by an OverflowError later)."""
    from pipeline.errors import UsageError

    setting = _BY_NAME[name]
    kind, (low, high) = setting.kind, setting.bounds
    text = raw(name)
    try:
        value = kind(text)
    except (TypeError, ValueError, OverflowError):
        raise UsageError(f"{name} must be a {'whole number' if kind is int else 'number'} "
                         f"between {_plain(low)} and {_plain(high)}, got {_shown(text)}") from None
    if not (math.isfinite(value) and low <= value <= high):
        raise UsageError(f"{name} must be between {_plain(low)} and {_plain(high)}, got {_shown(text)}")
    return value


def _plain(bound: float) -> str:
    return f"{bound:g}" if bound < 1e6 else str(int(bound))


def _shown(text: str | None) -> str:
    shown = repr(text)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _choice(name: str, choices: tuple[str, ...]) -> str:
    from pipeline.errors import UsageError

    value = raw(name)
    if value not in choices:
        raise UsageError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _log_reading() -> dict:
    """INCIDENTIQ_LOG_FORMAT, _LOG_PATTERN and _SOURCE_TZ, checked here so a bad one fails at start."""
    import re
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from pipeline.errors import UsageError
    from pipeline.ingest.formats import FORMATS

    fmt = _choice("INCIDENTIQ_LOG_FORMAT", ("auto", *FORMATS))
    pattern = raw("INCIDENTIQ_LOG_PATTERN")
    if pattern is not None:
        try:
            groups = re.compile(pattern).groupindex
        except re.error as exc:
            raise UsageError(f"INCIDENTIQ_LOG_PATTERN is not a valid regex: {exc}") from None
        if "message" not in groups:
            raise UsageError("INCIDENTIQ_LOG_PATTERN needs a named group 'message', e.g. (?P<message>.*)")
    elif fmt == "custom":
        raise UsageError("INCIDENTIQ_LOG_FORMAT=custom needs INCIDENTIQ_LOG_PATTERN")
    tz = raw("INCIDENTIQ_SOURCE_TZ").strip()
    if tz.upper() not in ("UTC", "Z"):
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"INCIDENTIQ_SOURCE_TZ must be an IANA time zone such as Europe/Berlin, got {tz!r}") from None
    return {"log_format": None if fmt == "auto" else fmt, "log_pattern": pattern, "source_tz": tz}


def _optional_path(name: str) -> Path | None:
    text = raw(name)
    return Path(text).expanduser() if text else None


def _optional_choice(name: str, choices: tuple[str, ...]) -> str | None:
    from pipeline.errors import UsageError

    value = raw(name)
    if value is not None and value not in choices:
        raise UsageError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _demo_aware_choice(name: str, choices: tuple[str, ...], source: str) -> str:
    from pipeline.errors import UsageError

    setting = _BY_NAME[name]
    value = os.environ.get(name) or (setting.demo if source == "demo" and setting.demo else setting.default)
    if value not in choices:
        raise UsageError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


TWO_PERSON_RULES = ("critical", "high", "changes_files")


def _two_person() -> tuple[str, ...]:
    from pipeline.errors import UsageError

    text = raw("INCIDENTIQ_TWO_PERSON") or ""
    rules = tuple(dict.fromkeys(r.strip().lower() for r in text.split(",") if r.strip()))
    if rules in ((), ("off",)):
        return ()
    unknown = [r for r in rules if r not in TWO_PERSON_RULES]
    if unknown:
        raise UsageError(f"INCIDENTIQ_TWO_PERSON: unknown rule {unknown[0]!r}; use "
                         f"{', '.join(TWO_PERSON_RULES)} or off")
    return rules


SLA_MAX_HOURS = 24 * 365 * 10


def _embeddings() -> str:
    """INCIDENTIQ_EMBEDDINGS, refused at start when it is neither `offline` nor `openai:MODEL`."""
    from pipeline.errors import UsageError

    value = (raw("INCIDENTIQ_EMBEDDINGS") or "").strip()
    if value == "offline" or (value.startswith("openai:") and value.split(":", 1)[1].strip()):
        return value
    raise UsageError(f"INCIDENTIQ_EMBEDDINGS must be 'offline' or 'openai:MODEL', got {_shown(value)}")


def _check_verify_tls() -> None:
    """SPLUNK_VERIFY_TLS is true, false or a CA bundle file; anything else (`maybe`) is refused at start."""
    from pipeline.errors import UsageError

    text = (raw("SPLUNK_VERIFY_TLS") or "").strip()
    if text.lower() in ("true", "1", "yes", "on", "false", "0", "no", "off") or Path(text).is_file():
        return
    raise UsageError(f"SPLUNK_VERIFY_TLS must be true, false or a CA bundle file, got {_shown(text)}")


def within(name: str, value: float, *, what: str) -> float:
    """`value` (a command-line option standing for setting `name`) within that setting's range."""
    from pipeline.errors import UsageError

    low, high = _BY_NAME[name].bounds
    if not (math.isfinite(value) and low <= value <= high):
        raise UsageError(f"{what} must be between {_plain(low)} and {_plain(high)}, got {value!r}")
    return value


def _sla_hours() -> tuple[tuple[str, float], ...]:
    """INCIDENTIQ_SLA_HOURS as (severity, hours) for every severity; unnamed ones keep their default."""
    from pipeline.errors import UsageError

    text = raw("INCIDENTIQ_SLA_HOURS") or ""
    hours = dict(pair.split("=") for pair in _BY_NAME["INCIDENTIQ_SLA_HOURS"].default.split(","))
    for pair in (p.strip() for p in text.split(",") if p.strip()):
        severity, sep, value = pair.partition("=")
        severity = severity.strip().lower()
        if not sep or severity not in hours:
            raise UsageError(f"INCIDENTIQ_SLA_HOURS: expected SEVERITY=HOURS with a severity of "
                             f"{', '.join(hours)}, got {pair!r}")
        hours[severity] = value.strip()
    out = []
    for severity, value in hours.items():
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        # finite and at most ten years: `inf` made every incident of that severity fail its run
        if not (math.isfinite(number) and 0 < number <= SLA_MAX_HOURS):
            raise UsageError(f"INCIDENTIQ_SLA_HOURS: {severity} must be a positive number of hours"
                             f" up to {SLA_MAX_HOURS}, got {value!r}")
        out.append((severity, number))
    return tuple(out)


def _project_path(text: str) -> Path:
    """A relative path from the working directory, or else from the project (for the defaults)."""
    path = Path(text)
    if path.is_absolute() or path.exists():
        return path
    return PROJECT_ROOT / path


@dataclass(frozen=True)
class Settings:
    """A snapshot of the non-secret settings; build with `Settings.from_env()`."""

    data_dir: Path
    source: str
    model: str | None
    base_url: str | None
    embeddings: str
    splunk_url: str | None
    splunk_query: str
    code_fix_min_confidence: float
    reopen_minutes: float
    max_event_bytes: int
    poll_interval: float
    demo_speed: float
    repo_dir: Path
    merge_delay: float = 30.0
    retention_days: float = 30.0
    model_timeout: float = 30.0
    model_output: str = "json_schema"
    model_breaker_failures: int = 3
    model_breaker_seconds: float = 60.0
    critical_services: tuple[str, ...] = ()
    log_format: str | None = None  # None: detected per file
    log_pattern: str | None = None
    source_tz: str = "UTC"
    open_level: str = "ERROR"
    open_signatures: bool = True
    auth: str = "demo"
    roles_claim: str = "roles"
    roles_file: Path | None = None
    default_role: str | None = None
    tokens_file: Path | None = None
    two_person: tuple[str, ...] = ("critical", "changes_files")
    sla_hours: tuple[tuple[str, float], ...] = (("critical", 1.0), ("high", 4.0), ("medium", 24.0), ("low", 72.0))
    sla_from: str = "first_seen"
    expire_after_hours: float = 0.0
    database_url: str | None = None  # None: SQLite files in data_dir
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        for setting in SETTINGS:  # every numeric setting, read here or by a source later
            if setting.bounds is not None:
                number(setting.name)
        _check_verify_tls()
        values = dict(
            data_dir=Path(raw("INCIDENTIQ_DATA_DIR")),
            source=raw("INCIDENTIQ_SOURCE"),
            model=raw("INCIDENTIQ_MODEL"),
            base_url=raw("OPENAI_BASE_URL"),
            model_timeout=number("INCIDENTIQ_MODEL_TIMEOUT"),
            model_output=_choice("INCIDENTIQ_MODEL_OUTPUT", ("json_schema", "function_calling")),
            model_breaker_failures=number("INCIDENTIQ_MODEL_BREAKER_FAILURES"),
            model_breaker_seconds=number("INCIDENTIQ_MODEL_BREAKER_SECONDS"),
            embeddings=_embeddings(),
            splunk_url=raw("SPLUNK_URL"),
            splunk_query=raw("SPLUNK_QUERY"),
            code_fix_min_confidence=number("CODE_FIX_MIN_CONFIDENCE"),
            reopen_minutes=number("INCIDENTIQ_REOPEN_MINUTES"),
            max_event_bytes=number("INCIDENTIQ_MAX_EVENT_BYTES"),
            poll_interval=number("INCIDENTIQ_POLL_INTERVAL"),
            merge_delay=number("INCIDENTIQ_MERGE_DELAY"),
            retention_days=number("INCIDENTIQ_RETENTION_DAYS"),
            demo_speed=number("INCIDENTIQ_DEMO_SPEED"),
            repo_dir=_project_path(raw("INCIDENTIQ_REPO_DIR")),
            open_level=_choice("INCIDENTIQ_OPEN_LEVEL", ("WARN", "ERROR", "FATAL")),
            open_signatures=_choice("INCIDENTIQ_OPEN_SIGNATURES", ("on", "off")) == "on",
            **_log_reading(),
        )
        values["critical_services"] = critical_services(overrides.get("source", values["source"]))
        values.update(
            auth=_choice("INCIDENTIQ_AUTH", ("demo", "oidc")),
            roles_claim=raw("INCIDENTIQ_ROLES_CLAIM"),
            roles_file=_optional_path("INCIDENTIQ_ROLES_FILE"),
            default_role=_optional_choice("INCIDENTIQ_DEFAULT_ROLE", ("viewer", "reviewer", "admin")),
            tokens_file=_optional_path("INCIDENTIQ_TOKENS_FILE"),
            two_person=_two_person(),
            sla_hours=_sla_hours(),
            sla_from=_demo_aware_choice("INCIDENTIQ_SLA_FROM", ("first_seen", "opened"),
                                        overrides.get("source", values["source"])),
            expire_after_hours=number("INCIDENTIQ_EXPIRE_AFTER_HOURS"),
            database_url=raw("INCIDENTIQ_DATABASE_URL"),
        )
        values.update(overrides)
        return cls(**values)

    @property
    def sla(self) -> dict[str, float]:
        """Hours to decide, per severity."""
        return dict(self.sla_hours)

    @property
    def role_for_unknown(self) -> str:
        """The role of a person no claim or mapping names (INCIDENTIQ_DEFAULT_ROLE)."""
        if self.default_role:
            return self.default_role
        return "admin" if self.auth == "demo" and self.roles_file is None else "viewer"

    @property
    def uses_model(self) -> bool:
        """True when an OpenAI-compatible chat model is configured."""
        return bool(self.model and (secret("OPENAI_API_KEY") or self.base_url))
