from pipeline.cli import console

raise SystemExit(console())
