"""Who may decide: actors from OIDC claims, the roles file, tokens and the CLI's operator; refusals
exit 3 with one line, are audited as refused:<action>, and change nothing."""
from __future__ import annotations

import getpass

import pytest

from pipeline.errors import NotPermitted, UnknownIdentity, UsageError
from pipeline.review.identity import actor_from_claims, cli_actor, demo_actor, new_token
from pipeline.review.service import ReviewService
from tests.support import by_category, cli, make_settings, pending


def _settings(data_dir, **kw):
    return make_settings(data_dir).model_copy(update=kw)


def test_roles_come_from_the_claim_and_the_roles_file(data_dir, tmp_path):
    roles = tmp_path / "roles.toml"
    roles.write_text('[roles]\n"ann@example.com" = "reviewer"\n"group:sre-leads" = "admin"\n')
    settings = _settings(data_dir, auth="oidc", roles_file=roles)
    ann = actor_from_claims({"email": "ann@example.com", "name": "Ann", "roles": ["Everyone"]}, settings)
    assert (ann.id, ann.name, ann.roles, ann.auth) == ("ann@example.com", "Ann", ("reviewer",), "oidc")
    assert ann.may("approve") and not ann.may("replay")
    lead = actor_from_claims({"email": "lee@example.com", "roles": "sre-leads other"}, settings)
    assert lead.roles == ("admin",) and lead.may("fork")
    stranger = actor_from_claims({"email": "x@example.com"}, settings)
    assert stranger.roles == ("viewer",) and not stranger.may("approve")  # default with a roles file / oidc
    claimed = actor_from_claims({"sub": "u-1", "roles": ["reviewer"]}, _settings(data_dir, auth="oidc"))
    assert claimed.id == "u-1" and claimed.roles == ("reviewer",)
    with pytest.raises(UnknownIdentity):
        actor_from_claims({"name": "no id"}, settings)


def test_an_unknown_role_in_the_roles_file_is_refused_with_its_name(data_dir, tmp_path):
    roles = tmp_path / "roles.json"
    roles.write_text('{"roles": {"ann": "superuser"}}')
    with pytest.raises(UsageError, match="ann: unknown role 'superuser'"):
        demo_actor("ann", _settings(data_dir, roles_file=roles))


def test_typed_names_are_refused_once_sign_in_is_oidc(paused_engine):
    paused_engine.settings = paused_engine.settings.model_copy(update={"auth": "oidc"})
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    with pytest.raises(UnknownIdentity, match="sign in"):
        service.approve(inc, reviewer="ann")
    assert paused_engine.records.incident(inc)["status"] == "awaiting_approval"
    (entry,) = service.audit(inc)
    assert (entry["action"], entry["reviewer"]) == ("refused:approve", "unverified:ann")


def test_a_viewer_may_not_decide_and_the_refusal_is_audited(paused_engine, tmp_path):
    roles = tmp_path / "roles.toml"
    roles.write_text('[roles]\nvic = "viewer"\nrita = "reviewer"\n')
    paused_engine.settings = paused_engine.settings.model_copy(update={"roles_file": roles})
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    with pytest.raises(NotPermitted, match="vic may not approve"):
        service.approve(inc, reviewer="vic")
    with pytest.raises(NotPermitted, match="rita may not replay"):
        service.replay(inc, checkpoint_id=paused_engine.records.incident(inc)["pending_checkpoint_id"], reviewer="rita")
    assert paused_engine.records.incident(inc)["status"] == "awaiting_approval"
    assert [(a["action"], a["reviewer"]) for a in service.audit(inc)] == [
        ("refused:approve", "vic"), ("refused:replay", "rita")]


def test_the_cli_operator_is_recorded_as_such_and_is_admin_without_a_roles_file(data_dir):
    operator = cli_actor(make_settings(data_dir))
    assert operator.id == f"cli:{getpass.getuser()}" and operator.auth == "cli" and operator.roles == ("admin",)
    ann = cli_actor(make_settings(data_dir), as_user="ann")
    assert (ann.id, ann.via, ann.may("fork")) == ("ann", operator.id, True)


def test_as_needs_an_admin_operator_when_a_roles_file_says_otherwise(paused_engine, capsys, tmp_path, monkeypatch):
    roles = tmp_path / "roles.toml"
    roles.write_text(f'[roles]\n"cli:{getpass.getuser()}" = "reviewer"\n')
    monkeypatch.setenv("INCIDENTIQ_ROLES_FILE", str(roles))
    inc = by_category(paused_engine, "db_pool_exhausted")
    code, out, err = cli(capsys, "approve", inc, "--as", "ann")
    assert code == 3 and out == "" and err.count("\n") == 1 and "needs admin" in err
    assert paused_engine.records.incident(inc)["status"] == "awaiting_approval"
    assert [a["action"] for a in paused_engine.records.audit(inc)] == ["refused:approve"]
    code, _, err = cli(capsys, "approve", inc)  # as themself, a reviewer: allowed
    assert code == 0, err
    (entry,) = [a for a in paused_engine.records.audit(inc) if a["action"] == "approve"]
    assert (entry["reviewer"], entry["auth"]) == (f"cli:{getpass.getuser()}", "cli")


def _tokens_file(tmp_path, **entry):
    lines = "".join(f'{k} = "{v}"\n' for k, v in entry.items())
    path = tmp_path / "tokens.toml"
    path.write_text("[[tokens]]\n" + lines)
    return path


def test_a_token_acts_as_its_user_and_only_its_hash_is_stored(paused_engine, capsys, tmp_path, monkeypatch):
    token, digest = new_token()
    monkeypatch.setenv("INCIDENTIQ_TOKENS_FILE", str(_tokens_file(tmp_path, name="ci", sha256=digest,
                                                                  role="reviewer", user="ci-bot")))
    inc = by_category(paused_engine, "db_pool_exhausted")
    monkeypatch.setenv("INCIDENTIQ_TOKEN", token)
    code, _, err = cli(capsys, "approve", inc, "--expect-interrupt", pending(paused_engine, inc))
    assert code == 0, err
    (entry,) = paused_engine.records.audit(inc)
    assert (entry["reviewer"], entry["auth"], entry["action"]) == ("ci-bot", "token", "approve")
    assert token not in (tmp_path / "tokens.toml").read_text()
    assert token.encode() not in (paused_engine.records_path).read_bytes()


@pytest.mark.parametrize("case", ["unknown", "expired"])
def test_unknown_and_expired_tokens_are_refused_audited_and_change_nothing(paused_engine, capsys, tmp_path,
                                                                            monkeypatch, case):
    token, digest = new_token()
    entry = {"name": "old", "sha256": digest, "role": "admin"}
    if case == "expired":
        entry["expires"] = "2020-01-01T00:00:00Z"
    monkeypatch.setenv("INCIDENTIQ_TOKENS_FILE", str(_tokens_file(tmp_path, **entry)))
    inc = by_category(paused_engine, "db_pool_exhausted")
    given = token if case == "expired" else new_token()[0]
    code, out, err = cli(capsys, "reject", inc, "--reason", "no", "--token", given)
    assert code == 3 and out == "" and err.count("\n") == 1
    assert ("expired at 2020-01-01" if case == "expired" else "unknown API token") in err
    assert given not in err
    assert paused_engine.records.incident(inc)["status"] == "awaiting_approval"
    assert [a["action"] for a in paused_engine.records.audit(inc)] == ["refused:reject"]


def test_token_refuses_an_unknown_role(capsys):
    code, out, err = cli(capsys, "token", "--name", "x", "--role", "wizard")
    assert code == 2 and "unknown role 'wizard'" in err and out == ""
