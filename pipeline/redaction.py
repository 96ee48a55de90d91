"""Secrets out of text we store or show: an endpoint (a log source, the model) that echoes our
Authorization header in its error body, or quotes the token in a message, must not put the token
into the records (`last_error`, poller status, metrics), stderr or the pages. Below every package
that decides, so the sources, the incidents step and the engine share it.

Log lines carry secrets too (a curl command with its Authorization header, a connection URL with
its password, a dumped config): `scrub` masks every configured secret and the well-known shapes
below, and `scrubbed` applies it to every text of an event or a dead letter before the incidents
step stores it (records, context blocks, the miner's templates, then checkpoints, the model's
prompt and chat messages, which all start from the stored events).

The shapes are ours, after gitleaks' and detect-secrets' rules: detect-secrets 1.5.0 itself took
4.5 ms a line with its default plugins (the ingest path reads a line in a few µs) and its entropy
plugins flagged ~17 ordinary words a line (`https`, `curl`, `Bearer`) while missing a Bearer token
and `password=`. Each shape is tried only when the text holds one of its needles (as
ingest/templates.py does for its masks), so a line without any costs one lowercase copy and a few
substring tests."""
from __future__ import annotations

import base64
import re
from urllib.parse import quote, urlsplit

from pipeline import config
from pipeline.errors import MASK
from pipeline.ingest.events import DeadLetter
from pipeline.state import LogEvent

__all__ = ["MASK", "MIN_SECRET_CHARS", "configured_secrets", "redact", "scrub", "scrubbed"]
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary words; no real token is that short


