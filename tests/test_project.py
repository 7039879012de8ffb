"""Finding projects, detecting versions, reading settings, typed errors for broken projects."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builders import GRAPHRAG_SAMPLES, METAQA, write_project
from tog_core.graphrag.graph import KnowledgeGraph
from tog_core.graphrag.project_env import ProjectEnv
from tog_core.graphrag.project import (EmptyTableError, MissingTableError, NotAProjectError, SchemaError, SettingsError,
                              UnreadableTableError, model_settings, open_project, read_dotenv,
                                       read_settings)

ROOT = Path(__file__).resolve().parents[1]
needs_samples = pytest.mark.skipif(not GRAPHRAG_SAMPLES.is_dir(),
                                   reason="../shared/data/graphrag is absent (only the CI machine and devs have it)")

SAMPLES = [("operation-dulce-v3", "3.x", "entities.parquet", "relationships.parquet"),
           ("christmas-carol-v3", "3.x", "entities.parquet", "relationships.parquet"),
           ("christmas-carol-v1.2", "1.x", "create_final_entities.parquet", "create_final_relationships.parquet")]


@needs_samples
@pytest.mark.parametrize("name,version,ent_file,rel_file", SAMPLES)
def test_real_samples_load_with_parquet_row_counts(name, version, ent_file, rel_file):
    out = GRAPHRAG_SAMPLES / name / "output"
    g = KnowledgeGraph.load(out)
    assert g.info.version == version
    n_ent = pq.read_metadata(out / ent_file).num_rows
    n_rel = pq.read_metadata(out / rel_file).num_rows
    assert g.counts["entities"] == n_ent
    assert g.counts["relationships"] == n_rel
    assert g.n_entities == n_ent + g.counts["placeholder_entities"]
    # every edge appears in both endpoints' neighbour lists (self-loops once)
    assert int(g.degrees.sum()) == 2 * n_rel - g.counts["self_loops"]


@needs_samples
def test_christmas_carol_quirks_are_counted_not_dropped():
    g = KnowledgeGraph.load(GRAPHRAG_SAMPLES / "christmas-carol-v3")
    assert g.counts["placeholder_entities"] == 32
    assert g.counts["reversed_duplicates"] == 43
    ph = [i for i in range(g.n_entities) if g.entity(i).placeholder]
    assert len(ph) == 32 and all(g.degree(i) > 0 for i in ph)
    rev = next(r for r in range(g.n_relationships) if g.relationship(r).reverse_of is not None)
    a, b = g.relationship(rev), g.relationship(g.relationship(rev).reverse_of)
    assert (a.source, a.target) == (b.target, b.source)


@needs_samples
@pytest.mark.parametrize("name,version,ent_file,rel_file", SAMPLES)
def test_inspect_json_cli(name, version, ent_file, rel_file):
    out = GRAPHRAG_SAMPLES / name / "output"
    proc = subprocess.run([sys.executable, "-m", "tog_core", "inspect", str(GRAPHRAG_SAMPLES / name), "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["version"] == version
    assert r["counts"]["entities"] == pq.read_metadata(out / ent_file).num_rows
    assert r["counts"]["relationships"] == pq.read_metadata(out / rel_file).num_rows


@pytest.mark.skipif(not METAQA.is_dir(), reason="../shared/data/kgqa/metaqa is absent")
def test_metaqa_titles_are_case_sensitive_first():
    g = KnowledgeGraph.load(METAQA)
    assert g.has_relation_labels
    i, j = g.find_title("Clint Eastwood"), g.find_title("clint eastwood")
    assert i is not None and j is not None and i != j
    assert g.title(i) == "Clint Eastwood" and g.title(j) == "clint eastwood"


def test_legacy_04_name_column_and_03_artifacts(tmp_path):
    ents = [("A", "a"), ("B", "b")]
    write_project(tmp_path / "p04", ents, [("A", "B", "A knows B")], legacy=True, name_col="name")
    info = open_project(tmp_path / "p04")
    assert (info.version, info.entity_name_column, info.family) == ("0.4.x", "name", "legacy")
    assert KnowledgeGraph.load(info).find("b") == 1
    # 0.3.x keeps tables under output/<timestamp>/artifacts; the newest run wins
    for ts in ("20240101-000000", "20240301-000000"):
        art = tmp_path / "p03" / "output" / ts / "artifacts"
        write_project(tmp_path / "tmp" / ts, ents + ([("C", "c")] if ts.startswith("202403") else []),
                      [("A", "B", "x")], legacy=True)
        art.mkdir(parents=True)
        for f in (tmp_path / "tmp" / ts / "output").iterdir():
            f.rename(art / f.name)
    info = open_project(tmp_path / "p03")
    assert info.version == "0.3.x" and info.output_dir.parent.name == "20240301-000000"
    assert any("newest" in p for p in info.problems)


def test_settings_of_every_version_map_to_litellm(tmp_path):
    env = {"KEY": "sk-secret-value-123", "BASE": "https://example.invalid/v1"}
    v3 = {"completion_models": {"default_completion_model": {"model_provider": "openai", "model": "gpt-4.1",
                                                              "api_key": "${KEY}"}},
          "embedding_models": {"default_embedding_model": {"model_provider": "azure", "model": "te3",
                                                            "azure_deployment_name": "emb-dep",
                                                            "api_base": "${BASE}", "api_version": "2024-02-01",
                                                            "api_key": "${KEY}"}}}
    chat, emb = model_settings(v3, env)
    assert chat.litellm_model == "openai/gpt-4.1" and chat.api_key_env == "KEY" and chat.key_present
    assert emb.litellm_model == "azure/emb-dep" and emb.api_base == env["BASE"] and emb.api_version == "2024-02-01"
    v2 = {"models": {"default_chat_model": {"type": "azure_openai_chat", "model": "gpt-4o", "deployment_name": "dep",
                                            "api_key": "${KEY}", "api_base": "${BASE}", "api_version": "v"},
                     "default_embedding_model": {"type": "openai_embedding", "model": "te3", "api_key": "${KEY}"}}}
    chat, emb = model_settings(v2, env)
    assert (chat.litellm_model, emb.litellm_model) == ("azure/dep", "openai/te3")
    v1 = {"llm": {"type": "openai_chat", "model": "gpt-4-turbo", "api_key": "${KEY}"},
          "embeddings": {"llm": {"type": "openai_embedding", "model": "te3"}}}
    chat, emb = model_settings(v1, env)
    assert chat.litellm_model == "openai/gpt-4-turbo" and emb.litellm_model == "openai/te3"
    for m in (chat, emb):
        assert "sk-secret-value-123" not in repr(m) and "sk-secret-value-123" not in json.dumps(m.public_dict())


def test_dotenv_supplies_variables_and_key_never_printed(tmp_path):
    settings = ("completion_models:\n  default_completion_model:\n    model_provider: openai\n"
                "    model: gpt-4.1-mini\n    api_key: ${MY_KEY}\n")
    root = write_project(tmp_path / "p", [("A", ""), ("B", "")], [("A", "B", "x")], settings=settings)
    (root / ".env").write_text("# comment\nexport MY_KEY='sk-dotenv-secret'\n")
    info = open_project(root, environ={})
    assert info.chat_model.key_present and info.chat_model.api_key_env == "MY_KEY"
    proc = subprocess.run([sys.executable, "-m", "tog_core", "inspect", str(root), "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and "sk-dotenv-secret" not in proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["chat_model"]["api_key"] == "set (hidden)"


def test_dotenv_is_read_the_way_graphrag_reads_it(tmp_path, monkeypatch):
    """python-dotenv's rules: `export`, quotes, inline comments, ${VAR} from earlier lines; a bare name is
    skipped; and the process environment is never written."""
    monkeypatch.delenv("TOG_DOTENV_A", raising=False)
    env_file = tmp_path / ".env"
    env_file.write_text("# comment\nexport TOG_DOTENV_A='one two'\nB=3 # inline\nC=\"${B}-x\"\nBARE\nD=\n")
    before = dict(os.environ)
    assert read_dotenv(env_file) == {"TOG_DOTENV_A": "one two", "B": "3", "C": "3-x", "D": ""}
    assert dict(os.environ) == before


def test_undefined_var_in_settings_is_a_typed_error_naming_the_var(tmp_path):
    settings = ("completion_models:\n  default_completion_model:\n    model_provider: openai\n"
                "    model: gpt-4.1\n    api_base: ${UNDEFINED_BASE_VAR}\n")
    root = write_project(tmp_path / "p", [("A", ""), ("B", "")], [("A", "B", "x")], settings=settings)
    with pytest.raises(SettingsError, match="UNDEFINED_BASE_VAR"):
        model_settings(read_settings(root / "settings.yaml", {}), {})
    info = open_project(root, environ={})  # the graph stays usable; the problem is reported
    assert info.chat_model is None and "UNDEFINED_BASE_VAR" in info.settings_error
    # an undefined key variable is not an error: the key is just missing
    settings_key = settings.replace("api_base: ${UNDEFINED_BASE_VAR}", "api_key: ${NOT_SET_KEY}")
    allowed = ProjectEnv(server={"TOG_PROJECT_ENV_VARS": "NOT_SET_KEY"})  # one the server may supply, unset
    chat, _ = model_settings(yaml_load(settings_key), allowed)
    assert chat.api_key_env == "NOT_SET_KEY" and not chat.key_present and not chat.key_note
    # one the server may not supply is not named as the key's variable (nothing reads it later); the note says why
    chat, _ = model_settings(yaml_load(settings_key), {})
    assert chat.api_key_env is None and not chat.key_present and "NOT_SET_KEY" in chat.key_note


def yaml_load(text):
    import yaml
    return yaml.safe_load(text)


def test_bad_yaml_and_unknown_model_type(tmp_path):
    root = write_project(tmp_path / "p", [("A", ""), ("B", "")], [("A", "B", "x")], settings="llm: [unclosed\n")
    info = open_project(root)
    assert "not valid YAML" in info.settings_error
    with pytest.raises(SettingsError, match="type 'quantum_chat'"):
        model_settings({"llm": {"type": "quantum_chat", "model": "m"}}, {})


def test_missing_relationships_file(tmp_path):
    root = write_project(tmp_path / "p", [("A", ""), ("B", "")], [("A", "B", "x")])
    (root / "output" / "relationships.parquet").unlink()
    with pytest.raises(MissingTableError, match="relationships"):
        open_project(root)


def test_no_title_or_name_column(tmp_path):
    root = write_project(tmp_path / "p", [("A", ""), ("B", "")], [("A", "B", "x")], name_col="label")
    with pytest.raises(SchemaError, match="neither a 'title' nor a 'name'") as err:
        open_project(root)
    assert "entities.parquet" in str(err.value)


def test_corrupt_and_zero_byte_parquet(tmp_path):
    root = write_project(tmp_path / "p", [("A", ""), ("B", "")], [("A", "B", "x")])
    rel = root / "output" / "relationships.parquet"
    rel.write_bytes(rel.read_bytes()[: len(rel.read_bytes()) // 2])
    with pytest.raises(UnreadableTableError, match="relationships.parquet"):
        KnowledgeGraph.load(root)
    (root / "output" / "entities.parquet").write_bytes(b"")
    with pytest.raises(UnreadableTableError, match="entities.parquet"):
        KnowledgeGraph.load(root)


def test_empty_tables(tmp_path):
    root = write_project(tmp_path / "p", [("A", ""), ("B", "")], [])
    with pytest.raises(EmptyTableError, match="relationships.parquet"):
        KnowledgeGraph.load(root)
    root = write_project(tmp_path / "q", [], [("A", "B", "x")])
    with pytest.raises(EmptyTableError, match="entities.parquet"):
        KnowledgeGraph.load(root)


def test_not_a_project(tmp_path):
    with pytest.raises(NotAProjectError, match="no GraphRAG tables"):
        open_project(tmp_path)
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(NotAProjectError, match="is a file"):
        open_project(f)
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    with pytest.raises(NotAProjectError, match="symlink loop"):
        open_project(loop)


def test_cli_error_is_one_line_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tog_core", "inspect", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert str(tmp_path) in proc.stderr and "give the project root" in proc.stderr


def test_non_string_titles_and_null_rows(tmp_path):
    root = tmp_path / "p"
    (root / "output").mkdir(parents=True)
    pq.write_table(pa.table({"id": ["a", "b", "c"], "title": [1, None, 3]}), root / "output" / "entities.parquet")
    pq.write_table(pa.table({"source": ["1", None], "target": ["3", "1"], "description": ["d", "e"]}),
                   root / "output" / "relationships.parquet")
    g = KnowledgeGraph.load(root)
    assert g.counts["skipped_entities"] == 1 and g.counts["skipped_relationships"] == 1
    assert g.find("1") is not None and g.counts["relationships"] == 1
