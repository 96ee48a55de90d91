"""The zstd dictionary stored checkpoint rows, values and incident summaries are compressed with.

A checkpoint row (about 1 KB: every channel's version, which nodes saw which) and most stored
values (a few hundred bytes to a few KB) are too small for zstd to find much to repeat in
themselves; against a dictionary of what they are made of they shrink 2-4x. The dictionary is
raw content (no training): the shipped knowledge docs as the state carries them (an incident's
similar docs, and the RCA and recommendation that quote them), then the checkpoint rows and the
smaller values of one demo incident (channel and node names, the state classes' field names).

The file is frozen: a row compressed with dictionary N can only be read with dictionary N, so
`checkpoint-dictionary-1.zst` never changes (its digest is checked on load). A better dictionary
would be number 2, written beside it, with rows of both kinds read. Incidents whose docs are a
team's own compress less (about as plain zstd does): nothing else depends on it.

Made once with `python tools/make_checkpoint_dictionary.py <out-file>` (from the docs and the
demo stream at the time; ids and versions in it are random, so a rebuild differs).
"""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any, Callable

import zstandard

from pipeline.errors import CheckpointStoreError

DICTIONARY_ID = 1
PATH = Path(__file__).with_name(f"checkpoint-dictionary-{DICTIONARY_ID}.zst")
SHA256 = "8307ded0891ea5d8c7ea75ebd6a26ab5dbaf0d0e86d8faeba7feca0486d924b3"
# level 3, not 1: zstd's fastest level barely looks into a dictionary this size (measured on
# 300 bench incidents: checkpoint rows 4.1 KB plain, 3.9 with the dictionary at level 1, 2.1 at 3)
LEVEL = 3


@functools.lru_cache(maxsize=1)
def dictionary() -> zstandard.ZstdCompressionDict:
    """The shipped dictionary, checked against its digest (a changed file could not read old rows)."""
    try:
        content = zstandard.ZstdDecompressor().decompress(PATH.read_bytes())
    except (OSError, zstandard.ZstdError) as exc:
        raise CheckpointStoreError(f"cannot read the compression dictionary {PATH}: {exc}") from exc
    if hashlib.sha256(content).hexdigest() != SHA256:
        raise CheckpointStoreError(f"the compression dictionary {PATH} is not the one this release shipped:"
                                   " rows compressed with it could not be read back; restore it from the release")
    loaded = zstandard.ZstdCompressionDict(content, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    # digested once: a compressor made on a new thread (LangGraph's writes come from a pool that
    # starts threads as it goes) otherwise digests it again, 0.8 ms each time
    loaded.precompute_compress(level=LEVEL)
    return loaded


class CodecPool:
    """zstd contexts kept for reuse across threads, each used by one thread at a time: LangGraph
    writes checkpoints from threads it starts per run, so a context per thread was made anew for
    almost every row (measured: 70 us a value where a reused context takes 15)."""

    def __init__(self, make: Callable[[], Any]):
        self._make = make
        self._free: list[Any] = []  # zstandard contexts (the stubs share no base class)

    def run(self, blob: bytes, method: str) -> bytes:
        try:
            codec = self._free.pop()  # atomic: no two threads get the same context
        except IndexError:
            codec = self._make()
        try:
            out: bytes = getattr(codec, method)(blob)
            return out
        finally:
            self._free.append(codec)


_compressors = CodecPool(lambda: zstandard.ZstdCompressor(level=LEVEL, dict_data=dictionary(), write_dict_id=False,
                                                      write_checksum=False))
_decompressors = CodecPool(lambda: zstandard.ZstdDecompressor(dict_data=dictionary()))


def compress(blob: bytes) -> bytes:
    return _compressors.run(blob, "compress")


def decompress(blob: bytes) -> bytes:
    return _decompressors.run(blob, "decompress")
