"""Time travel on the incident page (AppTest): selecting a checkpoint shows its diff; replay and
fork through the buttons, after a confirmation that names what runs again."""
import json
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pyarrow as pa
from streamlit.testing.v1 import AppTest

from pipeline.review.service import ReviewService
from tests.support import as_reviewer, click_chart, open_incident, open_tab, said, texts, unescape
from workbench.timeline import HUMAN, PAUSED, timeline_spec

APP_FILE = Path(__file__).resolve().parent.parent / "app.py"

# the graph's node names a reviewer should not need ("intake" and "approval" are words already)
NODE_NAMES = re.compile(r"(?<![\w.])(?:rca|rag|retrieval|recommend|propose_fix|code_fix|revise|route|__start__|__input__)"
                        r"(?![\w.])")


def _incident(engine) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["service"] == "checkout-api")


def _written_by(engine, incident_id: str, node: str) -> dict:
    return next(h for h in ReviewService(engine).history(incident_id, limit=100) if h["writes_by"] == [node])


def _pick(at, incident_id: str, checkpoint_id: str):
    open_tab(at, incident_id, "History & time travel")
    picker = at.selectbox(key=f"incident_history_pick_{incident_id}")
    return picker.select(checkpoint_id).run()  # by its value: the options name no id


def test_selecting_a_checkpoint_shows_its_changes_against_its_parent(app, paused_engine):
    incident = _incident(paused_engine)
    open_incident(app, incident)
    _pick(app, incident, _written_by(paused_engine, incident, "rca")["checkpoint_id"])
    diff = next(d.value for d in app.dataframe if list(d.value.columns) == ["field", "before", "after"])
    changed = dict(zip(diff["field"], diff["after"]))
    assert changed["category"] == "db pool exhausted"  # in words, as the incident page says it (issue 38.8)
    assert changed["severity"] == "critical"
    assert "recommended action" not in changed  # written by the next checkpoint, not this one


def test_a_fix_proposal_checkpoint_that_changed_nothing_says_what_it_wrote(app, paused_engine):
    """Walkthrough s51: a fix proposal checkpoint read "(0 fields)" as if its step had done nothing; it
    wrote the proposal (here none: no known cause), the same as the checkpoint before it held."""
    incident = next(r["incident_id"] for r in paused_engine.records.incidents()
                    if not (ReviewService(paused_engine).document(r["incident_id"]).get("proposal")))
    open_incident(app, incident)
    _pick(app, incident, _written_by(paused_engine, incident, "propose_fix")["checkpoint_id"])
    page = texts(app)
    assert "0 fields" not in page
    assert "(no field changed)" in page
    assert "The fix proposal step wrote the proposal: none, as the checkpoint before it held." in page, page


def test_the_diff_of_an_approval_is_in_a_reviewers_words(app, paused_engine):
    """The approval's checkpoint: each field by its word, none as "—", the approvals as who approved,
    and no interrupt id (it means nothing to a reviewer): not `decision.approvals`, "null" and JSON."""
    incident = _incident(paused_engine)
    review = ReviewService(paused_engine)
    review.approve(incident, reviewer="bob")
    approved = next(h["checkpoint_id"] for h in review.history(incident, limit=100)
                    if any(c["field"] == "decision.approvals" for c in review.checkpoint(incident, h["checkpoint_id"])["changes"]))
    open_incident(app, incident)
    _pick(app, incident, approved)
    diff = next(d.value for d in app.dataframe if list(d.value.columns) == ["field", "before", "after"])
    rows = {f: (b, a) for f, b, a in zip(diff["field"], diff["before"], diff["after"])}
    assert rows["approvals"] == ("—", "bob (approved)")
    assert rows["decided by"] == ("—", "bob")
    assert not [f for f in rows if "." in f or "_" in f or "interrupt" in f]
    assert "null" not in set(diff["before"]) | set(diff["after"])
    assert f"({len(rows)} fields changed)" in texts(app)