def configured_secrets(*extra: str | None) -> list[str]:
    """Every configured secret's value (and the forms a server might echo it in), longest first."""
    values = {config.secret(s.name) for s in config.SETTINGS if s.secret} | set(extra)
    values.add(_database_password())
    forms: set[str] = set()
    for value in values:
        if value and len(value) >= MIN_SECRET_CHARS:
            forms |= {value, quote(value, safe=""), base64.b64encode(value.encode()).decode()}
    return sorted(forms, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """`text` with every secret masked (default: the configured secrets, read now), and every
    well-known secret shape (`scrub`)."""
    return scrub(text, secrets)[0]


def _database_password() -> str | None:
    """The password in INCIDENTIQ_DATABASE_URL (the URL is a setting, its password a secret)."""
    url = config.raw("INCIDENTIQ_DATABASE_URL")
    return urlsplit(url).password if url else None


_SECRET_NAME = r"(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)"
_VALUE = r"[^\s\"',;&)}\]]"
# (needles, pattern): the pattern runs only when the lowercased text holds a needle; its group `s`
# (or the whole match) is the secret, the rest of the match (a header's name, a key) is kept
_SHAPES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple((needles, re.compile(pattern)) for needles, pattern in (
    # a PEM private key block, whole (to the end of the text when its END line was cut off)
    (("private key-----",), r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?P<s>[\s\S]*?)"
                           r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    # an Authorization header's credentials, with or without their scheme
    (("authorization",), r"(?i)authorization[\"']?\s*[:=]\s*[\"']?\s*(?:(?:bearer|basic|token|digest|negotiate|splunk)\s+)?"
                         r"(?P<s>[^\s\"',;]{3,})"),
    (("bearer",), r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9\-._~+/]{8,}=*)"),
    # a password in a URL: scheme://user:password@host
    (("://",), r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@?#]*:(?P<s>[^\s@/?#]+)@"),
    # password=, SPLUNK_TOKEN=..., aws_secret_access_key = ...; after a colon ("api_key": "...") only a
    # value with a digit or a symbol, or of 8 characters or more: Hadoop's "Token: Token { kind: ... }"
    # names a type
    (("password", "passwd", "pwd", "secret", "token", "key", "credential"),
     rf"(?i){_SECRET_NAME}[\"']?\s*=\s*[\"']?(?P<s>{_VALUE}{{3,}})"),
    (("password", "passwd", "pwd", "secret", "token", "key", "credential"),
     rf"(?i){_SECRET_NAME}[\"']?\s*:\s*[\"']?(?P<s>(?={_VALUE}*[\d!@#$%^*+/=~_.-]){_VALUE}{{3,}}|{_VALUE}{{8,}})"),
    # AWS access key ids
    (("akia", "asia", "abia", "acca"), r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    # GitHub, Slack, OpenAI/Stripe and Google API tokens, JWTs, Slack webhook paths
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,})"),
    (("xox",), r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    (("sk-", "sk_live", "sk_test", "rk_live", "rk_test"), r"\b(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_-]{20,})"),
    (("aiza",), r"\bAIza[0-9A-Za-z_-]{35}"),
    (("eyj",), r"\beyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}"),
    (("hooks.slack.com",), r"hooks\.slack\.com/services/(?P<s>[\w/]+)"),
))


_NEEDLES = tuple(dict.fromkeys(needle for needles, _ in _SHAPES for needle in needles))
_SECRET_KEY = re.compile(rf"(?i)(?:{_SECRET_NAME}|authorization)$")


def scrub(text: str, secrets: list[str] | None = None) -> tuple[str, int]:
    """`text` with every secret (default: the configured ones, read now) and every well-known
    secret shape masked, and how many it masked."""
    found = 0
    for secret in configured_secrets() if secrets is None else secrets:
        if secret in text:
            found += text.count(secret)
            text = text.replace(secret, MASK)
    low = text.lower()
    masked = [0]

    def mask(match: re.Match[str]) -> str:
        whole = match.group(0)
        if "s" not in match.re.groupindex or match.group("s") is None:
            start, end = 0, len(whole)
        else:
            start, end = match.start("s") - match.start(), match.end("s") - match.start()
        if whole[start:end] == MASK:
            return whole  # masked already (a configured secret, or an earlier pass)
        masked[0] += 1
        return whole[:start] + MASK + whole[end:]

    if _holds(low, _NEEDLES):  # most lines hold none: one pass of substring tests, no pattern run
        for needles, pattern in _SHAPES:
            if _holds(low, needles):
                text = pattern.sub(mask, text)
    return text, found + masked[0]


# texts seen lately to hold no needle (an event's parts but its message: what lines repeat), at
# most _CLEAN_MAX of at most _CLEAN_CHARS characters each, forgotten all at once when full
_CLEAN: set[str] = set()
_CLEAN_MAX = 4096
_CLEAN_CHARS = 256


def _clean(text: str) -> bool:
    """Whether `text` holds no needle (case-insensitive), remembered for a short text."""
    if text in _CLEAN:
        return True
    if _holds(text.lower(), _NEEDLES):
        return False
    if len(text) <= _CLEAN_CHARS:
        if len(_CLEAN) >= _CLEAN_MAX:
            _CLEAN.clear()
        _CLEAN.add(text)
    return True


def _holds(low: str, needles: tuple[str, ...]) -> bool:
    for needle in needles:  # a plain loop: a generator in any() cost 3x on the ingest path
        if needle in low:
            return True
    return False


def scrubbed(item: LogEvent | DeadLetter, secrets: list[str]) -> tuple[LogEvent | DeadLetter, int]:
    """An event (every text field, and the strings of its extra fields) or a dead letter with its
    secrets masked (`scrub`), and how many were masked; the same object when none was."""
    if isinstance(item, DeadLetter):
        raw, in_raw = scrub(item.raw, secrets)
        reason, in_reason = scrub(item.reason, secrets)
        found = in_raw + in_reason
        return (DeadLetter(item.source, item.position, reason, raw), found) if found else (item, 0)
    # one look at the whole event (its texts, its extra fields' names and flat values): most hold no
    # secret. Every secret-named key holds a needle, so a key that masks its value is seen too. The
    # message is looked at whole; the rest, which lines repeat (service, host, logger, thread, the
    # fields' names), once while `_clean` remembers it (no needle holds a newline: looking at each
    # part finds what looking at them joined finds). Any part that may hold one sends the event to
    # `_scrubbed_event`, which looks at every part (the parts are looked at in place: building them
    # into a list and a dict first was a fifth of this look, on every line read)
    message = item.message
    if message and _holds(message.lower(), _NEEDLES):
        return _scrubbed_event(item, secrets)
    for part in (item.service, item.host, item.exception, item.stack, item.trace_id):
        if part and part not in _CLEAN and not _clean(part):
            return _scrubbed_event(item, secrets)
    for key, value in item.fields.items():
        if isinstance(value, str):
            if value not in _CLEAN and not _clean(value):
                return _scrubbed_event(item, secrets)
        elif isinstance(value, (dict, list)):
            return _scrubbed_event(item, secrets)
        name = str(key)
        if name not in _CLEAN and not _clean(name):
            return _scrubbed_event(item, secrets)
    if secrets:
        parts = [value for name in _TEXTS if (value := getattr(item, name))]
        for key, value in item.fields.items():
            parts.append(str(key))
            if isinstance(value, str):
                parts.append(value)
        joined = "\n".join(parts)
        if any(s in joined for s in secrets):
            return _scrubbed_event(item, secrets)
    return item, 0


_TEXTS = ("message", "service", "host", "exception", "stack", "trace_id")


def _scrubbed_event(item: LogEvent, secrets: list[str]) -> tuple[LogEvent, int]:
    """`scrubbed` of an event that may hold a secret: every text and field scrubbed."""
    texts = {name: value for name in _TEXTS if (value := getattr(item, name))}
    update, found = {}, 0
    for name, value in texts.items():
        clean, n = scrub(value, secrets)
        if n:
            update[name], found = clean, found + n
    if item.fields:
        fields, n = _scrub_value(item.fields, secrets)
        if n:
            update["fields"], found = fields, found + n
    return (item.model_copy(update=update), found) if found else (item, 0)


def _scrub_value(value, secrets: list[str]):
    """A JSON value with its strings (keys kept) scrubbed, and the count."""
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        out, found = {}, 0
        for key, inner in value.items():
            if isinstance(inner, str) and inner and inner != MASK and _SECRET_KEY.search(str(key)):
                out[key], n = MASK, 1  # {"password": "..."}: the key says what the value is
            else:
                out[key], n = _scrub_value(inner, secrets)
            found += n
        return out, found
    if isinstance(value, list):
        pairs = [_scrub_value(inner, secrets) for inner in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    return value, 0
