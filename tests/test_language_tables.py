"""The language tables are data (tog_core/scoring/languages/*.toml): every file shipped loads, a wheel ships them, and
a bad file fails with a message naming the file and the table."""
from __future__ import annotations

import fnmatch
import shutil
import tomllib
from pathlib import Path

import pytest

from tog_core.scoring.languages import TABLES, LanguageTableError, load

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "tog_core" / "scoring" / "languages"


def test_the_shipped_files_load_english_first():
    assert list(TABLES.spaced) == ["en", "fr"] and list(TABLES.unspaced) == ["zh"]
    en, fr, zh = TABLES.spaced["en"], TABLES.spaced["fr"], TABLES.unspaced["zh"]
    assert en.stemmer is None and fr.stemmer == "french"  # "suffixes": the English suffix stripper
    assert "quel" in fr.extra_stop_words and "quel" not in fr.stop_words  # the extra list stays apart (its rule)
    assert "the" in en.stop_words and "les" in fr.stop_words  # ours; bm25s's French list
    assert en.recurs is not None and en.recurs.search("they share actors") and not en.recurs.search("shared_x")
    assert fr.recurs is None and zh.possessive == "的" and zh.question_words[0] == "什么地方"  # kept in order


def test_a_wheel_ships_every_data_file_of_the_package():
    found = [p.relative_to(ROOT) for p in (ROOT / "tog_core").rglob("*")
             if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    for path in found:
        shipped = any(path.parent.as_posix().startswith(pkg.replace(".", "/"))
                      and fnmatch.fnmatch(path.relative_to(pkg.replace(".", "/")).as_posix(), glob)
                      for pkg, globs in data.items() for glob in globs)
        assert shipped, f"{path} is in no package-data glob of pyproject.toml: a wheel would leave it out"
    assert Path("tog_core/scoring/languages/en.toml") in found


def _folder(tmp_path: Path, name: str, change) -> Path:
    """The shipped files in a folder of their own, one of them changed."""
    for p in FOLDER.glob("*.toml"):
        shutil.copy(p, tmp_path / p.name)
    f = tmp_path / name
    f.write_text(change(f.read_text(encoding="utf-8")), encoding="utf-8")
    return tmp_path


def _without(key: str):
    return lambda text: "\n".join(line for line in text.splitlines() if not line.startswith(f"{key} ="))


BAD = [
    ("en.toml", _without("kind_words"), "missing table 'kind_words': add it as words separated by spaces"),
    ("fr.toml", lambda t: t.replace('framing = "nom noms appelle"', 'framing = ["nom", "noms"]'),
     "table 'framing' must be words separated by spaces"),
    ("en.toml", lambda t: 'kindwords = "kind"\n' + t, "unknown table 'kindwords'"),
    ("en.toml", lambda t: t.replace('type_asking = "what which"', 'type_asking = "What which"'),
     "table 'type_asking': 'What' must be lower case"),
    ("fr.toml", lambda t: t.replace('stemmer = "french"', 'stemmer = "francais"'),
     "table 'stemmer': 'francais' is no Snowball stemmer"),
    ("fr.toml", lambda t: t.replace('bm25s_stop_words = "french"', 'bm25s_stop_words = "klingon"'),
     "table 'bm25s_stop_words': bm25s has no list 'klingon'"),
    ("en.toml", lambda t: t.replace("'also', ", "'als(o', "), "table 'recurs': 'als(o' is no regular expression"),
    ("en.toml", lambda t: t.replace("PERSON = ", "person = "), "'person' must be an entity type in upper case"),
    ("en.toml", lambda t: t.replace("[asks_for]\nwho", "[asks_for]\nWho"), "table 'asks_for': 'Who' must be lower"),
    ("en.toml", lambda t: t.replace('kind_words = "kind', 'kind_words = "genre kind'),
     "table 'kind_words': 'genre' must be in 'auxiliaries' too"),
    ("zh.toml", _without("possessive"), "missing table 'possessive'"),
    ("zh.toml", _without("script"), "missing table 'script'"),
    ("zh.toml", lambda t: t.replace('script = "unspaced"', 'script = "cjk"'), "table 'script' must be \"spaced\""),
    ("en.toml", lambda t: t.replace("[type_words]", "[type_words"), "not valid TOML"),
]


@pytest.mark.parametrize("name,change,message", BAD, ids=[b[2][:40] for b in BAD])
def test_a_bad_file_names_the_file_and_the_table(tmp_path, name, change, message):
    with pytest.raises(LanguageTableError) as err:
        load(_folder(tmp_path, name, change))
    assert f"{name}: " in str(err.value) and message in str(err.value)


def test_a_language_the_code_reads_by_name_must_be_there(tmp_path):
    folder = _folder(tmp_path, "zh.toml", lambda t: t)
    (folder / "zh.toml").unlink()
    with pytest.raises(LanguageTableError, match=r"zh.toml \(script = \"unspaced\"\) is needed"):
        load(folder)


def test_a_new_language_is_a_file_and_reads_after_english(tmp_path):
    folder = _folder(tmp_path, "en.toml", lambda t: t)
    (folder / "de.toml").write_text((FOLDER / "en.toml").read_text(encoding="utf-8")
                                    .replace('stemmer = "suffixes"', 'stemmer = "german"'), encoding="utf-8")
    tables = load(folder)
    assert list(tables.spaced) == ["en", "de", "fr"] and tables.spaced["de"].stemmer == "german"
