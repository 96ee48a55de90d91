"""The analyst behind rca, recommend and the fix plan: one protocol (protocol.py), an offline
analyst (offline.py), a chat model (model.py, prompts.py), and the fix proposals (fixes.py)."""
