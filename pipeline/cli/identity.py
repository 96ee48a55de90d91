"""Who the CLI acts as: `--token` (or INCIDENTIQ_TOKEN), else the local operator `cli:<os user>`,
optionally `--as` a named person (admins only; `--reviewer` is its old name, kept for scripts)."""
from __future__ import annotations

import contextlib

from pipeline.config import secret
from pipeline.errors import Refused


def identity_args(p) -> None:
    p.add_argument("--as", dest="as_user", metavar="USER",
                   help="act for this person (needs admin; recorded with the operator who vouched)")
    p.add_argument("--reviewer", dest="reviewer", metavar="USER", help="the old name of --as")
    p.add_argument("--token", help="an API token (default: INCIDENTIQ_TOKEN); checked against INCIDENTIQ_TOKENS_FILE")


def actor_of(engine, args):
    """The CLI's actor for a command's arguments (raises Refused for a bad token or --as without admin)."""
    from pipeline.review.identity import cli_actor

    from pipeline.errors import UsageError

    given = getattr(args, "token", None)
    if given is not None and not given.strip():
        raise UsageError("--token needs a token (an empty one is not the local operator)")
    token = given or secret("INCIDENTIQ_TOKEN")
    as_user = getattr(args, "as_user", None)
    as_user = as_user if as_user is not None else getattr(args, "reviewer", None)
    if as_user is not None and not as_user.strip():
        raise UsageError("--as (or --reviewer) needs a name")
    return cli_actor(engine.settings, as_user=as_user, token=token, now=engine.records.clock.now())


@contextlib.contextmanager
def acting(service, args, action: str):
    """Yield the actor for `action` on `args.incident_id`; an identity refused here is audited too."""
    try:
        actor = actor_of(service.engine, args)
    except Refused as exc:
        service.audit_refusal(args.incident_id, action, None, getattr(args, "as_user", None)
                              or getattr(args, "reviewer", None) or "cli", exc.message)
        raise
    yield actor