def test_replay_asks_for_confirmation_naming_the_nodes_then_branches(app, paused_engine):
    incident = _incident(paused_engine)
    as_reviewer(app, "alice")
    open_incident(app, incident)
    _pick(app, incident, _written_by(paused_engine, incident, "rca")["checkpoint_id"])
    app.button(key="incident_replay").click().run()
    confirm = said(app, "warning")
    assert "runs again: recommendation → fix proposal → approval" in confirm  # steps in words, not node names
    assert "The recorded fix is not among them" in confirm
    assert not NODE_NAMES.search(confirm), confirm
    assert not [a for a in paused_engine.records.audit(incident) if a["action"] == "replay"]  # not yet
    app.button(key="incident_confirm_yes").click().run()
    assert not app.exception
    tree = ReviewService(paused_engine).tree(incident)
    assert tree["branches"] == 2
    assert [a["reviewer"] for a in paused_engine.records.audit(incident) if a["action"] == "replay"] == ["alice"]
    assert paused_engine.records.incident(incident)["status"] == "awaiting_approval"
    assert "alice replayed from #" in said(app, "success")


def test_cancelling_a_replay_changes_nothing(app, paused_engine):
    incident = _incident(paused_engine)
    as_reviewer(app, "alice")
    open_incident(app, incident)
    _pick(app, incident, _written_by(paused_engine, incident, "rca")["checkpoint_id"])
    app.button(key="incident_replay").click().run()
    app.button(key="incident_confirm_no").click().run()
    assert ReviewService(paused_engine).tree(incident)["branches"] == 1
    assert paused_engine.records.audit(incident) == []


def _at_the_rca_checkpoint(app, paused_engine) -> tuple[str, str]:
    """Alice on the incident's History tab, the rca checkpoint picked: (incident, its fork form's key)."""
    incident = _incident(paused_engine)
    as_reviewer(app, "alice")
    open_incident(app, incident)
    checkpoint = _written_by(paused_engine, incident, "rca")["checkpoint_id"]
    _pick(app, incident, checkpoint)
    return incident, f"incident_fork_{checkpoint[-12:]}"


def test_fork_with_an_edit_runs_a_branch_from_the_edited_state(app, paused_engine):
    incident, form = _at_the_rca_checkpoint(app, paused_engine)
    _fold(app, form, True)
    app.number_input(key=f"{form}_rca.confidence").set_value(0.42)
    app.button(key=f"{form}_submit").click().run()
    assert "the confidence to 42%" in "\n".join(c.value for c in app.code)  # shown as text, never markdown
    app.button(key="incident_confirm_yes").click().run()
    assert not app.exception
    assert ReviewService(paused_engine).tree(incident)["branches"] == 2
    assert paused_engine.records.incident(incident)["confidence"] == 0.42
    # walkthrough s57 (35-after-fork.png): the confirmation was drawn atop the tab, the page at its bottom
    assert [unescape(t.value) for t in app.toast] == [said(app, "success")], [t.value for t in app.toast]
    fork = [a for a in paused_engine.records.audit(incident) if a["action"] == "fork"]
    assert fork and fork[0]["after"]["rca.confidence"] == 0.42


def _fold(at, key: str, open_: bool):
    """Open (or fold) an expander of the History tab, as a click on its label does."""
    at.session_state[key if key.endswith("_open") or key.startswith("incident_run_") else f"{key}_open"] = open_
    return at.run()


