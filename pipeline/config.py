"""Settings, each declared once (CONTRACT §6): its environment name, type, default, bounds or
choices and help text sit in one `setting(...)` on the `Settings` field it fills (or, for a
setting read where it is used, in `READ_WHERE_USED`). `Settings` is a pydantic-settings model:
`setting(...)` is the field's pydantic Field (default, description, range), and its one settings
source reads every declared setting from the environment by that declaration (`Settings()` and
`Settings.from_env()` are the same). The settings tables of docs/REFERENCE.md and
docs/CONTRACT.md are generated from the declarations (`python -m pipeline settings --markdown`;
tests/test_docs.py fails when they differ).
`Settings.from_texts` reads the same declarations from a mapping (a settings file) instead of the
environment, which it leaves alone.

A value a setting cannot use is refused with one line naming it: out of range, not one of its
choices, over `MAX_SETTING_CHARS`, a path the file system cannot look at, a database URL that is
not PostgreSQL's, a webhook that is not http(s), a header token that is not printable ASCII.

Secrets (API keys, tokens, webhook URLs) are read when needed through `secret()` (checked, never
shown) and are never stored on the Settings object, so they cannot leak into checkpoints,
records or logs.
"""
from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict


MAX_SETTING_CHARS = 8192  # twice PATH_MAX: room for a long Splunk query or regex, none for a pasted file


@dataclass(frozen=True)
class Setting:
    name: str
    default: str | None
    help: str
    secret: bool = False
    kind: type | None = None  # int or float for a numeric setting...
    bounds: tuple[float, float] | None = None  # ...and its inclusive, finite range
    demo: str | None = None  # the value when INCIDENTIQ_SOURCE=demo and the setting is unset
    choices: tuple[str, ...] | None = None  # the only values accepted (a bool: its true one first)
    parse: Callable[[str | None], Any] | None = None  # the text (None: unset) to the value
    set_if_empty: bool = False  # set to empty counts as set (not as unset: the default)
    attr: str | None = None  # the Settings field it fills (None: read where it is used)

    def text(self, source: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
        """The configured text: the environment (or `environ`), else the demo's value for the demo
        source, else the default."""
        value = (os.environ if environ is None else environ).get(self.name)
        if value is not None and (value != "" or self.set_if_empty):
            return value
        if self.demo is not None and source == "demo":
            return self.demo
        return self.default

    def value(self, source: str | None = None, environ: Mapping[str, str] | None = None) -> Any:
        """The configured value, checked: a bad one is a one-line UsageError naming the setting."""
        return self.convert(self.text(source, environ))

    def spelled(self, value: object) -> str:
        """A value from a settings file (TOML) as the environment would spell it: `true` for an
        on/off setting is `on`."""
        if isinstance(value, bool):
            if self.kind is bool and self.choices:
                return self.choices[0 if value else 1]
            return str(value).lower()
        return str(value)

    def convert(self, text: str | None) -> Any:
        """`text` as this setting's value, checked."""
        if text is not None and len(text) > MAX_SETTING_CHARS:  # no path, zone or URL is this long
            from pipeline.errors import UsageError

            raise UsageError(f"{self.name} is {len(text)} characters long; at most {MAX_SETTING_CHARS}")
        if self.bounds is not None:
            return _number(self, text)
        if self.choices is not None and text is not None and text not in self.choices:
            from pipeline.errors import UsageError

            raise UsageError(f"{self.name} must be one of {', '.join(self.choices)}, got {_shown(text)}")
        if self.kind is bool:
            return text == self.choices[0] if self.choices else text
        try:
            return self.parse(text) if self.parse is not None else text
        except OSError as exc:  # a path the file system refuses to look at (a name too long)
            raise _usage(f"{self.name} is not a usable path: {exc.strerror}") from None


_DECLARED: dict[str, Setting] = {}  # environment name -> declaration, filled by setting()


def setting(name: str, default: str | None, help: str, **declared: Any) -> Any:
    """A Settings field read from the environment variable `name` (see Setting for the rest): a
    pydantic Field whose default is the declared default parsed as the environment's text would be,
    whose description is the help and whose bounds are the declared range."""
    decl = _DECLARED[name] = Setting(name, default, help, **declared)
    low, high = decl.bounds or (None, None)
    return Field(default_factory=lambda: decl.convert(decl.default), description=help, ge=low, le=high,
                 json_schema_extra={"env": name})


def _number(setting: Setting, text: str | None) -> float | int:
    """A numeric setting within its declared finite range, or a one-line UsageError naming it
    (`inf`, `nan`, `1e300` and huge integers are refused here, not by an OverflowError later)."""
    from pipeline.errors import UsageError

    kind, name = setting.kind or float, setting.name
    assert setting.bounds is not None
    low, high = setting.bounds
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


def _usage(message: str) -> Exception:
    from pipeline.errors import UsageError

    return UsageError(message)


# -- parsers of the settings whose text is more than one value -----------------------------------

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _path(text: str | None) -> Path:
    path = Path(text or "")
    path.exists()  # a name too long for the file system: an OSError, refused by Setting.convert
    return path


def _project_path(text: str | None) -> Path:
    """A relative path from the working directory, or else from the project (for the defaults)."""
    path = _path(text)
    if path.is_absolute() or path.exists():
        return path
    return PROJECT_ROOT / path


def _optional_path(text: str | None) -> Path | None:
    return _path(text).expanduser() if text else None


def _patterns(text: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.strip().lower() for p in (text or "").split(",") if p.strip()))


