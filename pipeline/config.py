"""Settings, each declared once with its default and help text (CONTRACT §6).

Secrets (API keys, tokens) are read when needed through `secret()` and are never
stored on the Settings object, so they cannot leak into checkpoints, records or logs.
"""
from __future__ import annotations

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
    demo: str | None = None  # the value when INCIDENTIQ_SOURCE=demo and the setting is unset


SETTINGS: tuple[Setting, ...] = (
    Setting("INCIDENTIQ_DATA_DIR", "./data", "checkpoints, records, knowledge index"),
    Setting("INCIDENTIQ_SOURCE", "demo", "`demo` (bundled sample stream), `file:PATH`, or `splunk`"),
    Setting("OPENAI_API_KEY", None, "key for an OpenAI-compatible endpoint; unset = offline analyzer", secret=True),
    Setting("OPENAI_BASE_URL", None, "base URL of an OpenAI-compatible endpoint"),
    Setting("INCIDENTIQ_MODEL", None, "chat model name for the analyst (e.g. gpt-4o-mini)"),
    Setting("INCIDENTIQ_MODEL_TIMEOUT", "30", "seconds before a model or embeddings request times out (then 2 retries)"),
    Setting("INCIDENTIQ_MODEL_OUTPUT", "json_schema", "how the model returns structured answers: `json_schema` or `function_calling`"),
    Setting("INCIDENTIQ_EMBEDDINGS", "offline", "`offline` (hashed n-grams, no download) or `openai:MODEL`"),
    Setting("SPLUNK_URL", None, "Splunk management URL, e.g. https://splunk:8089"),
    Setting("SPLUNK_TOKEN", None, "Splunk bearer token", secret=True),
    Setting("SPLUNK_QUERY", "search index=main log_level=ERROR", "Splunk search for error events"),
    Setting("SPLUNK_VERIFY_TLS", "true", "`true`, `false` (self-signed management port), or the path of a CA bundle"),
    Setting("SPLUNK_OVERLAP_SECONDS", "300", "each Splunk window re-reads this much of the previous one, for late-indexed events"),
    Setting("SPLUNK_LOOKBACK_SECONDS", "900", "how far back the first Splunk poll reads"),
    Setting("INCIDENTIQ_CRITICAL_SERVICES", "", "comma-separated names or glob patterns of services whose "
            "incidents are raised one severity step (from high); each pattern is matched against the whole "
            "service name and each of its `-`/`_`/`.`-separated words, never a substring: `pos` matches "
            "`pos-api`, not `postgres-primary`",
            demo="checkout*,payment*,order*,pos,register*"),
    Setting("CODE_FIX_MIN_CONFIDENCE", "0.5", "router threshold for code_fix eligibility"),
    Setting("INCIDENTIQ_REOPEN_MINUTES", "30", "minutes after close before a matching event opens a new incident"),
    Setting("INCIDENTIQ_MAX_EVENT_BYTES", "262144", "largest accepted log line in bytes; larger lines are dead-lettered"),
    Setting("INCIDENTIQ_POLL_INTERVAL", "2", "seconds between polls of the log source"),
    Setting("INCIDENTIQ_MERGE_DELAY", "30", "poller: seconds new evidence for an incident awaiting approval gathers "
            "before its analysis re-runs (`ingest` merges at once)"),
    Setting("INCIDENTIQ_DEMO_SPEED", "600", "demo source: how many times faster than real time the sample day replays"),
    Setting("INCIDENTIQ_REPO_DIR", "./samples/pos-backend", "read-only source tree code_fix proposes diffs against"),
    Setting("INCIDENTIQ_RETENTION_DAYS", "30", "days after its decision before an incident's history is compacted "
            "(`prune`, and the poller hourly): its record, audit, fix and the checkpoints of the gate and the end stay"),
    Setting("INCIDENTIQ_POLLER", "on", "web app: `on` runs the source's poller in a background thread; `off` only "
            "shows what is in the data dir (tests, or when `python -m pipeline poll` runs elsewhere)"),
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


def _number(name: str, kind: type, *, minimum: float | None = None, maximum: float | None = None):
    """A numeric setting, or a clear UsageError naming the setting."""
    from pipeline.errors import UsageError

    text = raw(name)
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be a {'whole number' if kind is int else 'number'}, got {text!r}") from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise UsageError(f"{name} must be {bounds}, got {text!r}")
    return value


def _choice(name: str, choices: tuple[str, ...]) -> str:
    from pipeline.errors import UsageError

    value = raw(name)
    if value not in choices:
        raise UsageError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


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
    critical_services: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        values = dict(
            data_dir=Path(raw("INCIDENTIQ_DATA_DIR")),
            source=raw("INCIDENTIQ_SOURCE"),
            model=raw("INCIDENTIQ_MODEL"),
            base_url=raw("OPENAI_BASE_URL"),
            model_timeout=_number("INCIDENTIQ_MODEL_TIMEOUT", float, minimum=0.1),
            model_output=_choice("INCIDENTIQ_MODEL_OUTPUT", ("json_schema", "function_calling")),
            embeddings=raw("INCIDENTIQ_EMBEDDINGS"),
            splunk_url=raw("SPLUNK_URL"),
            splunk_query=raw("SPLUNK_QUERY"),
            code_fix_min_confidence=_number("CODE_FIX_MIN_CONFIDENCE", float, minimum=0.0, maximum=1.0),
            reopen_minutes=_number("INCIDENTIQ_REOPEN_MINUTES", float, minimum=0.0),
            max_event_bytes=_number("INCIDENTIQ_MAX_EVENT_BYTES", int, minimum=1024),
            poll_interval=_number("INCIDENTIQ_POLL_INTERVAL", float, minimum=0.05),
            merge_delay=_number("INCIDENTIQ_MERGE_DELAY", float, minimum=0.0),
            retention_days=_number("INCIDENTIQ_RETENTION_DAYS", float, minimum=0.0),
            demo_speed=_number("INCIDENTIQ_DEMO_SPEED", float, minimum=0.001),
            repo_dir=_project_path(raw("INCIDENTIQ_REPO_DIR")),
        )
        values["critical_services"] = critical_services(overrides.get("source", values["source"]))
        values.update(overrides)
        return cls(**values)

    @property
    def uses_model(self) -> bool:
        """True when an OpenAI-compatible chat model is configured."""
        return bool(self.model and (secret("OPENAI_API_KEY") or self.base_url))
