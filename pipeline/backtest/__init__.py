"""Backtests: a candidate analyst (another model, other error docs, other settings) over past
incidents, compared with what the live analyst said and what the reviewers decided.

Never the live branch. Each incident's checkpoint before `rca` is read (a copy of its values) and
the analysis nodes (`rca`, `recommend`, `propose_fix`; `rag` too when the candidate brings other
docs) run as plain functions with the candidate's `Deps`, outside any graph: nothing is written to
the incident's thread, record, inbox row, audit, notifications or fix records, a paused incident
stays paused on the interrupt its reviewer sees, and the gate and `code_fix` never run. Results
are rows of the records store (pipeline/store/backtests.py), one per (backtest, incident).
"""