def test_the_folded_fork_form_draws_nothing_and_keeps_what_was_typed(app, paused_engine):
    """Folded, the fork form builds none of its widgets (they were sent on every pick for nobody);
    opened, they are there. An edit sent with "Fork from here…" and then cancelled is still in the
    form when it is opened again, folded and reopened (a form sends what was typed on its submit)."""
    incident, form = _at_the_rca_checkpoint(app, paused_engine)
    fork = next(e for e in app.expander if e.label == "Fork from here with edits")
    assert not fork.children and not app.number_input and f"{form}_submit" not in [b.key for b in app.button]
    _fold(app, form, True)
    confidence = f"{form}_rca.confidence"
    assert app.number_input(key=confidence).value != 0.42
    app.number_input(key=confidence).set_value(0.42)
    app.button(key=f"{form}_submit").click().run()
    app.button(key="incident_confirm_no").click().run()
    assert not app.number_input  # folded again after the confirmation
    _fold(app, form, True)
    assert app.number_input(key=confidence).value == 0.42
    _fold(app, form, False)
    app.selectbox(key=f"incident_history_compare_{incident}").select(
        _written_by(paused_engine, incident, "propose_fix")["checkpoint_id"]).run()  # another run, still folded
    assert not app.number_input
    _fold(app, form, True)
    assert app.number_input(key=confidence).value == 0.42
    app.button(key=f"{form}_submit").click().run()
    assert "the confidence to 42%" in "\n".join(c.value for c in app.code)
    app.button(key="incident_confirm_yes").click().run()
    assert paused_engine.records.incident(incident)["confidence"] == 0.42
    assert confidence not in app.session_state  # done: the form starts afresh


def test_a_checkpoint_past_the_gate_cannot_be_replayed_and_says_why(app, paused_engine):
    incident = _incident(paused_engine)
    ReviewService(paused_engine).approve(incident, reviewer="bob")
    as_reviewer(app, "alice")
    open_incident(app, incident)
    _pick(app, incident, _written_by(paused_engine, incident, "approval")["checkpoint_id"])
    assert "past the approval gate" in said(app, "info")
    assert "incident_replay" not in [b.key for b in app.button]
    app.button(key="incident_pick_suggested").click().run()
    assert app.button(key="incident_replay")


def test_timeline_draws_one_lane_per_branch_and_marks_paused_points(paused_engine):
    incident = _incident(paused_engine)
    review = ReviewService(paused_engine)
    review.replay(incident, checkpoint_id=_written_by(paused_engine, incident, "rca")["checkpoint_id"],
                  reviewer="alice")
    tree = review.tree(incident)
    spec = timeline_spec(tree)
    layers = {layer.get("name"): layer for layer in spec["layer"]}
    lanes = {p["lane"] for p in layers["checkpoints"]["data"]["values"]}
    assert {"branch 0", "branch 1 (live)"} <= lanes
    assert len(layers[PAUSED]["data"]["values"]) == sum(1 for n in tree["nodes"] if n["is_paused"])
    assert len(layers[HUMAN]["data"]["values"]) >= 1


def test_a_fork_is_drawn_apart_from_the_main_line_and_the_legend_says_how(paused_engine):
    """Issue 38.6: a fork's branch was drawn as any branch, its first checkpoint orange as an edit of
    the paused run, and the legend's "forked" colour was never used. Now the fork's first checkpoint is
    "forked", its lane says "fork", the line from the checkpoint it left is dashed in the fork's colour,
    and the legend's title says so."""
    incident = _incident(paused_engine)
    review = ReviewService(paused_engine)
    review.fork(incident, checkpoint_id=_written_by(paused_engine, incident, "rca")["checkpoint_id"],
                reviewer="alice", edits={"rca.category": "upstream_timeout"})
    spec = timeline_spec(review.tree(incident))
    layers = {layer.get("name"): layer for layer in spec["layer"]}
    points = layers["checkpoints"]["data"]["values"]
    forked = [p for p in points if p["kind"] == "forked"]
    assert len(forked) == 1 and forked[0]["lane"] == "branch 1 · fork (live)", forked
    assert {p["lane"] for p in points} == {"branch 0", "branch 1 · fork (live)"}
    assert [e for e in layers["edges"]["data"]["values"] if e["fork"]] and \
        layers["edges"]["encoding"]["color"]["condition"][0] == {"test": "datum.fork", "value": "#b279a2"}
    assert layers["checkpoints"]["encoding"]["color"]["title"] == "How each checkpoint was made"


