"""Log lines in: formats and levels, multi-line joining, the one file tailer, events and dead letters,
the opening rule, template mining and correlation (events → incidents)."""
