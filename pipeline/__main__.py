from pipeline.cli import main
from pipeline.gc_tuning import tune_garbage_collector

tune_garbage_collector()  # a process of ours: its runs allocate many short-lived objects

raise SystemExit(main())