def test_a_click_on_a_timeline_point_picks_it_and_a_second_click_compares(app, paused_engine):
    """What a reviewer does on the chart: a click picks that checkpoint (its changes shown, the ring
    on it), a shift-click on a second compares the two."""
    incident = _incident(paused_engine)
    open_incident(app, incident)
    open_tab(app, incident, "History & time travel")
    rca = _written_by(paused_engine, incident, "rca")["checkpoint_id"]
    fix = _written_by(paused_engine, incident, "propose_fix")["checkpoint_id"]
    chart = f"incident_timeline_{incident}"
    click_chart(app, chart, {"picked": [{"checkpoint_id": rca}]})
    assert app.selectbox(key=f"incident_history_pick_{incident}").value == rca
    assert "Changes at #5 root cause analysis against the checkpoint before it" in texts(app)
    drawn = next(c for c in app.get("vega_lite_chart") if c.key == chart).proto
    assert {"name": "selected"} in [layer.get("data") for layer in json.loads(drawn.spec)["layer"]]
    ring = next(d for d in drawn.datasets if d.name == "selected")  # the ring's point, sent as Arrow
    assert list(pa.ipc.open_stream(ring.data.data).read_all().column("checkpoint_id").to_pylist()) == [rca]
    assert not app.selectbox(key=f"incident_history_compare_{incident}").value
    click_chart(app, chart, {"picked": [{"checkpoint_id": rca}, {"checkpoint_id": fix}]})
    assert app.selectbox(key=f"incident_history_pick_{incident}").value == rca
    assert app.selectbox(key=f"incident_history_compare_{incident}").value == fix
    assert "From #5 root cause analysis to #7 fix proposal" in texts(app)


def test_the_open_timeline_shows_a_branch_someone_else_made_since(app, paused_engine):
    # what a checkpoint shows is cached per checkpoint and incident version: a replay made
    # elsewhere changes the version, so the page never shows the history as it was
    incident = _incident(paused_engine)
    open_incident(app, incident)
    rca = _written_by(paused_engine, incident, "rca")["checkpoint_id"]
    _pick(app, incident, rca)
    before = app.selectbox(key=f"incident_history_pick_{incident}").options
    assert "on 1 branch." in " ".join(c.value for c in app.caption)
    ReviewService(paused_engine).replay(incident, checkpoint_id=rca, reviewer="bob")
    app.run()
    assert "on 2 branches." in " ".join(c.value for c in app.caption)
    after = app.selectbox(key=f"incident_history_pick_{incident}").options
    assert len(after) > len(before)
    assert any("waiting for approval" in o for o in after if o not in before)  # the new branch's gate
    assert app.selectbox(key=f"incident_history_pick_{incident}").value == rca  # still the one picked


def test_a_checkpoint_shows_each_nodes_input_output_and_run_time(app, paused_engine):
    """As LangGraph Studio shows a step: the node that wrote the checkpoint, how long it ran, the state
    it was given and the update it returned (not only the state diff)."""
    incident = _incident(paused_engine)
    open_incident(app, incident)
    rca = _written_by(paused_engine, incident, "rca")
    _pick(app, incident, rca["checkpoint_id"])
    run = next(e for e in app.expander if e.label.startswith("root cause analysis · "))
    assert re.fullmatch(r"root cause analysis · ran in \d+ ms", run.label), run.label
    assert not run.children  # folded: nothing drawn in it until opened
    _fold(app, "incident_run_rca", True)
    run = next(e for e in app.expander if e.label.startswith("root cause analysis · "))
    assert len(run.get("json")) == 1  # the output; the input (the whole state) only when asked for
    app.toggle(key="incident_run_input_rca").set_value(True).run()
    run = next(e for e in app.expander if e.label.startswith("root cause analysis · "))
    given, returned = [json.loads(j.proto.body) for j in run.get("json")]
    assert "rca" not in given or given["rca"] is None  # the input is the state before the node ran
    assert given["evidence"] and returned["rca"]["category"] == "db_pool_exhausted"
    assert set(returned) <= {"rca", "severity", "events"}  # its own update, not the whole state


