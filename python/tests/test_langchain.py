"""shoal.langchain: LangChain's standard vector-store suite, unmodified, and
the store's own promises (ids, collisions, durability, filters)."""

from __future__ import annotations

import inspect
import os
import tempfile
from collections.abc import Generator

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_tests")

import numpy as np  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_tests.integration_tests import VectorStoreIntegrationTests  # noqa: E402

import shoal  # noqa: E402
import shoal.langchain as shoal_langchain  # noqa: E402
from shoal.langchain import IdCollisionError, ShoalVectorStore  # noqa: E402

_SHM = "/dev/shm" if os.path.isdir("/dev/shm") else None  # RAM: no disk I/O


class TestShoalStandard(VectorStoreIntegrationTests):
    """langchain-tests' suite (sync and async), each test on an empty store
    in a fresh directory."""

    metric = "cosine"

    @pytest.fixture()
    def vectorstore(self) -> Generator[ShoalVectorStore, None, None]:  # type: ignore[override]
        with tempfile.TemporaryDirectory(dir=_SHM, prefix="shoal-lc-") as d:
            store = ShoalVectorStore(self.get_embeddings(), path=d, metric=self.metric)
            try:
                yield store
            finally:
                store.close()


class TestShoalStandardL2(TestShoalStandard):
    """The suite again on an l2 collection. (Not on ip: its tests expect a
    text's own vector nearest, which inner product does not promise.)"""

    metric = "l2"


# The suite's async tests carry no asyncio mark: LangChain's repos run
# pytest-asyncio in auto mode. Mark them where they are (the suite's
# test_no_overrides_DO_NOT_OVERRIDE refuses copies), so that they run in
# pytest-asyncio's default strict mode too, and the sync ones stay unmarked.
for _name, _test in inspect.getmembers(VectorStoreIntegrationTests,
                                       inspect.iscoroutinefunction):
    if _name.startswith("test_") and not any(
            m.name == "asyncio" for m in getattr(_test, "pytestmark", [])):
        pytest.mark.asyncio(_test)


@pytest.fixture()
def embedding() -> DeterministicFakeEmbedding:
    return DeterministicFakeEmbedding(size=8)


def _docs(*texts: str) -> list[Document]:
    return [Document(page_content=t, metadata={"n": i}) for i, t in enumerate(texts)]


def test_ids_round_trip(tmp_path, embedding) -> None:
    ids = ["a", "é/ü 🐟", "x" * 300, ""]  # "" gets a uuid4, as no id does
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        out = store.add_texts(["t0", "t1", "t2", "t3"], ids=ids)
        assert out[:3] == ids[:3]
        assert len(out[3]) == 36  # a uuid4
        got = store.get_by_ids(list(reversed(out)))
        assert [d.id for d in got] == list(reversed(out))  # the order asked
        assert [d.page_content for d in got] == ["t3", "t2", "t1", "t0"]
        hits = store.similarity_search("t1", k=1)
        assert hits[0].id == ids[1]


def test_documents_survive_close_and_reopen(tmp_path, embedding) -> None:
    docs = [Document(page_content="foo", metadata={"k": [1, "two", None], "f": 1.5}),
            Document(page_content="bar", metadata={})]
    store = ShoalVectorStore(embedding, path=str(tmp_path))
    ids = store.add_documents(docs, ids=["1", "2"])
    store.close()
    with ShoalVectorStore(embedding, path=str(tmp_path)) as reopened:
        assert reopened.get_by_ids(ids) == [
            Document(id="1", page_content="foo", metadata={"k": [1, "two", None], "f": 1.5}),
            Document(id="2", page_content="bar", metadata={})]
        assert reopened.similarity_search("bar", k=1)[0].id == "2"
        reopened.delete(["1"])
    with ShoalVectorStore(embedding, path=str(tmp_path)) as again:
        assert [d.id for d in again.get_by_ids(["1", "2"])] == ["2"]


@pytest.fixture()
def colliding(monkeypatch):
    """Every id hashes to 7, except "z..." ids, which hash to 8."""
    monkeypatch.setattr(shoal_langchain, "string_id_to_key",
                        lambda s: 8 if s.startswith("z") else 7)


