"""The audit trail's sentences as a reviewer reads them, on rows shaped as the review service records
them (a second reviewer's approval, a fork that corrected the category, an edit): what changed for
the incident, never the graph's interrupt ids, the store's idempotency keys and change ids, a
decision's time and sign-in, the list of edited paths (`rca.category`) or a node's name
(`propose_fix`); the exports keep all of it."""
from __future__ import annotations

from workbench.audit_words import audit_sentence, note_words

APPROVE = {
    "action": "approve", "reviewer": "bob", "note": None,
    "before": {"status": "awaiting_approval", "decision.action": None, "decision.reviewer": None,
               "decision.interrupt_id": None, "decision.decided_at": None, "decision.approvals": None,
               "decision.auth": None, "decision.proposal_hash": None, "outcome": None, "proposal_hash": None,
               "fix.attempt": None, "fix.hash": None, "fix.idempotency_key": None},
    "after": {"status": "fix_proposed", "decision.action": "approve", "decision.reviewer": "bob",
              "decision.interrupt_id": "44cd0de0e306ad66abb40a6cf2df727f",
              "decision.decided_at": "2026-12-06T10:33:49.073027Z", "decision.approvals": [{"by": "bob"}],
              "decision.auth": "cli", "decision.proposal_hash": "f163df9fd2ac8935", "outcome": "fix_proposed",
              "proposal_hash": "f163df9fd2ac8935", "fix.attempt": 1, "fix.hash": "f163df9fd2ac8935",
              "fix.idempotency_key": "INC-1:304a9606bd56"},
}
FORK = {
    "action": "fork", "reviewer": "ann",
    "note": "forked from checkpoint 1f1f1603-d04d-6116-8003-014d802402a0: re-ran recommend, propose_fix, approval "
            "[this checkpoint's analysis rests on 3 events]",
    "before": {"rca.category": "unknown", "status": "awaiting_approval"},
    "after": {"rca.category": "connection_refused", "status": "awaiting_approval",
              "change_id": "1a43b413dfcf40338a1fe562b102aa60", "edited": ["rca.category"]},
}
EDIT = {
    "action": "edit", "reviewer": "ann", "note": "as_node=rca",
    "before": {"rca.category": "null_reference", "proposal.hash": "bf530e37", "proposal.change.kind": "null_guard",
               "proposal.change.line": 31},
    "after": {"rca.category": "data_integrity", "proposal.hash": "2c4178a2", "proposal.change.kind": None,
              "proposal.change.line": None, "change_id": "75660a59bd9a", "edited": ["rca.category"],
              "reran": ["recommend", "propose_fix"]},
}


def test_an_approval_says_who_approved_and_what_the_status_became():
    assert audit_sentence(APPROVE) == "bob approved: status awaiting approval → fix proposed"


def test_a_fork_and_an_edit_say_the_category_change_in_words():
    fork, edit = audit_sentence(FORK), audit_sentence(EDIT)
    assert fork == "ann forked the run: category unknown → connection refused", fork
    assert edit == "ann edited the analysis: category null reference → data integrity", edit
    for text in (fork, edit):
        assert "rca." not in text and "change id" not in text and "reran" not in text and "hash" not in text


def test_a_forks_note_names_the_steps_and_the_checkpoint_as_the_table_does():
    """The "checkpoint after" column shows a checkpoint's last 8 characters: the note names it the same way."""
    note = note_words(FORK["note"])
    assert note.startswith("forked from checkpoint 802402a0: re-ran the recommendation, the fix proposal and the "
                           "approval"), note
    assert "propose_fix" not in note and "1f1f1603" not in note