def _embeddings(text: str | None) -> str:
    if text == "offline" or (text or "").startswith("openai:") and (text or "").split(":", 1)[1].strip():
        return text or "offline"
    raise _usage(f"INCIDENTIQ_EMBEDDINGS must be 'offline' or 'openai:MODEL', got {_shown(text)}")


def _log_format(text: str | None) -> str | None:
    from pipeline.ingest.formats import FORMATS  # the formats are the reader's; checked here so a bad one fails at start

    choices = ("auto", *FORMATS)
    if text not in choices:
        raise _usage(f"INCIDENTIQ_LOG_FORMAT must be one of {', '.join(choices)}, got {_shown(text)}")
    return None if text == "auto" else text


def _log_pattern(text: str | None) -> str | None:
    import re

    if text is None:
        return None
    try:
        groups = re.compile(text).groupindex
    except re.error as exc:
        raise _usage(f"INCIDENTIQ_LOG_PATTERN is not a valid regex: {exc}") from None
    if "message" not in groups:
        raise _usage("INCIDENTIQ_LOG_PATTERN needs a named group 'message', e.g. (?P<message>.*)")
    return text


def _time_zone(text: str | None) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    tz = (text or "UTC").strip()
    if tz.upper() not in ("UTC", "Z"):
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name too long for a file
            raise _usage(f"INCIDENTIQ_SOURCE_TZ must be an IANA time zone such as Europe/Berlin, got {_shown(tz)}") from None
    return tz


TWO_PERSON_RULES = ("critical", "high", "changes_files")


def _two_person(text: str | None) -> tuple[str, ...]:
    rules = tuple(dict.fromkeys(r.strip().lower() for r in (text or "").split(",") if r.strip()))
    if rules in ((), ("off",)):
        return ()
    unknown = [r for r in rules if r not in TWO_PERSON_RULES]
    if unknown:
        raise _usage(f"INCIDENTIQ_TWO_PERSON: unknown rule {unknown[0]!r}; use {', '.join(TWO_PERSON_RULES)} or off")
    return rules