def test_any_two_checkpoints_can_be_compared(app, paused_engine):
    incident = _incident(paused_engine)
    open_incident(app, incident)
    rca = _written_by(paused_engine, incident, "rca")["checkpoint_id"]
    fix = _written_by(paused_engine, incident, "propose_fix")["checkpoint_id"]
    _pick(app, incident, fix)
    app.selectbox(key=f"incident_history_compare_{incident}").select(rca).run()
    frames = [d.value for d in app.dataframe if list(d.value.columns) == ["field", "before", "after"]]
    compared = dict(zip(frames[-1]["field"], frames[-1]["after"]))
    assert "recommended action" in compared and "proposed diff" in compared  # two steps apart, both shown
    assert "category" not in compared  # the same at both
    assert "From #5 root cause analysis to #7 fix proposal" in texts(app)


def test_a_checkpoint_link_opens_the_history_tab_at_that_checkpoint(app, paused_engine):
    incident = _incident(paused_engine)
    open_incident(app, incident)
    rca = _written_by(paused_engine, incident, "rca")["checkpoint_id"]
    _pick(app, incident, rca)
    [link] = [m for m in re.findall(r"\[Link to this checkpoint\]\(([^)]+)\)", texts(app))]
    query = dict(parse_qsl(urlsplit(link).query))
    assert urlsplit(link).path.endswith("incident") and query == {"incident": incident, "checkpoint": rca}
    fresh = AppTest.from_file(str(APP_FILE), default_timeout=60).run()
    fresh.switch_page("app_pages/incident.py")
    fresh.query_params.update(query)
    fresh.run()
    assert not fresh.exception
    assert fresh.selectbox(key=f"incident_history_pick_{incident}").value == rca


def test_the_state_at_a_checkpoint_is_drawn_when_asked_for(app, paused_engine):
    """The whole state (tens of KB of JSON) is drawn only when asked for, not folded away on every
    pick; asked for, it is that checkpoint's state."""
    incident = _incident(paused_engine)
    open_incident(app, incident)
    rca = _written_by(paused_engine, incident, "rca")["checkpoint_id"]
    _pick(app, incident, rca)

    def states() -> list[dict]:
        return [body for body in (json.loads(j.proto.body) for j in app.json) if "evidence" in body and "rca" in body]

    assert states() == []
    app.toggle(key=f"incident_history_state_{incident}").set_value(True).run()
    [state] = states()
    assert state == ReviewService(paused_engine).checkpoint(incident, rca)["state"]


def test_the_pickers_number_a_checkpoint_as_the_charts_axis_does(app, paused_engine):
    """The picker said "step 15" where the chart put the point at 16: one number, "#N", in both."""
    incident = _incident(paused_engine)
    ReviewService(paused_engine).replay(incident, checkpoint_id=_written_by(paused_engine, incident, "rca")["checkpoint_id"],
                                        reviewer="alice")
    open_incident(app, incident)
    open_tab(app, incident, "History & time travel")
    drawn = next(c for c in app.get("vega_lite_chart") if c.key == f"incident_timeline_{incident}").proto
    points = next(layer for layer in json.loads(drawn.spec)["layer"] if layer.get("name") == "checkpoints")
    at = {p["checkpoint_id"]: p["x"] for p in points["data"]["values"]}
    picker = app.selectbox(key=f"incident_history_pick_{incident}")
    captions = [p["caption"] for p in points["data"]["values"]]
    assert all(c.startswith(f"#{p['x']} · ") for c, p in zip(captions, points["data"]["values"]))
    assert sorted(at.values()) == list(range(1, len(at) + 1))  # 1 for the first, one apart
    options = picker.options  # the picker's words, as drawn
    assert sorted(int(o.split(" · ")[0][1:]) for o in options) == sorted(at.values()), options


