"""Who acts: an `Actor` (id, display name, roles, how they were authenticated), built from an OIDC
sign-in's claims, a demo name, the CLI's local operator or an API token; and what each role may do.

Roles: `viewer` reads; `reviewer` also decides, revises, edits, splits and merges, assigns and comments; `admin` also
replays and forks. `system` (the poller) may only expire. Roles come from the sign-in's roles claim
(INCIDENTIQ_ROLES_CLAIM) and the roles file (INCIDENTIQ_ROLES_FILE), which maps users, emails and
`group:<name>` to roles; a person neither names gets INCIDENTIQ_DEFAULT_ROLE.
"""
from __future__ import annotations

import getpass
import hashlib
import json
import secrets
import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

from pipeline.clock import parse_iso
from pipeline.config import Settings
from pipeline.errors import NotPermitted, UnknownIdentity, UsageError
from pipeline.store.approvals import person_key  # noqa: F401 - compared by the two-person rule

ROLES = ("viewer", "reviewer", "admin")
Auth = Literal["oidc", "demo", "cli", "token", "system"]

# the least role each action needs; roles are ordered, each includes the ones before it
NEEDS: dict[str, str] = {
    "read": "viewer",
    "approve": "reviewer", "reject": "reviewer", "revise": "reviewer", "edit": "reviewer",
    "split": "reviewer", "merge": "reviewer",
    "assign": "reviewer", "unassign": "reviewer", "comment": "reviewer",
    "judge": "reviewer",  # a pairwise judgment of a backtest (backtest/pairwise.py)
    "replay": "admin", "fork": "admin", "settings": "admin",
}
SYSTEM_ACTIONS = ("expire",)


@dataclass(frozen=True)
class Actor:
    """A person or process acting on incidents; `id` is what the audit and the two-person rule compare."""

    id: str
    name: str
    roles: tuple[str, ...]
    auth: Auth
    via: str | None = None  # who vouched: the local operator behind `--as`

    def may(self, action: str) -> bool:
        if self.auth == "system":
            return action in SYSTEM_ACTIONS
        need = NEEDS.get(action)
        if need is None:
            return False
        return any(ROLES.index(r) >= ROLES.index(need) for r in self.roles if r in ROLES)

    def require(self, action: str) -> None:
        """Raise NotPermitted unless the actor's roles allow `action`."""
        if not self.may(action):
            raise NotPermitted(self.id, action, self.roles)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "roles": list(self.roles), "auth": self.auth, "via": self.via}


SYSTEM = Actor(id="system", name="IncidentIQ (system)", roles=(), auth="system")


# -- the roles file ---------------------------------------------------------------------------

def _load(path: Path, what: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot read it ({exc.strerror})") from None
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{what} {path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'TOML'} ({exc})") \
            from None


def _roles_of(value: object, *, where: str) -> tuple[str, ...]:
    values = [value] if isinstance(value, str) else list(value) if isinstance(value, list) else [value]
    for role in values:
        if role not in ROLES:
            raise UsageError(f"{where}: unknown role {role!r}; roles are {', '.join(ROLES)}")
    return tuple(values)


def role_mapping(settings: Settings) -> dict[str, tuple[str, ...]] | None:
    """The roles file as lowered key -> roles, or None when none is configured; unknown roles are refused."""
    if settings.roles_file is None:
        return None
    data = _load(settings.roles_file, "INCIDENTIQ_ROLES_FILE")
    table = data.get("roles", data)
    if not isinstance(table, dict):
        raise UsageError(f"INCIDENTIQ_ROLES_FILE {settings.roles_file}: expected a [roles] table of name = role")
    return {str(k).strip().lower(): _roles_of(v, where=f"INCIDENTIQ_ROLES_FILE {settings.roles_file}: {k}")
            for k, v in table.items()}


def roles_for(settings: Settings, *, names: Iterable[str | None], claimed: Iterable[str] = ()) -> tuple[str, ...]:
    """The roles of a person known by `names` (id, email, ...) whose sign-in claimed `claimed`.

    A claimed value counts when it is a role, or a group the roles file maps (`group:<value>`);
    other values (an IdP's unrelated groups) are ignored. Nobody named: the default role."""
    mapping = role_mapping(settings) or {}
    found: list[str] = []
    for value in claimed:
        value = str(value).strip()
        if value in ROLES:
            found.append(value)
        found += mapping.get(f"group:{value.lower()}", ())
    for name in names:
        if name:
            found += mapping.get(str(name).strip().lower(), ())
    return tuple(r for r in ROLES if r in found) or (settings.role_for_unknown,)


def _claimed_roles(claims: Mapping[str, Any], claim: str) -> list[str]:
    value = claims.get(claim)
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in value.replace(",", " ").split() if v]
    return [str(v) for v in value]


# -- comparing people ----------------------------------------------------------------------------

# what the panel, the CLI and the audit say when two-person approvals come from typed names
UNVERIFIED_LIMIT = ("demo sign-in: names are typed, not verified, so two approvals here do not prove two"
                    " people; sign in with OIDC or use API tokens where the two-person rule matters")


def verified(actor: Actor) -> bool:
    """Whether someone other than the actor vouched for who they are: a sign-in (OIDC), an API
    token, or the CLI's own operator. Typed demo names and the CLI's `--as` are not."""
    return actor.auth in ("oidc", "token") or (actor.auth == "cli" and actor.via is None)


