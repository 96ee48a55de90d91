"""What a fresh interpreter imports: the start-up paths that once closed an import circle, and the
commands scripts call most, which must start without LangGraph, LangChain or Chroma (about a second
of imports a process). Each runs a real interpreter, so they are kept apart from the layer test
(tests/test_import_layers.py), which only reads the source.
"""
from __future__ import annotations

import os
import subprocess
import sys

from tests.support import ROOT


def test_the_openai_embeddings_import_first_in_a_fresh_interpreter():
    # the order that used to close the circle: embeddings -> openai_embeddings -> analyst -> knowledge
    code = "import pipeline.knowledge.openai_embeddings, pipeline.knowledge.embeddings, pipeline.analyst.model"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_commands_that_read_records_start_without_the_graph_or_chroma(tmp_path):
    # `list`, `show` and `deadletters` are what scripts call most; LangGraph, LangChain and Chroma
    # cost about a second of imports a process, and these commands need none of them
    code = ("import sys; from pipeline.cli import main\n"
            "for argv in (['list', '--json'], ['deadletters', '--json'], ['show', 'INC-none', '--json']):\n"
            "    main(argv)\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'langgraph', 'langchain_core', 'chromadb'})\n"
            "print('HEAVY', heavy)")
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(tmp_path / "data")}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HEAVY []" in result.stdout, result.stdout[-500:]