def test_a_checkpoint_a_person_made_is_named_by_what_they_did_in_words():
    """The History picker's captions: "by a human: gave a first approval", never the audit's code
    ("approve_partial", "revise") a reviewer would have to know."""
    from workbench.timeline import checkpoint_caption

    for action, words in (("approve_partial", "gave a first approval"), ("revise", "asked for changes")):
        caption = checkpoint_caption({"checkpoint_id": "1f0c-0000-4a2b-8c3d-74b58202", "human_action": action,
                                      "writes_by": ["approval"], "created_at": "2026-11-28T07:17:33", "branch": 0,
                                      "on_current_branch": True}, 7)
        assert caption.endswith(f" · a person {words}") and action not in caption, caption
    # paused at the gate after a request for changes: two marks, not "waiting for approval by a human: asked for
    # changes" (walkthrough s58), which read as waiting for the changes
    caption = checkpoint_caption({"checkpoint_id": "1f0c-0000-4a2b-8c3d-74b58203", "human_action": "revise",
                                  "is_pending": True, "writes_by": ["propose_fix"], "created_at": "2026-11-28T07:18:00",
                                  "branch": 0, "on_current_branch": True}, 12)
    assert caption.endswith(" · waiting for approval · a person asked for changes"), caption


def test_the_timeline_picker_and_node_runs_say_each_step_in_a_reviewers_words(app, paused_engine):
    """The walkthrough read `propose_fix`, `rca` and `retrieval+rag` on the chart's points, in its hover
    and in the picker: each step is said in the words History's audit uses (workbench.audit_words)."""
    incident = _incident(paused_engine)
    open_incident(app, incident)
    _pick(app, incident, _written_by(paused_engine, incident, "rca")["checkpoint_id"])
    drawn = next(c for c in app.get("vega_lite_chart") if c.key == f"incident_timeline_{incident}").proto
    points = next(layer for layer in json.loads(drawn.spec)["layer"] if layer.get("name") == "checkpoints")
    labels = {p["label"] for p in points["data"]["values"]} - {""}
    captions = [p["caption"] for p in points["data"]["values"]]
    options = app.selectbox(key=f"incident_history_pick_{incident}").options
    runs = [e.label for e in app.expander if " · ran in " in e.label]
    assert {"root cause analysis", "fix proposal", "recommendation", "log window+doc search"} <= labels, labels
    assert any(" · root cause analysis · " in o for o in options), options
    assert runs == ["root cause analysis · " + runs[0].split(" · ", 1)[1]], runs
    for text in [*labels, *captions, *options, *runs]:
        assert not NODE_NAMES.search(text), text


def test_the_history_tab_names_checkpoints_and_steps_in_words_not_ids_or_node_names(app, paused_engine):
    """The walkthrough read "Changes of checkpoint 71c8be82", "propose_fix: no code fix…" and "so
    code_fix cannot run" (29-history.png): a checkpoint is named as the chart numbers it, with its
    step, and the nodes' notes and the time-travel plan say each step in words."""
    incident = _incident(paused_engine)
    open_incident(app, incident)
    fix = _written_by(paused_engine, incident, "propose_fix")["checkpoint_id"]
    _pick(app, incident, fix)
    page = texts(app)
    assert "Changes at #7 fix proposal against the checkpoint before it" in page, page
    # walkthrough s57: the pickers ended each option with a hex id ("… · branch 0 (live) · bff8a694"); the
    # number, step and time name a checkpoint, its id is beside its link alone, to copy
    picker = app.selectbox(key=f"incident_history_pick_{incident}")
    assert not [o for o in picker.options if re.search(r"\b[0-9a-f]{8}\b", o)], picker.options
    link = next(m.value for m in app.markdown if "Link to this checkpoint" in m.value)
    assert fix[-8:] not in page.replace(link, "") and f"`{fix}`" in link
    notes = "\n".join(c.value for c in app.code)
    assert "Fix proposal: " in notes and not NODE_NAMES.search(notes), notes
    captions = [unescape(c.value) for c in app.caption]
    plan = next(c for c in captions if "Evidence:" in c)
    assert not NODE_NAMES.search(plan) and "1 events" not in plan, plan
    assert "Runs again: the approval; the approval gate fires again" in plan, plan
    assert any("A fork starts at" in c for c in captions)  # how a fork is drawn: under the chart, whole


