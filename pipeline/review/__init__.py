"""What a reviewer does: ReviewService (service.py) composed of reads, decisions (with state
edits), time travel (replay, fork), people (assignment, comments) and the claims every action
takes; history and the checkpoint tree, edit validation, the incident documents, the audit
export, identity and the two-person policy."""
