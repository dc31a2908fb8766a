"""py3langid's language guesser, its model read from an uncompressed copy in the user's cache.

py3langid reads its model (``py3langid/data/model.npz.xz``) from LZMA in every process that
guesses a language: 0.3 s of decompression and 0.16 s of parsing, in each extraction worker that
starts, for 68 MB of arrays. The first process to load it here keeps the arrays uncompressed in
``cache_folder()``, one ``.npy`` file each, under a name made of py3langid's version and the
model file's size and time; the next ones map the biggest (the 28 MB of per-feature scores) and
read the others, in a fiftieth of the time, and the mapped pages are shared by every worker.
The guesser itself is py3langid's own ``LanguageIdentifier``, built from the same arrays its
``from_model_file`` builds it from. Where the cache cannot be read or written, the model is read
as py3langid reads it.
"""

import functools
import json
import logging
import os
import shutil
import tempfile
from array import array
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from py3langid import langid, modelio

logger = logging.getLogger(__name__)

def cache_folder() -> Path:
    """``$XDG_CACHE_HOME/blogarchive``, ``~/.cache/blogarchive`` when it is unset."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "blogarchive"


@functools.cache
def guesser() -> langid.LanguageIdentifier:
    """This process's guesser: ``identifier()``, made once."""
    return identifier()


def identifier(folder: Path | None = None) -> langid.LanguageIdentifier:
    """py3langid's ``LanguageIdentifier`` with its default model, its arrays read from ``folder``
    (``cache_folder()``), where they are written first if they are not there yet."""
    source = langid.MODEL_DIR / langid.MODEL_FILE
    stat = source.stat()
    copy = (folder or cache_folder()) / f"py3langid-{version('py3langid')}-{stat.st_size}-{stat.st_mtime_ns}"
    try:
        model = _read(copy)
    except (OSError, ValueError):
        model = modelio.load_model(source)
        shutil.rmtree(copy, ignore_errors=True)  # a copy that could not be read (nothing when there is none)
        try:
            _write(copy, model)
        except OSError as e:
            logger.debug("py3langid's model not cached in %s: %s", copy, e)
    ptc, pc, classes, nextmove, row, output = model
    return langid.LanguageIdentifier(np.asarray(ptc), np.asarray(pc), classes, nextmove, output, tk_row=row)


def _read(folder: Path) -> tuple[Any, ...]:
    ptc = np.load(folder / "ptc.npy", mmap_mode="r", allow_pickle=False)
    pc = np.load(folder / "pc.npy", allow_pickle=False)
    nextmove, row = (_as_array(np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False))
                     for name in ("nextmove", "row"))
    output = np.load(folder / "output.npy", allow_pickle=False).tolist()
    classes = json.loads((folder / "classes.json").read_text())
    if len(output) != len(row) or not len(classes) == len(pc) == ptc.shape[1]:
        raise ValueError(f"{folder}: arrays of different lengths")
    return ptc, pc, classes, nextmove, row, output


def _write(folder: Path, model: tuple[Any, ...]) -> None:
    """The arrays into a new folder renamed ``folder`` once whole (a process that wrote it meanwhile wins)."""
    ptc, pc, classes, nextmove, row, output = model
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".writing-") as tmp:
        part = Path(tmp) / "model"
        part.mkdir()
        np.save(part / "ptc.npy", ptc, allow_pickle=False)
        np.save(part / "pc.npy", pc, allow_pickle=False)
        for name, values in (("nextmove", nextmove), ("row", row)):
            np.save(part / f"{name}.npy", np.frombuffer(values, dtype=f"u{values.itemsize}"), allow_pickle=False)
        np.save(part / "output.npy", np.asarray(output, dtype=np.int32), allow_pickle=False)
        (part / "classes.json").write_text(json.dumps(classes))
        try:
            part.rename(folder)
        except OSError:
            if not folder.is_dir():
                raise


def _as_array(values: np.ndarray) -> array:
    """An unsigned ``array.array`` of a mapped ``.npy`` (py3langid walks its automaton in one)."""
    out = array({2: "H", 4: "I", 8: "L"}[values.dtype.itemsize])
    out.frombytes(values.view(np.uint8).data)
    return out