def test_a_fork_is_said_as_who_forked_from_which_step_setting_what(app, paused_engine):
    """32-after-fork-history.png: "Fork from cf40a4e9 done by carol" and "category = upstream_timeout":
    now "carol forked from #5 root cause analysis, setting the category to upstream timeout"."""
    incident, form = _at_the_rca_checkpoint(app, paused_engine)
    _fold(app, form, True)
    app.selectbox(key=f"{form}_rca.category").set_value("upstream_timeout")
    app.button(key=f"{form}_submit").click().run()
    confirm = said(app, "warning")
    assert "Fork from #5 root cause analysis starts a new branch" in confirm, confirm
    assert "the category to upstream timeout" in "\n".join(c.value for c in app.code)
    app.button(key="incident_confirm_yes").click().run()
    assert not app.exception
    done = said(app, "success")
    assert "alice forked from #5 root cause analysis, setting the category to upstream timeout: a new branch" in done, done
    assert "upstream_timeout" not in done


def test_the_audit_names_each_checkpoint_as_history_does(app, paused_engine):
    """33-audit: the audit's "checkpoint after" column and a fork's note said "1dc8ea…", "forked from
    checkpoint 802402a0": each now names the checkpoint as the History chart does, "#5 root cause analysis"."""
    incident = _incident(paused_engine)
    rca = _written_by(paused_engine, incident, "rca")["checkpoint_id"]
    ReviewService(paused_engine).fork(incident, checkpoint_id=rca, reviewer="alice",
                                      edits={"rca.category": "upstream_timeout"})
    open_incident(app, incident)
    open_tab(app, incident, "Audit trail")
    table = next(d.value for d in app.dataframe if "what happened" in d.value.columns)
    [after] = list(table["checkpoint after"])
    assert re.fullmatch(r"#\d+ [a-z ]+", after), after
    [note] = list(table["note"])
    assert "forked from checkpoint #5 root cause analysis" in note, note


def test_the_approval_gate_says_how_long_it_waited_for_a_reviewer_and_a_reason_is_a_sentence():
    """b-c890ef-history.png: "approval · ran in 173.1 s" was the wait for a reviewer, and "the run had ended
    at this checkpoint: …" began in lower case."""
    from workbench.checkpoint_view import _duration
    from workbench.time_travel_view import reason_words

    assert _duration(173.1, "approval") == "waited 2 min 53 s for a reviewer"
    assert _duration(3725, "approval") == "waited 1 h 2 min for a reviewer"
    assert _duration(0.004, "rca") == "ran in 4 ms"
    assert _duration(0.004, "approval") == "ran in 4 ms"  # it did not pause
    reason = reason_words({"allowed": False, "reason": "the run had ended at this checkpoint: there is nothing to run again"})
    assert reason.startswith("The run had ended at this checkpoint"), reason


def test_a_checkpoint_on_a_sample_of_all_the_events_says_so_in_words():
    """"Evidence: 50 events … the incident now has 62: nothing newer" contradicted the header after a
    replay on all the evidence (issue 38.1): a full sample with nothing newer is all of them, quoted."""
    from workbench.time_travel_view import evidence_text

    plan = {"evidence": {"at_checkpoint": {"events": 50, "newest_event_at": "2026-11-28T10:49:00+00:00"},
                         "now": {"events": 62}, "newer_evidence": False, "newer_events": 0}}
    text = evidence_text(plan)
    assert "all 62 events" in text and "sample of 50" in text and "now has 62" not in text
    older = {"evidence": {**plan["evidence"], "at_checkpoint": {"events": 3, "newest_event_at": "x"}}}
    assert "3 events up to" in evidence_text(older)


