"""What a reviewer does: ReviewService (guarded decisions, edits, replay, fork), history and the
checkpoint tree, edit validation, the incident documents and the audit export."""
