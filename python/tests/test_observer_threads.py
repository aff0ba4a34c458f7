"""InputObserver observed from several threads at once: every call recorded whole, each stored call's arguments
those that call was given."""
import threading

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")

from hookscope.torch import InputObserver  # noqa: E402


class Model(torch.nn.Module):
    def forward(self, input_ids, past=None):
        out = input_ids.float().sum(dim=1)
        if past is not None:
            out = out + past[0].sum() + past[1].sum()
        return out


@pytest.mark.parametrize("threads,calls", [(8, 50), (4, 1)], ids=["8x50", "4x1"])
def test_infer_arguments_from_calls_made_by_several_threads(threads, calls):
    m, obs = Model(), InputObserver()
    given: dict[int, dict] = {}  # a unique marker value in input_ids[0, 0] -> the call's arguments
    start = threading.Barrier(threads)

    def worker(w):
        start.wait()  # the threads call at the same time
        for c in range(calls):
            marker = w * calls + c
            b, s = 1 + marker % 3, 2 + marker % 5
            ids = torch.full((b, s), marker, dtype=torch.int64)
            past = (torch.full((b, 2, marker % 4, 2), float(marker)), torch.full((b, 2, marker % 4, 2), -1.0))
            given[marker] = {"input_ids": ids.clone(), "past": (past[0].clone(), past[1].clone())}
            out = m(input_ids=ids, past=past)
            assert torch.equal(out, Model.forward(m, ids, past))

    with obs(m, store_n_calls=threads * calls):
        pool = [threading.Thread(target=worker, args=(w,)) for w in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    assert obs.num_obs == threads * calls
    markers = set()
    for i in range(threads * calls):
        kwargs = obs.infer_arguments(i)
        marker = int(kwargs["input_ids"][0, 0])
        markers.add(marker)
        expected = given[marker]
        assert torch.equal(kwargs["input_ids"], expected["input_ids"])
        assert type(kwargs["past"]) is tuple
        assert all(torch.equal(a, b) for a, b in zip(kwargs["past"], expected["past"]))
    assert markers == set(range(threads * calls))  # every call once


def test_threads_beyond_store_n_calls_store_exactly_that_many():
    m, obs = Model(), InputObserver()
    start = threading.Barrier(6)

    def worker(w):
        start.wait()
        for c in range(20):
            m(input_ids=torch.full((1, 2 + c % 3), w * 100 + c))

    with obs(m, store_n_calls=7):
        pool = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    assert obs.num_obs == 7 == len(obs._calls)
    for i in range(7):  # each stored call's arguments are its own
        assert torch.equal(obs.infer_arguments(i)["input_ids"], obs._calls[i].snapshot[1]["input_ids"])