def test_the_pollers_evidence_merge_is_drawn_as_evidence_added_not_as_a_persons_edit(app, paused_engine, tmp_path):
    """New events merged into the paused analysis by the run that stored them: drawn orange as "edited"
    (a person's edit), and its node said "ran in 33.7 s", the wait for those events (issue 38)."""
    from pipeline.unattended.file_ingest import ingest_path
    from tests.support import write_jsonl
    from workbench.timeline import EVIDENCE_ADDED, SOURCE_WORDS

    incident = _incident(paused_engine)
    ingest_path(paused_engine, write_jsonl(tmp_path / "more.jsonl", [
        {"_time": f"2026-11-28T12:00:0{i}Z", "service": "checkout-api", "host": "co-9", "level": "ERROR",
         "exception": "java.sql.SQLTransientConnectionException",
         "message": f"HikariPool-1 - Connection is not available, request timed out after 3000{i}ms."}
        for i in range(6)]))  # a new host's events: merged, and the analysis re-runs
    merged = next(n for n in ReviewService(paused_engine).tree(incident)["nodes"] if n["source"] == "update")
    assert merged["human_action"] is None  # nobody acted
    open_incident(app, incident)
    open_tab(app, incident, "History & time travel")
    drawn = next(c for c in app.get("vega_lite_chart") if c.key == f"incident_timeline_{incident}").proto
    points = next(layer for layer in json.loads(drawn.spec)["layer"] if layer.get("name") == "checkpoints")
    point = next(p for p in points["data"]["values"] if p["checkpoint_id"] == merged["checkpoint_id"])
    assert point["kind"] == EVIDENCE_ADDED and point["kind"] != SOURCE_WORDS["update"], point
    assert "evidence added" in point["caption"], point["caption"]
    picker = app.selectbox(key=f"incident_history_pick_{incident}")
    picker.select(merged["checkpoint_id"]).run()
    runs = [unescape(e.label) for e in app.expander if e.label.startswith(("evidence", "log window", "intake"))]
    assert runs and all("ran in" not in r for r in runs) and EVIDENCE_ADDED in runs[0], runs


def test_a_forks_first_checkpoint_says_a_person_wrote_it_not_how_long_a_node_ran(app, paused_engine):
    """A walkthrough (session 51): a fork's first checkpoint read "root cause analysis · ran in 533.3 s", the
    time since the checkpoint it forked from; no node ran, a person's fork wrote it."""
    incident = _incident(paused_engine)
    rca = _written_by(paused_engine, incident, "rca")["checkpoint_id"]
    ReviewService(paused_engine).fork(incident, checkpoint_id=rca, reviewer="alice",
                                      edits={"rca.category": "upstream_timeout"})
    written = [n for n in ReviewService(paused_engine).tree(incident)["nodes"]
               if n["source"] == "update" and n["human_action"]]
    assert written, "the fork's first checkpoint is a person's update"
    open_incident(app, incident)
    open_tab(app, incident, "History & time travel")
    picker = app.selectbox(key=f"incident_history_pick_{incident}")
    picker.select(written[0]["checkpoint_id"]).run()
    runs = [unescape(e.label) for e in app.expander if e.label.startswith(("root cause", "recommendation"))]
    assert runs and all("ran in" not in r for r in runs), runs
    assert "no node ran" in runs[0], runs


def test_a_replay_names_what_people_did_after_its_checkpoint_that_it_will_not_carry_over(app, paused_engine):
    """Walkthrough s58: mira set the severity in the State tab (an edit of the paused state), then a
    "Replay from here" at the root cause checkpoint dropped her edit, its confirmation saying only that
    "the current one stays in the history as abandoned". It now names who did what after that checkpoint."""
    incident = _incident(paused_engine)
    review = ReviewService(paused_engine)
    rca = _written_by(paused_engine, incident, "rca")["checkpoint_id"]  # the analyst's, before the edit
    review.edit(incident, reviewer="mira", edits={"severity": "high"})
    review.revise(incident, reviewer="omar", feedback="check the pool size first")
    as_reviewer(app, "alice")
    open_incident(app, incident)
    _pick(app, incident, rca)
    app.button(key="incident_replay").click().run()
    confirm = said(app, "warning")
    assert "mira's edit: severity critical → high will not be carried over" in confirm, confirm
    assert "omar's request for changes" in confirm and "check the pool size first" in confirm, confirm
    assert not NODE_NAMES.search(confirm), confirm
    # from the newest checkpoint (a re-run on the current branch) nothing is left behind
    newest = review.tree(incident)["current"][0]
    app.button(key="incident_confirm_no").click().run()
    _pick(app, incident, newest)
    app.button(key="incident_replay").click().run()
    assert "will not be carried over" not in said(app, "warning")
