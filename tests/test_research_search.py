"""The retrieval layer: chunks, ranking, the incremental index, embeddings through the
model seam (the fake server's toy vectors), and `localagent search` on the command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from research_support import make_package
from support import cli_env, run_cli

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.models import make_model
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.research.answer import save
from localagent.research.chunks import chunk_file, parse
from localagent.research.index import update
from localagent.research.retrieval import Searcher, fuse
from localagent.research.search import index_folder, open_index, search
from localagent.research.tokens import tokens
from localagent.research.vectors import Vectors, prefixes
from localagent.system.errors import ModelUnavailable
from localagent.system.safefs import UnsafeFile

EMBED = "nomic-embed-text"


def test_tokens_keep_identifiers_and_their_parts() -> None:
    assert list(tokens("getProxyBypass")) == ["getproxybypass", "get", "proxy", "bypass"]
    assert list(tokens("resolve_redirects")) == ["resolve_redirect", "resolv", "redirect"]
    assert set(tokens("HTTPAdapter")) == {"httpadapter", "http", "adapter"}
    assert list(tokens("the proxies were resolved")) == ["proxy", "resolv"]


def test_python_is_chunked_by_function_method_and_remainders(tmp_path: Path) -> None:
    text = make_package(tmp_path).joinpath("shop/sessions.py").read_text()
    chunks = chunk_file("shop/sessions.py", text, parse("shop/sessions.py", text))
    symbols = [(c.symbol, c.kind, c.start, c.end) for c in chunks]
    assert ("<module>", "module", 1, 4) in symbols
    assert ("Session", "class", 7, 10) in symbols
    assert ("Session.request", "function", 12, 17) in symbols
    assert ("Session.resolve_redirects", "function", 22, 29) in symbols
    broken = chunk_file("x.py", "def (:\n", parse("x.py", "def (:\n"))
    assert [(c.kind, c.start, c.end) for c in broken] == [("lines", 1, 2)]


def test_search_ranks_the_function_that_answers(tmp_path: Path) -> None:
    root = make_package(tmp_path)
    found = search(root, "how is the basic auth header built", 3, Settings())
    assert found.mode == "lexical"
    assert (found.hits[0].path, found.hits[0].symbol) == ("shop/auth.py", "basic_auth_header")
    assert any("lexical search only" in note for note in found.notes)
    top = search(root, "where are redirects followed", 1, Settings()).hits[0]
    assert (top.path, top.symbol, top.start, top.end) == (
        "shop/sessions.py",
        "Session.resolve_redirects",
        22,
        29,
    )
    paths = {
        hit.path for hit in search(root, "basic_auth_header resolve_redirects", 50, Settings()).hits
    }
    assert "build/generated.py" not in paths and ".venv/lib.py" not in paths  # .gitignore, venv


def test_files_rank_code_above_prose(tmp_path: Path) -> None:
    searcher = Searcher(update(make_package(tmp_path), None))
    ranked = [path for path, _ in searcher.files("sessions auth redirects carts checks")]
    assert ranked.index("README.md") > ranked.index("shop/sessions.py")


def test_one_edit_reindexes_one_file(tmp_path: Path) -> None:
    root = make_package(tmp_path)
    first = open_index(root)
    assert first.counts["chunked"] == 7 and (root / ".agent_context/index/files.json").is_file()
    assert open_index(root).counts == {}  # nothing changed: nothing read
    cart = root / "shop/cart.py"
    cart.write_text(cart.read_text() + "\n\ndef discount(total):\n    return total * 0.9\n")
    again = open_index(root)
    assert again.counts == {"read": 1, "chunked": 1}
    assert [row[2] for row in again.files["shop/cart.py"]["chunks"]][-1] == "discount"
    os.utime(root / "shop/auth.py", ns=(1, 1))  # a new mtime, the same content
    assert open_index(root).counts == {"read": 1, "touched": 1}
    (root / "shop/auth.py").unlink()
    assert open_index(root).counts == {"removed": 1}
    assert search(root, "basic auth header", 5, Settings()).hits[0].path != "shop/auth.py"


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs need privileges")
def test_a_planted_index_is_refused(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".agent_context").mkdir()
    (root / ".agent_context/index").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeFile, match="not a folder"):
        index_folder(root)
    (root / ".agent_context/index").unlink()
    (root / ".agent_context/index").mkdir()
    os.mkfifo(root / ".agent_context/index/files.json")
    with pytest.raises(UnsafeFile, match="FIFO"):
        open_index(root)
    (root / ".agent_context/answers").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeFile, match="not a folder"):
        save(Journal(root), "why?", "because")
    assert list(outside.iterdir()) == []


def test_embedding_prefixes_follow_the_model_family() -> None:
    assert prefixes("nomic-embed-text:latest") == ("search_document: ", "search_query: ")
    assert prefixes("intfloat/multilingual-e5-small") == ("passage: ", "query: ")
    assert prefixes("all-minilm") == ("", "")


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_hybrid_search_embeds_once_and_fuses(tmp_path: Path, backend: str) -> None:
    root = make_package(tmp_path)
    with FakeServer({"models": [{"name": "coder"}, {"name": EMBED}]}) as fake:
        settings = Settings(
            backend=backend,
            ollama_host=fake.url,
            base_url=fake.url + "/v1",
            model="coder",
            embed_model=EMBED,
        )
        found = search(root, "where are redirects followed", 3, settings)
        assert found.mode == "hybrid"
        assert "Session.resolve_redirects" in [hit.symbol for hit in found.hits]
        first = list(fake.requests)
        assert first[0]["input"][0].startswith("search_document: ")
        assert first[-1]["input"] == ["search_query: where are redirects followed"]
        search(root, "basic auth", 3, settings)  # cached vectors: only the query is embedded
        assert [r["input"] for r in fake.requests[len(first) :]] == [["search_query: basic auth"]]


def test_reciprocal_rank_fusion_uses_k_60() -> None:
    fused = dict(fuse([[(1, 9.0), (2, 5.0)], [(2, 0.9), (3, 0.8)]]))
    assert fused == pytest.approx({1: 1 / 61, 2: 1 / 62 + 1 / 61, 3: 1 / 62})
    assert next(iter(fused)) == 2


def test_a_missing_embedding_model_names_it(tmp_path: Path) -> None:
    index = update(make_package(tmp_path), None)
    with FakeServer({"models": [{"name": "coder"}]}) as fake:
        model = make_model(
            ModelConfig.of(Settings(ollama_host=fake.url, model="coder", embed_model=EMBED))
        )
        with pytest.raises(ModelUnavailable, match=f"ollama pull {EMBED}"):
            Vectors.build(model, EMBED, index, None)


def test_search_on_the_command_line(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")
    env = cli_env("127.0.0.1:9", LOCALAGENT_HOME=str(tmp_path / "home"))
    done = run_cli(env, "search", "basic auth header", "-w", str(root), "-k", "2", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["mode"] == "lexical" and len(found["results"]) == 2
    assert found["results"][0] | {"score": 0} == {
        "path": "shop/auth.py",
        "start": 6,
        "end": 9,
        "symbol": "basic_auth_header",
        "kind": "function",
        "score": 0,
        "head": "def basic_auth_header(username, password):",
    }
    text = run_cli(env, "search", "redirects", "-w", str(root), "-k", "1")
    assert "shop/sessions.py:22-29 Session.resolve_redirects" in text.stdout
    empty = run_cli(env, "search", "  ", "-w", str(root))
    assert empty.returncode == 2 and "query is empty" in empty.stderr
    missing = run_cli(env, "search", "x", "-w", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and not (tmp_path / "nowhere").exists()


def test_an_empty_workspace_has_no_results(tmp_path: Path) -> None:
    assert search(tmp_path, "anything", 5, Settings()).hits == []


def test_a_shipped_index_is_ignored_and_built_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_package(tmp_path / "ws")
    folder = root / ".agent_context/index"
    folder.mkdir(parents=True)
    info = (root / "shop/auth.py").stat()
    # What a repository can ship: chunks never read from its files, matching their stat.
    chunk = [1, 2, "planted", "function", "k", "PLANTED", {"basic": 9, "auth": 9, "header": 9}]
    entry = {"mtime": info.st_mtime_ns, "size": info.st_size, "sha": "x", "chunks": [chunk]}
    shipped = {"version": 2, "files": {"shop/auth.py": entry}}
    (folder / "files.json").write_bytes(json.dumps(shipped).encode())
    index = open_index(root)
    assert index.counts["chunked"] == 7
    assert any("ignored the index" in note for note in index.notes)
    assert search(root, "basic auth header", 1, Settings()).hits[0].symbol == "basic_auth_header"
    assert open_index(root).counts == {}  # the new one is this user's, made here: used
    copy = make_package(tmp_path / "copy")  # this user's index, but not built in this workspace
    (copy / ".agent_context/index").mkdir(parents=True)
    (copy / ".agent_context/index/files.json").write_bytes((folder / "files.json").read_bytes())
    assert open_index(copy).counts["chunked"] == 7
    monkeypatch.setenv("LOCALAGENT_HOME", str(tmp_path / "another-user"))
    assert open_index(root).counts["chunked"] == 7


def test_a_shipped_vector_cache_is_embedded_anew(tmp_path: Path) -> None:
    root = make_package(tmp_path)
    with FakeServer({"models": [{"name": "coder"}, {"name": EMBED}]}) as fake:
        settings = Settings(ollama_host=fake.url, model="coder", embed_model=EMBED)
        search(root, "basic auth", 3, settings)
        documents = len(fake.requests) - 1
        cache = root / f".agent_context/index/vectors-{EMBED}.json"
        keys = [row[4] for _, row in open_index(root).chunk_rows()]
        cache.write_text(json.dumps({key: [1.0, 0.0] for key in keys}))  # steered vectors
        before = len(fake.requests)
        found = search(root, "where are redirects followed", 3, settings)
        assert len(fake.requests) - before == documents + 1  # every chunk embedded again
        assert "Session.resolve_redirects" in [hit.symbol for hit in found.hits]