def test_collision_with_stored_document_is_refused(tmp_path, embedding, colliding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        store.add_texts(["first"], ids=["a"])
        with pytest.raises(IdCollisionError, match="'b'.*'a'"):
            store.add_texts(["other", "fine"], ids=["zz", "b"])
        # Nothing of the refused batch was written, and "a" is intact.
        assert store.get_by_ids(["zz", "b"]) == []
        assert store.get_by_ids(["a"])[0].page_content == "first"
        # Deleting or reading the colliding id never touches "a".
        store.delete(["b"])
        assert store.get_by_ids(["a"])[0].page_content == "first"
        # Replacing "a" itself is not a collision.
        store.add_texts(["second"], ids=["a"])
        assert store.get_by_ids(["a"])[0].page_content == "second"


def test_collision_within_one_batch_is_refused(tmp_path, embedding, colliding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        with pytest.raises(IdCollisionError, match="same shoal id"):
            store.add_texts(["x", "y"], ids=["a", "b"])
        assert store.get_by_ids(["a", "b"]) == []


def test_record_not_written_by_the_store_is_a_collision(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        store.add_texts(["x"], ids=["mine"])
        key = shoal_langchain.string_id_to_key("theirs")
        store.db.collection("langchain").put(key, np.ones(8, np.float32),
                                             payload=b"not json")
        with pytest.raises(IdCollisionError, match="not written by"):
            store.add_texts(["y"], ids=["theirs"])
        assert store.get_by_ids(["theirs"]) == []


def test_string_id_to_key_is_stable() -> None:
    # blake2b-64 of "1", little-endian: a changed mapping would orphan every
    # stored document, so it is pinned here.
    import hashlib
    expected = int.from_bytes(hashlib.blake2b(b"1", digest_size=8).digest(), "little")
    assert shoal_langchain.string_id_to_key("1") == expected


def test_later_duplicate_in_a_batch_wins(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        assert store.add_texts(["old", "new"], ids=["d", "d"]) == ["d", "d"]
        assert [d.page_content for d in store.get_by_ids(["d"])] == ["new"]


def test_scores_and_relevance_follow_the_metric(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        store.add_texts(["foo", "bar"], ids=["1", "2"])
        (doc, dist), _ = store.similarity_search_with_score("foo", k=2)
        assert doc.id == "1" and dist == pytest.approx(0.0, abs=1e-5)
        rel = store.similarity_search_with_relevance_scores("foo", k=1)
        assert rel[0][1] == pytest.approx(1.0, abs=1e-5)


def test_filter_on_declared_int_fields_is_exact(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path), filter_fields=("year",)) as store:
        store.add_texts([f"t{i}" for i in range(20)],
                        [{"year": 2000 + i % 4} for i in range(20)])
        hits = store.similarity_search("t0", k=10, filter={"year": 2001})
        assert len(hits) == 5
        assert all(d.metadata["year"] == 2001 for d in hits)
        with pytest.raises(NotImplementedError, match="filter_fields"):
            store.similarity_search("t0", filter={"other": 1})
        with pytest.raises(ValueError, match="must be an int"):
            store.add_texts(["bad"], [{"year": "2001"}])


def test_filter_unsupported_without_declared_fields(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        store.add_texts(["x"])
        with pytest.raises(NotImplementedError):
            store.similarity_search("x", filter={"n": 1})


def test_mmr_returns_k_distinct_documents(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        store.add_documents(_docs(*[f"t{i}" for i in range(10)]))
        hits = store.max_marginal_relevance_search("t3", k=3, fetch_k=8)
        assert len({d.id for d in hits}) == 3
        assert hits[0].page_content == "t3"


def test_from_texts_and_an_open_db(tmp_path, embedding) -> None:
    with shoal.open(str(tmp_path)) as db:
        store = ShoalVectorStore.from_texts(["a", "b"], embedding, ids=["1", "2"],
                                            db=db, collection="docs")
        assert [d.id for d in store.get_by_ids(["2", "1"])] == ["2", "1"]
        store.close()  # the store does not own `db`
        assert not db.closed
        assert "docs" in db.list_collections()


def test_metric_mismatch_on_reopen_is_refused(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path), metric="l2") as store:
        store.add_texts(["x"])
    with pytest.raises(ValueError, match="metric"):
        ShoalVectorStore(embedding, path=str(tmp_path))  # cosine by default


def test_documents_in_flushed_segments_are_found(tmp_path, embedding) -> None:
    texts = [f"doc {i}" for i in range(300)]
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        ids = store.add_texts(texts[:200])
        store.db.flush()  # these now live in segments, the rest in memtables
        ids += store.add_texts(texts[200:])
        store.delete(ids[:10])
        got = store.get_by_ids(ids)
        assert [d.page_content for d in got] == texts[10:]
        for i in (10, 150, 250):
            assert store.similarity_search(texts[i], k=1)[0].id == ids[i]


def test_threads_add_and_search_at_once(tmp_path, embedding) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        store.add_texts(["seed"], ids=["seed"])

        def work(t: int) -> None:
            for j in range(20):
                store.add_texts([f"t{t}-{j}"], ids=[f"{t}-{j}"])
                assert store.similarity_search(f"t{t}-{j}", k=1)[0].id == f"{t}-{j}"

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(work, range(4)))
        assert len(store.get_by_ids([f"{t}-{j}" for t in range(4) for j in range(20)])) == 80


_WRITER = """
import sys
from langchain_core.embeddings import DeterministicFakeEmbedding
from shoal.langchain import ShoalVectorStore
store = ShoalVectorStore(DeterministicFakeEmbedding(size=8), path=sys.argv[1])
i = 0
while True:
    ids = [f"{i}-{j}" for j in range(10)]
    store.add_texts([f"text of {x}" for x in ids], [{"n": i}] * 10, ids=ids)
    print(i, flush=True)  # batch i is acknowledged
    i += 1
"""


def test_killed_writer_loses_no_acknowledged_document(tmp_path, embedding) -> None:
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        acked = [int(proc.stdout.readline()) for _ in range(30)]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        for i in range(acked[-1] + 3):  # acknowledged batches, and a few more
            ids = [f"{i}-{j}" for j in range(10)]
            got = store.get_by_ids(ids)
            if i <= acked[-1]:
                assert [d.id for d in got] == ids
            # Whatever survived is whole: its text and metadata with it.
            assert all(d.page_content == f"text of {d.id}" and d.metadata == {"n": i}
                       for d in got)


def test_delete_collection_empties_the_store(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        store.add_texts(["a", "b"], ids=["1", "2"])
        store.delete_collection()
        assert store.similarity_search("a") == []
        assert store.get_by_ids(["1"]) == []
        store.add_texts(["c"], ids=["3"])
        assert [d.id for d in store.similarity_search("a")] == ["3"]


def test_delete_without_ids_is_refused(tmp_path, embedding) -> None:
    with ShoalVectorStore(embedding, path=str(tmp_path)) as store:
        store.add_texts(["a"], ids=["1"])
        with pytest.raises(ValueError, match="delete_collection"):
            store.delete()
        assert len(store.get_by_ids(["1"])) == 1
