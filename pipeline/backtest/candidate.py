"""The candidate analyst of a backtest: the live configuration with another model, other error
docs or other settings, as the `Deps` the analysis nodes run with."""
from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import SETTINGS, Settings
from pipeline.engine import Engine
from pipeline.engine.nodes import Deps
from pipeline.errors import UsageError
from pipeline.knowledge.embeddings import embedder_from_setting
from pipeline.knowledge.index import KnowledgeBase

_SETTING_NAMES = {s.name: s for s in SETTINGS}
# what a candidate may change: how incidents are analysed, not where the stores live
_NOT_CANDIDATE = {"INCIDENTIQ_DATA_DIR", "INCIDENTIQ_DATABASE_URL", "INCIDENTIQ_SOURCE"}


@dataclass(frozen=True)
class Candidate:
    description: str
    deps: Deps
    rerun_rag: bool  # other docs: the similar docs are looked up again in the candidate's index


def candidate_for(engine: Engine, *, model: str | None = None, docs: Path | None = None,
                  settings_file: Path | None = None) -> Candidate:
    """The candidate of `backtest --model | --docs | --settings` (none: the live analyst again)."""
    check_candidate(engine, model=model, docs=docs, settings_file=settings_file)
    settings, kb, words, rerun_rag = engine.settings, engine.kb, "the live analyst", False
    if model is not None:
        settings = settings.model_copy(update={"model": model})
        words = f"model {model}"
    elif docs is not None:
        docs = Path(docs)
        # an index of its own under the data dir: the live index is never re-synced to other docs
        digest = hashlib.sha256(str(docs.resolve()).encode()).hexdigest()[:12]
        kb = KnowledgeBase(index_dir=Path(settings.data_dir) / "backtest-index" / digest,
                           embedder=embedder_from_setting(settings.embeddings, base_url=settings.base_url),
                           docs_dir=docs)
        kb.sync()
        words, rerun_rag = f"docs {docs}", True
    elif settings_file is not None:
        settings = _settings_from_file(engine.settings, Path(settings_file))
        words = f"settings {settings_file}"
    analyst = engine.analyst if settings is engine.settings and kb is engine.kb else engine.analyst_for(settings, kb)
    kind = "model" if settings.uses_model else "offline analyzer"
    deps = Deps(records=engine.records, kb=kb, analyst=analyst,
                code_fix_min_confidence=settings.code_fix_min_confidence,
                critical_services=settings.critical_services, repo_dir=settings.repo_dir)
    return Candidate(description=f"{words} ({kind})", deps=deps, rerun_rag=rerun_rag)


def check_candidate(engine: Engine, *, model: str | None = None, docs: Path | None = None,
                    settings_file: Path | None = None) -> None:
    """Refuse a candidate that cannot run (UsageError), without building it: no index is synced."""
    if sum(x is not None for x in (model, docs, settings_file)) > 1:
        raise UsageError("choose one of --model, --docs and --settings")
    if model is not None and not engine.settings.model_copy(update={"model": model}).uses_model:
        raise UsageError(f"--model {model}: no endpoint is configured (set OPENAI_API_KEY or OPENAI_BASE_URL)")
    if docs is not None and (not Path(docs).is_dir() or not any(Path(docs).rglob("*.md"))):
        raise UsageError(f"--docs {docs}: not a directory of error docs (*.md)")
    if settings_file is not None:
        _settings_from_file(engine.settings, Path(settings_file))


def _settings_from_file(live: Settings, path: Path) -> Settings:
    """Settings of a TOML file of setting names (`CODE_FIX_MIN_CONFIDENCE = 0.7`) over the live ones."""
    try:
        values = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--settings {path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--settings {path}: not TOML ({exc})") from None
    for name in values:
        setting = _SETTING_NAMES.get(name)
        if setting is None:
            raise UsageError(f"--settings {path}: unknown setting {name}")
        if setting.secret or name in _NOT_CANDIDATE or setting.attr is None:  # attr None: not the analyst's
            raise UsageError(f"--settings {path}: {name} cannot be set for a backtest")
    fixed = dict(data_dir=live.data_dir, database_url=live.database_url, source=live.source)
    texts = {name: _SETTING_NAMES[name].spelled(value) for name, value in values.items()}
    read = Settings.from_texts({**os.environ, **texts}, **fixed)  # checked as the environment is, never changing it
    # the file's settings over the live ones (which may carry overrides of their own)
    return live.model_copy(update={attr: getattr(read, attr) for attr in (_SETTING_NAMES[name].attr for name in texts)
                                   if attr is not None})

