"""py3langid's model, read from an uncompressed copy in the user's cache (crawler.extract.langmodel).

The guesser made from the copy is py3langid's own, and guesses what py3langid guesses, with the
same score, on text of many languages; a copy that cannot be read is made again, and where no
copy can be written the model is read as py3langid reads it. An extraction worker, warming up,
leaves the copy in its cache folder.
"""

import os
import subprocess
import sys

import py3langid
import pytest
from conftest import ROOT

from crawler.extract import langmodel

TEXTS = [
    "An archive keeps a faithful copy of a blog: its posts, its feed, its tags and its pages.",
    "Une archive garde une copie fidèle d'un blog : ses billets, son flux et ses étiquettes.",
    "Ein Archiv bewahrt eine getreue Kopie eines Blogs: seine Beiträge, seinen Feed, seine Schlagwörter.",
    "Un archivio conserva una copia fedele di un blog: i suoi articoli, il suo feed e le sue etichette.",
    "Un archivo guarda una copia fiel de un blog: sus entradas, su canal y sus etiquetas.",
    "Архив хранит точную копию блога: его записи, ленту и метки.",
    "Αρχείο που κρατά πιστό αντίγραφο ενός ιστολογίου και των αναρτήσεών του.",
    "Bir arşiv, bir blogun gönderilerinin, beslemesinin ve etiketlerinin sadık bir kopyasını tutar.",
    "档案保存着一个博客的忠实副本：它的文章、订阅源和标签。",
    "アーカイブはブログの投稿、フィード、タグの忠実な写しを保存します。",
    "보관소는 블로그의 글과 피드와 태그를 충실하게 복사해 둡니다.",
    "print(sum(x * x for x in range(10)))",
    "",
]


def guesses(identifier):
    return [identifier.classify(text) for text in TEXTS]


def test_the_copy_guesses_what_py3langid_guesses(tmp_path):
    expected = [py3langid.classify(text) for text in TEXTS]
    assert guesses(langmodel.identifier(tmp_path)) == expected  # read as py3langid reads it, and copied
    (copy,) = tmp_path.iterdir()
    assert {p.name for p in copy.iterdir()} == {"ptc.npy", "pc.npy", "nextmove.npy", "row.npy", "output.npy",
                                                "classes.json"}
    written = {p.name: p.stat().st_mtime_ns for p in copy.iterdir()}
    assert guesses(langmodel.identifier(tmp_path)) == expected  # read from the copy
    assert {p.name: p.stat().st_mtime_ns for p in copy.iterdir()} == written  # not written again


def test_a_copy_that_cannot_be_read_is_made_again(tmp_path):
    expected = [py3langid.classify(text) for text in TEXTS]
    langmodel.identifier(tmp_path)
    (copy,) = tmp_path.iterdir()
    ptc = copy / "ptc.npy"
    size = ptc.stat().st_size
    with ptc.open("r+b") as f:
        f.truncate(size // 2)
    assert guesses(langmodel.identifier(tmp_path)) == expected
    assert ptc.stat().st_size == size
    assert [p.name for p in tmp_path.iterdir()] == [copy.name]  # no folder left half written


def test_without_a_place_for_the_copy_the_model_is_read_as_py3langid_reads_it(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert guesses(langmodel.identifier(blocked)) == [py3langid.classify(text) for text in TEXTS]


@pytest.mark.parametrize("xdg", [True, False])
def test_a_warming_worker_leaves_the_copy_in_the_cache_folder(tmp_path, xdg):
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    if xdg:
        env["XDG_CACHE_HOME"], cache = str(tmp_path / "xdg"), tmp_path / "xdg"
    else:
        env["HOME"], cache = str(tmp_path), tmp_path / ".cache"
    subprocess.run([sys.executable, "-c", "import crawler.extract.warmup"], cwd=ROOT, env=env, check=True)
    copies = list((cache / "blogarchive").glob("py3langid-*"))
    assert len(copies) == 1 and (copies[0] / "ptc.npy").is_file()