def _database_url(text: str | None) -> str | None:
    """INCIDENTIQ_DATABASE_URL: a PostgreSQL URL, or unset for SQLite files in the data dir. Anything
    else (`mysql://`, `POSTGRESQL://`, `postgresql+psycopg://`, a leading space) is refused: read as a
    file name it would create a SQLite store where the user named another. The URL holds a password,
    so only its scheme is shown."""
    from urllib.parse import urlsplit

    if text is None:
        return None
    scheme = text.partition("://")[0] if "://" in text else None
    if scheme not in ("postgresql", "postgres"):
        got = f"scheme {_shown(scheme)}" if scheme is not None else "no scheme"
        raise _usage(f"INCIDENTIQ_DATABASE_URL must be a postgresql:// URL (unset: SQLite in the data dir), got {got}")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise _usage("INCIDENTIQ_DATABASE_URL is not a valid URL (its port or host cannot be read)") from None
    if any(c.isspace() for c in text):
        raise _usage("INCIDENTIQ_DATABASE_URL holds a space or line break")
    return text


def _header_token(name: str) -> Callable[[str | None], str | None]:
    """A secret sent in an HTTP header: printable ASCII only (a pasted non-breaking space otherwise
    fails every request deep inside the HTTP client). The message names the position, never the value."""
    def check(text: str | None) -> str | None:
        bad = next((i for i, c in enumerate(text or "") if not "!" <= c <= "~"), None)
        if bad is not None:
            raise _usage(f"{name} holds a space, line break or non-ASCII character at position {bad + 1} "
                         "(pasted with the token?)")
        return text
    return check


def notify_urls(text: str | None) -> list[str]:
    """INCIDENTIQ_NOTIFY_URLS as its http(s) URLs; another scheme (`file:`) or a URL without a host is
    refused. A webhook URL is a secret: the message names the entry's position only."""
    from urllib.parse import urlsplit

    urls = [u.strip() for u in (text or "").split(",") if u.strip()]
    for position, url in enumerate(urls, 1):
        try:
            parts = urlsplit(url)
            usable = parts.scheme in ("http", "https") and bool(parts.hostname)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            usable = False
        if not usable:
            raise _usage(f"INCIDENTIQ_NOTIFY_URLS: entry {position} is not an http(s) URL")
    return urls


SLA_DEFAULT = "critical=1,high=4,medium=24,low=72"
SLA_MAX_HOURS = 24 * 365 * 10


def _verify_tls(text: str | None) -> str:
    """SPLUNK_VERIFY_TLS: true, false or a CA bundle file; anything else (`maybe`) is refused at start."""
    value = (text or "").strip()
    if value.lower() in ("true", "1", "yes", "on", "false", "0", "no", "off") or Path(value).is_file():
        return value
    raise _usage(f"SPLUNK_VERIFY_TLS must be true, false or a CA bundle file, got {_shown(value)}")