# -- building actors ---------------------------------------------------------------------------

def actor_from_claims(claims: Mapping[str, Any], settings: Settings) -> Actor:
    """The actor of an OIDC sign-in (`st.user`'s claims): id = email (else sub), roles from the
    roles claim and the roles file."""
    ident = str(claims.get("email") or claims.get("sub") or "").strip()
    if not ident or claims.get("is_logged_in") is False:
        raise UnknownIdentity("the sign-in carries neither an email nor a subject: sign in again")
    name = str(claims.get("name") or claims.get("preferred_username") or ident)
    names = [ident, claims.get("sub"), claims.get("preferred_username")]
    return Actor(id=ident, name=name, auth="oidc",
                 roles=roles_for(settings, names=names, claimed=_claimed_roles(claims, settings.roles_claim)))


def demo_actor(name: str | None, settings: Settings) -> Actor:
    """A typed name (demo sign-in, and `reviewer=` callers): refused unless INCIDENTIQ_AUTH=demo."""
    name = (name or "").strip()
    if not name:
        raise UsageError("reviewer is required")
    if settings.auth != "demo":
        raise UnknownIdentity(f"{name!r} is a typed name; with INCIDENTIQ_AUTH={settings.auth} sign in instead")
    return Actor(id=name, name=name, auth="demo", roles=roles_for(settings, names=[name]))


def cli_actor(settings: Settings, *, as_user: str | None = None, token: str | None = None,
              now: datetime | None = None) -> Actor:
    """The CLI's actor: an API token's, else the local operator `cli:<os user>`, optionally acting
    for a named person (`--as`, admins only).

    The local operator's roles come from the roles file (`cli:<user>` or `<user>`); with no roles
    file they are admin: whoever runs the CLI on this machine can write the data dir anyway."""
    if token:
        if as_user:
            raise UsageError("--as and a token do not combine: the token names who acts")
        return token_actor(settings, token, now=now)
    user = getpass.getuser()
    operator_id = f"cli:{user}"
    if settings.roles_file is None:
        operator = Actor(id=operator_id, name=operator_id, roles=("admin",), auth="cli")
    else:
        operator = Actor(id=operator_id, name=operator_id, auth="cli",
                         roles=roles_for(settings, names=[operator_id, user]))
    if not as_user or as_user.strip() == operator_id:
        return operator
    person = as_user.strip()
    if not operator.may("settings"):
        raise NotPermitted(operator_id, f"act as {person} (--as needs admin)", operator.roles)
    # with no roles file nobody says otherwise: the admin operator's trust carries to the person
    roles = operator.roles if settings.roles_file is None else roles_for(settings, names=[person])
    return Actor(id=person, name=person, roles=roles, auth="cli", via=operator_id)


# -- API tokens ----------------------------------------------------------------------------------

TOKEN_PREFIX = "iiq_"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.strip().encode()).hexdigest()


def new_token() -> tuple[str, str]:
    """A fresh API token and its hash (only the hash goes in the tokens file)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token_hash(token)


def _expiry(path: Path, name: str, value: object) -> datetime | None:
    """A token's `expires` as a time (None: empty, never expires); UsageError naming the file and line when it is not a date."""
    try:
        return parse_iso(str(value).strip().replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        pass
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    shown = str(value)
    line = next((n for n, text in enumerate(lines, 1) if "expires" in text and shown in text), None)
    where = f"{path}:{line}" if line else str(path)
    raise UsageError(f"INCIDENTIQ_TOKENS_FILE {where}: token {name}: expires {shown[:40]!r} is not a date"
                     " (write an ISO 8601 time, e.g. 2027-01-31T00:00:00Z)")


def token_actor(settings: Settings, token: str, *, now: datetime | None = None) -> Actor:
    """The actor a token stands for; unknown or expired tokens are refused (the token is never echoed)."""
    if settings.tokens_file is None:
        raise UnknownIdentity("a token was given but INCIDENTIQ_TOKENS_FILE is not set")
    data = _load(settings.tokens_file, "INCIDENTIQ_TOKENS_FILE")
    digest = token_hash(token)
    for entry in data.get("tokens", []):
        if not isinstance(entry, dict) or not secrets.compare_digest(str(entry.get("sha256", "")), digest):
            continue
        name = str(entry.get("name") or digest[:12])
        roles = _roles_of(entry.get("role", "viewer"), where=f"INCIDENTIQ_TOKENS_FILE: token {name}")
        expires = entry.get("expires")
        if expires is not None:
            when = expires if isinstance(expires, datetime) else _expiry(settings.tokens_file, name, expires)
            if when is not None and when.tzinfo is None:
                when = when.replace(tzinfo=timezone.utc)  # a bare time in the file means UTC
            if when is not None and now is not None and when <= now:
                raise UnknownIdentity(f"the API token {name} expired at {when.isoformat()}")
        ident = str(entry.get("user") or f"token:{name}")
        return Actor(id=ident, name=ident, roles=roles, auth="token", via=f"token:{name}")
    raise UnknownIdentity(f"unknown API token (sha256 {digest[:12]}…): not in INCIDENTIQ_TOKENS_FILE")
