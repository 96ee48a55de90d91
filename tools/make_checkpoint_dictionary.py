"""Make a compression dictionary for the stored rows (pipeline/store/stored_dictionary.py says what
it holds and why a shipped one never changes): `python tools/make_checkpoint_dictionary.py OUT`
prints the digest to pin. Run from a checkout: it ingests the demo stream into a temp data dir."""
from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

import zstandard

from pipeline.config import Settings
from pipeline.composition import open_engine
from pipeline.unattended.file_ingest import ingest_path
from pipeline.knowledge.index import load_docs
from pipeline.store import checkpoint_format, checkpoints, stored_dictionary


def build(out: Path) -> str:
    """Write a new dictionary file (see the module docstring); returns its digest to pin."""
    serde = checkpoint_format.serializer()
    parts = [serde.dumps_typed(doc.as_error_doc(score=0.5))[1] for doc in load_docs()]
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        engine = open_engine(Settings.from_env(data_dir=Path(tmp), repo_dir=root / "samples" / "pos-backend"))
        ingest_path(engine, root / "samples" / "pos-day.jsonl")
        stored_values, stored_checkpoints = checkpoints.sample_thread(engine.graph.checkpointer, rank=10)
        values = [_raw(kind, blob) for kind, blob in stored_values]
        rows = [_raw(kind, blob, compressed=False) for kind, blob in stored_checkpoints]
        parts += [v for v in values if len(v) < 6000] + rows
        checkpoints.close_all()
    content = b"".join(parts)
    out.write_bytes(zstandard.ZstdCompressor(level=19).compress(content))
    return hashlib.sha256(content).hexdigest()


def _raw(kind: str, blob: bytes, *, compressed: bool = True) -> bytes:
    # a row as serialized, whichever way it is stored (by this dictionary, plain zstd, or not at all)
    if kind.endswith(f"~{stored_dictionary.DICTIONARY_ID}"):
        return stored_dictionary.decompress(blob)
    return zstandard.ZstdDecompressor().decompress(blob) if compressed else blob


if __name__ == "__main__":
    print(build(Path(sys.argv[1])))