def _sla_hours(text: str | None) -> tuple[tuple[str, float], ...]:
    """INCIDENTIQ_SLA_HOURS as (severity, hours) for every severity; unnamed ones keep their default."""
    hours = dict(pair.split("=") for pair in SLA_DEFAULT.split(","))
    for pair in (p.strip() for p in (text or "").split(",") if p.strip()):
        severity, sep, value = pair.partition("=")
        severity = severity.strip().lower()
        if not sep or severity not in hours:
            raise _usage(f"INCIDENTIQ_SLA_HOURS: expected SEVERITY=HOURS with a severity of "
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
            raise _usage(f"INCIDENTIQ_SLA_HOURS: {severity} must be a positive number of hours"
                         f" up to {SLA_MAX_HOURS}, got {value!r}")
        out.append((severity, number))
    return tuple(out)


# -- the declaration ------------------------------------------------------------------------------

_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("settings_environ", default=None)


class _Declared(PydanticBaseSettingsSource):
    """The declared settings' values from the environment (or from `Settings.from_texts`'s mapping),
    each read and checked by its own declaration: a bad one is a one-line UsageError naming it, the
    demo source's own defaults apply, and an empty value counts as unset unless declared otherwise."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads every field at once

    def __call__(self) -> dict[str, Any]:
        environ, given = _ENVIRON.get(), self.current_state  # given: the keyword arguments
        source = given.get("source", SETTING_OF["source"].value(None, environ))
        for declared in READ_WHERE_USED:  # settings read later (by a source) are checked at start too
            if declared.secret:
                secret(declared.name)  # checked, not kept
            elif declared.bounds is not None or declared.parse is not None or declared.choices is not None:
                declared.value(source, environ)
        return {attr: declared.value(source, environ) for attr, declared in SETTING_OF.items() if attr not in given}


class Settings(BaseSettings):
    """A snapshot of the non-secret settings (pydantic-settings): `Settings()` or `Settings.from_env()`
    reads them from the environment, keyword arguments override. Each field is one setting, declared
    here once by `setting(...)`; the docs' tables are generated from these declarations. Frozen:
    a changed copy is `settings.model_copy(update={...})`."""

    model_config = SettingsConfigDict(frozen=True, extra="forbid")

    data_dir: Path = setting("INCIDENTIQ_DATA_DIR", "./data", "checkpoints, records, knowledge index", parse=_path)
    database_url: str | None = setting(
        "INCIDENTIQ_DATABASE_URL", None,
        "`postgresql://user:password@host:5432/db` (add `?options=-csearch_path%3Dname` for a schema of its own): "
        "checkpoints and records in PostgreSQL, shared by workbench and poller processes on many machines (one "
        "poller works the incidents at a time, each source is leased to one of them; the knowledge index stays in the "
        "data dir); unset = SQLite files in the data dir. "
        "Any other URL is refused. Its password is masked wherever text is shown or stored", parse=_database_url)
    source: str = setting("INCIDENTIQ_SOURCE", "demo", "`demo` (bundled sample stream), `file:PATH`, or `splunk`; "
                          "several sources separated by `;` (e.g. `file:/var/log/a;file:/var/log/b`), each with its "
                          "own cursor, shared among the pollers on PostgreSQL")
    source_lease: float = setting("INCIDENTIQ_SOURCE_LEASE_SECONDS", "30", "PostgreSQL, several pollers: seconds a "
                                  "poller holds a source without renewing it (it renews every third of this); a killed "
                                  "poller's sources move to the others within it (at once when it ran on the same host)",
                                  bounds=(1, 3600))
    poll_interval: float = setting("INCIDENTIQ_POLL_INTERVAL", "2", "seconds between polls of the log source",
                                   bounds=(0.05, 3600))
    poll_batch_lines: int = setting("INCIDENTIQ_POLL_BATCH_LINES", "100", "poller: most lines read from the "
                                    "source at a time; the runs of the incidents a batch opens start before the "
                                    "next batch is read", kind=int, bounds=(1, 100000))
    settle_seconds: float = setting("INCIDENTIQ_SETTLE_SECONDS", "30", "poller: lines read are decided (stored, "
                                    "opening and joining incidents) once their burst has settled: the log went "
                                    "quiet this many seconds (of log time, or of the poller's clock when nothing new "
                                    "comes), or after 4x this long, or 500 lines; a log read a few lines at a time "
                                    "opens the incidents it opens read whole (0: each batch decided as read)",
                                    bounds=(0, 3600))
    poll_max_lines: int = setting("INCIDENTIQ_POLL_MAX_LINES", "10000", "poller: most lines read in one poll; "
                                  "then the rest of its due work (merges, retries, revisions) runs, and the next "
                                  "poll starts at once", kind=int, bounds=(1, 10000000))
    merge_delay: float = setting("INCIDENTIQ_MERGE_DELAY", "30", "poller: seconds new evidence for an incident "
                                 "awaiting approval gathers before its analysis re-runs (`ingest` merges at once)",
                                 bounds=(0, 86400))
    reanalyse_growth: float = setting("INCIDENTIQ_REANALYSE_GROWTH", "10", "poller: new evidence for an "
                                      "incident awaiting approval that only repeats what its analysis holds "
                                      "(service, exception and masked first line of its events) is counted "
                                      "without re-running the analysis (the reviewer's pending approval stays "
                                      "valid) until the incident has this many times the events the analysis "
                                      "covered; new templates re-run it after the merge delay (1: every new event "
                                      "re-runs it)", bounds=(1, 1000000))
    demo_speed: float = setting("INCIDENTIQ_DEMO_SPEED", "600", "demo source: how many times faster than real "
                                "time the sample day replays", bounds=(0.001, 1000000))
    base_url: str | None = setting("OPENAI_BASE_URL", None, "base URL of an OpenAI-compatible endpoint")
    model: str | None = setting("INCIDENTIQ_MODEL", None, "chat model name for the analyst (e.g. `gpt-4o-mini`); "
                                "unset = offline analyzer")
    model_timeout: float = setting("INCIDENTIQ_MODEL_TIMEOUT", "30", "seconds before a model or embeddings "
                                   "request times out (then 2 retries)", bounds=(0.1, 600))
    model_breaker_failures: int = setting(
        "INCIDENTIQ_MODEL_BREAKER_FAILURES", "3", "consecutive failed model calls after which the analyst skips "
        "the model (and analyses offline, labelled) for `INCIDENTIQ_MODEL_BREAKER_SECONDS`", kind=int,
        bounds=(1, 1000))
    model_breaker_seconds: float = setting("INCIDENTIQ_MODEL_BREAKER_SECONDS", "60", "seconds the model is "
                                           "skipped once the breaker opens; then it is tried again", bounds=(0, 86400))
    model_output: str = setting("INCIDENTIQ_MODEL_OUTPUT", "json_schema", "how the model returns structured "
                                "answers: `json_schema` or `function_calling`",
                                choices=("json_schema", "function_calling"))
    embeddings: str = setting("INCIDENTIQ_EMBEDDINGS", "offline", "`offline` (hashed n-grams with WordLlama's meaning vector from its wheel, no download; the n-grams alone when the model cannot load) or "
                              "`openai:MODEL`", parse=_embeddings)
    splunk_url: str | None = setting("SPLUNK_URL", None, "Splunk management URL, e.g. `https://splunk:8089`")
    splunk_query: str = setting("SPLUNK_QUERY", "search index=main log_level=ERROR", "Splunk search for error events")
    critical_services: tuple[str, ...] = setting(
        "INCIDENTIQ_CRITICAL_SERVICES", "", "comma-separated service names or glob patterns whose incidents are "
        "raised one severity step (from high); matched against the whole service name and each of its "
        "`-`/`_`/`.`-separated words, never a substring: `pos` matches `pos-api`, not `postgres-primary`. Set it "
        "(even to empty) to override the demo's list", demo="checkout*,payment*,order*,pos,register*",
        set_if_empty=True, parse=_patterns)
    code_fix_min_confidence: float = setting("CODE_FIX_MIN_CONFIDENCE", "0.5", "router threshold for code_fix "
                                             "eligibility", bounds=(0, 1))
    reopen_minutes: float = setting("INCIDENTIQ_REOPEN_MINUTES", "30", "no longer used (accepted so older "
                                    "configurations start): a decided incident never takes new events, the next "
                                    "one opens a new incident linked to it", bounds=(0, 525600))
    burst_minutes: float = setting("INCIDENTIQ_BURST_MINUTES", "5", "minutes around an open incident's errors "
                                   "within which an error naming the same thing (host:port, URL, resource, trace "
                                   "id, exception chain, a service) joins it as one outage; 0: each pattern its "
                                   "own incident", bounds=(0, 1440))
    max_event_bytes: int = setting("INCIDENTIQ_MAX_EVENT_BYTES", "262144", "largest accepted log line in bytes; "
                                   "larger lines are dead-lettered", kind=int, bounds=(1024, 16777216))
    log_format: str | None = setting(
        "INCIDENTIQ_LOG_FORMAT", "auto", "how log lines are read: `auto` (a known format detected per file from "
        "its first 50 lines; when none reads 90% of them, the file's own layout learnt from its first 200), or one "
        "of `json`, `cri` (container logs), `logfmt`, `syslog`, `syslog5424`, `apache`, `nginx`, `log4j`, `glog`, `golog`, "
        "`bracket-time`, `logcat`, `learned` (always learn the layout), `text`, `custom` "
        "(`INCIDENTIQ_LOG_PATTERN`)", parse=_log_format)
    log_pattern: str | None = setting(
        "INCIDENTIQ_LOG_PATTERN", None, "your own line format, overriding a learnt layout: a regex with named "
        "groups `message` (required), `time`, `level`, `service` (or `component`), `host`, e.g. `(?P<time>\\S+) | (?P<level>\\w+) | (?P<message>.*)`; tried "
        "first on every line", parse=_log_pattern)
    source_tz: str = setting("INCIDENTIQ_SOURCE_TZ", "UTC", "time zone of log times written without an offset "
                             "(IANA name, e.g. `Europe/Berlin`)", parse=_time_zone)
    open_level: str = setting("INCIDENTIQ_OPEN_LEVEL", "ERROR", "lowest level that opens an incident: `WARN`, "
                              "`ERROR` or `FATAL`; lower levels are context for log windows",
                              choices=("WARN", "ERROR", "FATAL"))
    open_signatures: bool = setting(
        "INCIDENTIQ_OPEN_SIGNATURES", "on", "`on`: a line one level below that (a WARN, by default) that carries a "
        "known error signature of the knowledge base's docs joins its pattern's or its outage's open incident "
        "(it never opens one by itself); `off`: the level alone decides", kind=bool, choices=("on", "off"))
    retention_days: float = setting(
        "INCIDENTIQ_RETENTION_DAYS", "30", "days after its decision before an incident's history is compacted "
        "by `prune` (and the poller, hourly): its record, audit, fix and the checkpoints of the gate and the end "
        "stay (see Retention)", bounds=(0, 36500))
    repo_dir: Path = setting("INCIDENTIQ_REPO_DIR", "./samples/pos-backend", "read-only source tree code_fix "
                             "proposes diffs against", parse=_project_path)
    # -- who may decide (docs/CONTRACT.md §6) --
    auth: str = setting("INCIDENTIQ_AUTH", "demo", "sign-in: `demo` (a typed name, anyone may act as anyone) or "
                        "`oidc` (st.login; typed names refused). The web app uses `oidc` whenever `[auth]` is in "
                        "`.streamlit/secrets.toml` (see Signing in)", choices=("demo", "oidc"))
    roles_claim: str = setting("INCIDENTIQ_ROLES_CLAIM", "roles", "the ID-token claim whose values are roles "
                               "(`viewer`, `reviewer`, `admin`) or groups the roles file maps")
    roles_file: Path | None = setting(
        "INCIDENTIQ_ROLES_FILE", None, "TOML/JSON mapping of users, emails and `group:<name>` to `viewer`, "
        "`reviewer`, `admin` (`[roles]` table: `\"group:sre\" = \"admin\"`; an unknown role: exit 2)",
        parse=_optional_path)
    default_role: str | None = setting(
        "INCIDENTIQ_DEFAULT_ROLE", None, "the role of a person nobody maps; unset: `admin` with demo sign-in and "
        "no roles file (a typed name proves nothing, so a lower role would hide features without protecting "
        "them), else `viewer`", choices=("viewer", "reviewer", "admin"))
    tokens_file: Path | None = setting(
        "INCIDENTIQ_TOKENS_FILE", None, "TOML/JSON `[[tokens]]` with `name`, `sha256`, `role`, optional `user`, "
        "`expires`: only hashes, made by `python -m pipeline token`", parse=_optional_path)
    two_person: tuple[str, ...] = setting(
        "INCIDENTIQ_TWO_PERSON", "critical,changes_files", "approvals that need two distinct reviewers: "
        "comma-separated `critical` (severity critical), `high` (high or critical), `changes_files` (the fix "
        "proposal would change files), or `off`", parse=_two_person)
    sla_hours: tuple[tuple[str, float], ...] = setting(
        "INCIDENTIQ_SLA_HOURS", SLA_DEFAULT, "hours a reviewer has to decide, per severity, from the SLA base "
        "(`INCIDENTIQ_SLA_FROM`); unnamed severities keep their default", parse=_sla_hours)
    sla_from: str = setting(
        "INCIDENTIQ_SLA_FROM", "opened", "the SLA base: `opened` (when the incident was opened here) or "
        "`first_seen` (the first error's time); an incident whose log was past its SLA when opened is backfilled "
        "and counts from its opening either way", choices=("first_seen", "opened"))
    expire_after_hours: float = setting(
        "INCIDENTIQ_EXPIRE_AFTER_HOURS", "0", "hours after the SLA deadline (and escalation) before the poller "
        "expires the incident as `system`; `0` never", bounds=(0.0, 8760.0))
    extra: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword arguments, then the declarations read from the environment; no .env or secrets
        directory (secrets are read by `secret()` when needed and never kept here)."""
        return init_settings, _Declared(settings_cls)

    @model_validator(mode="after")
    def _custom_needs_a_pattern(self) -> Settings:
        if self.log_format == "custom" and self.log_pattern is None:
            raise _usage("INCIDENTIQ_LOG_FORMAT=custom needs INCIDENTIQ_LOG_PATTERN")
        return self

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        """Every declared setting from the environment, then `overrides`; a bad one is a UsageError naming it."""
        return cls(**overrides)

    @classmethod
    def from_texts(cls, environ: Mapping[str, str], **overrides: Any) -> Settings:
        """As `from_env`, reading `environ` (setting names to their text, as the environment holds
        them: a settings file's) instead of the environment, which is left alone."""
        token = _ENVIRON.set(environ)
        try:
            return cls(**overrides)
        finally:
            _ENVIRON.reset(token)

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


# settings that are not fields of Settings: secrets (read by `secret()` when needed, never stored)
# and the few read by the part that uses them
READ_WHERE_USED: tuple[Setting, ...] = (
    Setting("INCIDENTIQ_POLLER", "on", "web app: `on` runs the source's poller in a background thread; `off` "
            "only shows what is in the data dir (tests, or when `python -m pipeline poll` runs elsewhere)"),
    Setting("OPENAI_API_KEY", None, "key for an OpenAI-compatible endpoint; unset = offline analyzer", secret=True,
            parse=_header_token("OPENAI_API_KEY")),
    Setting("SPLUNK_TOKEN", None, "Splunk bearer token", secret=True, parse=_header_token("SPLUNK_TOKEN")),
    Setting("SPLUNK_VERIFY_TLS", "true", "`true`, `false` (self-signed management port), or the path of a CA bundle",
            parse=_verify_tls),
    Setting("SPLUNK_WINDOW_BY", "index", "what a Splunk window's times are: `index` (when Splunk indexed an event: "
            "an event indexed late is read by the window it was indexed in, and no window is read twice) or `event` "
            "(the event's own `_time`, windows overlapping by `SPLUNK_OVERLAP_SECONDS`)", choices=("index", "event")),
    Setting("SPLUNK_INDEX_DELAY_SECONDS", "10", "by index time: a window ends this long before now, so what Splunk "
            "indexed in it is searchable when it is read", kind=float, bounds=(0, 3600)),
    Setting("SPLUNK_LATE_EVENT_SECONDS", "86400", "by index time: how far an event's own time may lie from when "
            "Splunk indexed it (Splunk picks the buckets to search by event time, so wider costs the search more)",
            kind=float, bounds=(60, 31536000)),
    Setting("SPLUNK_OVERLAP_SECONDS", "300", "by event time: each Splunk window re-reads this much of the previous "
            "one, for late-indexed events", kind=float, bounds=(0, 86400)),
    Setting("SPLUNK_LOOKBACK_SECONDS", "900", "how far back the first Splunk poll reads", kind=float,
            bounds=(0, 2592000)),
    Setting("INCIDENTIQ_TOKEN", None, "the CLI's API token (or `--token`); checked against the tokens file",
            secret=True),
    Setting("INCIDENTIQ_NOTIFY_URLS", None, "comma-separated Slack/Teams incoming-webhook URLs told of new "
            "critical incidents, escalations, expiries and decisions (http or https only); only hosts are shown", secret=True,
            parse=notify_urls),
)


def _declared_fields() -> dict[str, Setting]:
    out = {}
    for attr, info in Settings.model_fields.items():
        extra = info.json_schema_extra
        if not isinstance(extra, dict) or "env" not in extra:
            continue
        declared = _DECLARED[str(extra["env"])]
        if declared.bounds is not None and declared.kind is None:
            declared = dataclasses.replace(declared, kind=int if info.annotation is int else float)
        out[attr] = dataclasses.replace(declared, attr=attr)
    return out


SETTING_OF: dict[str, Setting] = _declared_fields()  # Settings field -> its declaration
SETTINGS: tuple[Setting, ...] = (*SETTING_OF.values(), *READ_WHERE_USED)
_BY_NAME = {s.name: s for s in SETTINGS}


def raw(name: str) -> str | None:
    """The configured value of a non-secret setting (environment first, then default)."""
    declared = _BY_NAME[name]
    if declared.secret:
        raise KeyError(f"{name} is a secret; read it with secret()")
    value = os.environ.get(name)
    return value if value not in (None, "") else declared.default


def number(name: str) -> float | int:
    """A numeric setting within its declared finite range, or a one-line UsageError naming it."""
    return _number(_BY_NAME[name], raw(name))


def choice(name: str) -> str:
    """A setting with named choices (SPLUNK_WINDOW_BY), or a one-line UsageError naming it."""
    return _BY_NAME[name].convert(raw(name))


def within(name: str, value: float, *, what: str) -> float:
    """`value` (a command-line option standing for setting `name`) within that setting's range."""
    low, high = _BY_NAME[name].bounds or (-math.inf, math.inf)
    if not (math.isfinite(value) and low <= value <= high):
        raise _usage(f"{what} must be between {_plain(low)} and {_plain(high)}, got {value!r}")
    return value


def critical_services(source: str) -> tuple[str, ...]:
    """INCIDENTIQ_CRITICAL_SERVICES as lowered patterns; the demo's own list for the demo source
    (the sample day's business, a retail point of sale, is the demo's policy, not the engine's)."""
    return SETTING_OF["critical_services"].value(source)


def secret(name: str) -> str | None:
    """A secret, read at the moment it is needed and never cached: the environment first, then
    `.streamlit/secrets.toml` (read as a file, so the poller thread never calls Streamlit)."""
    declared = _BY_NAME[name]
    if not declared.secret:
        raise KeyError(f"{name} is not a secret")
    value = os.environ.get(name) or _secrets_file_value(name)
    if value is not None and declared.parse is not None:
        declared.parse(value)  # a value it cannot use is a UsageError naming it, never showing it
    return value


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


# -- the docs' table --------------------------------------------------------------------------------

def markdown_table() -> str:
    """The settings table of docs/REFERENCE.md and docs/CONTRACT.md §6, generated from the declarations."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for declared in SETTINGS:
        if declared.default is None:
            default = "unset"
        elif declared.default == "":
            default = "empty"
        else:
            default = f"`{declared.default}`"
        if declared.demo is not None:
            default += f" (demo source: `{declared.demo}`)"
        meaning = declared.help
        if declared.bounds is not None:
            low, high = declared.bounds
            meaning += f" ({_plain(low)}–{_plain(high)})"
        if declared.secret:
            meaning += " (a secret: read when needed, never stored or shown)"
        rows.append(f"| `{declared.name}` | {default} | {meaning.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"


def declarations() -> list[dict[str, Any]]:
    """The declarations as data (`python -m pipeline settings --json`); never a value."""
    return [{"name": d.name, "field": d.attr, "default": d.default, "demo_default": d.demo, "secret": d.secret,
             "type": d.kind.__name__ if d.kind else ("choice" if d.choices else "text"),
             "bounds": list(d.bounds) if d.bounds else None, "choices": list(d.choices) if d.choices else None,
             "help": d.help} for d in SETTINGS]
