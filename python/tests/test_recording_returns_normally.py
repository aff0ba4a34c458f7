"""InputObserver's recording path: calls that return normally (and are recorded where the format can hold them)
although their values, the process or the warnings filter are hostile."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")

from hookscope.torch import InputObserver  # noqa: E402


class Echo(torch.nn.Module):
    def forward(self, x, y=None):
        return x


def _gen():
    yield 1


class _BadRepr:
    def __repr__(self):
        raise ValueError("no repr")

    def __hash__(self):
        return 1


@pytest.mark.parametrize("key", [10 ** 5000, _BadRepr()], ids=["int_beyond_str_digits", "repr_raises"])
def test_unrecordable_value_under_a_key_whose_repr_fails_returns_normally(key):
    # The value is unrecordable (a generator); locating it by path writes the keys' reprs, which fail here.
    m, obs = Echo(), InputObserver()
    x = torch.ones(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with obs(m):
            assert m(x, {key: _gen()}) is x
    assert obs.num_obs == 0
    assert len(caught) == 1 and "generator" in str(caught[0].message)


@pytest.mark.parametrize("keys", [
    [float("nan"), float("nan")],
    [1, "1", "int:1"],
    [1, "1", "int:1", "int:1#1"],
], ids=["two_nan", "str_key_equal_to_type_repr", "str_keys_equal_to_suffixes"])
def test_dict_keys_whose_texts_collide_are_recorded_and_rebuilt(keys):
    m, obs = Echo(), InputObserver()
    x = torch.ones(2, 3)
    y = {k: torch.full((i + 1,), float(i)) for i, k in enumerate(keys)}
    assert len(y) == len(keys)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with obs(m):
            m(x, y)
    assert obs.num_obs == 1
    args = obs.infer_arguments(0)
    got = args[1] if isinstance(args, tuple) else args["y"]
    assert type(got) is dict and len(got) == len(keys)
    for (k, v), (gk, gv) in zip(y.items(), got.items()):
        assert gk is k or (type(gk) is type(k) and gk == k)
        assert torch.equal(gv, v)


def test_store_n_calls_of_a_later_block_is_that_blocks():
    # torch.onnx's InputObserver: each block stores up to its own store_n_calls more calls.
    m, obs = Echo(), InputObserver()
    with obs(m, store_n_calls=1):
        for b in range(1, 4):
            m(torch.ones(b, 2))
    assert obs.num_obs == 1
    with obs(m, store_n_calls=5):
        for b in range(1, 8):
            m(torch.ones(b, 2))
    assert obs.num_obs == 6 == len(obs.info)
    with obs(m):  # the observer's own default (3)
        for b in range(1, 8):
            m(torch.ones(b, 2))
    assert obs.num_obs == 9


def _run(code: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=os.environ.copy())


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="signal.setitimer is POSIX")
def test_signal_handler_calling_the_model_while_recording_neither_deadlocks_nor_misorders():
    # A timer's handler calls the observed model thousands of times, some while the main thread holds the lock.
    code = """
        import signal, time, warnings, torch
        from hookscope.torch import InputObserver
        warnings.simplefilter("ignore")
        class M(torch.nn.Module):
            def forward(self, x):
                return x * 2
        m, obs = M(), InputObserver(store_n_calls=10 ** 9)
        handled = [0]
        def handler(sig, frame):
            handled[0] += 1
            m(torch.full((1, 2), -1.0))
        signal.signal(signal.SIGALRM, handler)
        with obs(m):
            signal.setitimer(signal.ITIMER_REAL, 0.0001, 0.0001)
            t0, i = time.time(), 0
            # two seconds, and on a loaded machine until the handler has run often enough (at most 40 s)
            while (time.time() - t0 < 2 or handled[0] <= 20) and time.time() - t0 < 40:
                i += 1
                m(torch.full((2, 2), float(i)))
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
        assert handled[0] > 20, handled
        assert obs.num_obs == len(obs._calls)
        # the engine's call k and the observer's stored call k are the same call
        info = obs.engine_info
        for k in range(0, obs.num_obs, max(1, obs.num_obs // 200)):
            assert list(obs._calls[k].shapes[0]) == info["calls"][k]["inputs"]["args"][0]["shape"]
        print("ok", handled[0], obs.num_obs)
    """
    try:
        done = _run(code, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("the process deadlocked: a signal handler called the model while recording held the lock")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX")
def test_fork_inside_the_block_while_a_thread_records():
    # The child records its own calls (not deadlocked by a lock a parent thread held at fork()); the parent goes on.
    code = """
        import os, signal, threading, warnings, torch
        from hookscope.torch import InputObserver
        warnings.simplefilter("ignore")
        class M(torch.nn.Module):
            def forward(self, x):
                return x * 2
        m, obs = M(), InputObserver(store_n_calls=10 ** 9)
        # torch makes an operator's handle at its first call under a static guard, the GIL released: made here, not
        # by the worker while the main thread forks (the child would then wait on that guard forever, inside torch).
        m(torch.ones(3, 2)).clone()
        stop = [False]
        def worker():
            while not stop[0]:
                m(torch.ones(3, 2))
        statuses = []
        with obs(m):
            th = threading.Thread(target=worker)
            th.start()
            for _ in range(20):
                pid = os.fork()
                if pid == 0:
                    signal.alarm(30)
                    before = obs.num_obs
                    m(torch.ones(4, 2))
                    os._exit(0 if obs.num_obs == before + 1 else 3)
                statuses.append(os.waitpid(pid, 0)[1])
            stop[0] = True
            th.join()
            parent = obs.num_obs
            m(torch.ones(5, 2))
        assert statuses == [0] * 20, statuses
        assert obs.num_obs == parent + 1 == len(obs._calls)
        assert all(tuple(c.shapes[0]) != (4, 2) for c in obs._calls)  # the children's calls are theirs
        print("ok")
    """
    done = _run(code, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_warnings_as_errors_do_not_break_the_call():
    m, obs = Echo(), InputObserver()
    x = torch.ones(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with obs(m):
            assert m(x, _gen()) is x  # unrecordable: left out, and the warning filter does not turn it into a failure
            assert m(x) is x
    assert obs.num_obs == 1


def test_model_exception_propagates_unchanged_under_warnings_as_errors():
    class Raises(torch.nn.Module):
        def forward(self, x, y=None):
            raise LookupError("the model's own")

    m, obs = Raises(), InputObserver()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with obs(m):
            for y in (None, _gen()):
                with pytest.raises(LookupError, match="the model's own") as info:
                    m(torch.ones(2), y)
                assert info.value.__context__ is None
    assert obs.num_obs == 1  # the call with a generator is left out; the other's inputs were seen


def test_keyboard_interrupt_in_model_propagates_and_threads_finish_while_the_block_exits():
    class Slow(torch.nn.Module):
        def forward(self, x):
            if x.shape[0] == 7:
                raise KeyboardInterrupt
            return x + 1

    m, obs = Slow(), InputObserver(store_n_calls=10 ** 6)
    go, stop = threading.Event(), threading.Event()
    errors = []

    def worker():
        go.wait()
        while not stop.is_set():
            try:
                y = m(torch.ones(2, 2))
                assert torch.equal(y, torch.full((2, 2), 2.0))
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

    pool = [threading.Thread(target=worker) for _ in range(4)]
    for t in pool:
        t.start()
    with pytest.raises(KeyboardInterrupt):
        with obs(m):
            go.set()
            m(torch.ones(7, 2))
    stop.set()
    for t in pool:
        t.join()
    assert errors == []
    assert "forward" not in vars(m)
    assert obs.num_obs == len(obs._calls) == len(obs.info)


def test_torch_size_argument_rebuilt_as_torch_size():
    # torch 2.15 registers torch.Size as a pytree node whose unflatten gives a plain tuple.
    class Reshape(torch.nn.Module):
        def forward(self, x, shape):
            return x.reshape(shape.numel())

    m, obs = Reshape(), InputObserver()
    with obs(m):
        m(torch.ones(2, 3), torch.Size([2, 3]))
    args = obs.infer_arguments(0)
    shape = args[1] if isinstance(args, tuple) else args["shape"]
    assert type(shape) is torch.Size and shape == torch.Size([2, 3])
    m(*args) if isinstance(args, tuple) else m(**args)


def test_a_block_begun_while_an_earlier_blocks_call_runs_stores_its_own_store_n_calls():
    # A thread's call begun in the first block returns during the second: it is stored, and the second block still
    # stores its own store_n_calls calls.
    inside, release = threading.Event(), threading.Event()

    class Waits(torch.nn.Module):
        def forward(self, x):
            if x.shape[0] == 9:
                inside.set()
                release.wait(10)
            return x

    m, obs = Waits(), InputObserver()
    with obs(m, store_n_calls=2):
        th = threading.Thread(target=m, args=(torch.ones(9, 2),))
        th.start()
        assert inside.wait(10)
    with obs(m, store_n_calls=2):
        release.set()
        th.join()
        for b in range(1, 5):
            m(torch.ones(b, 2))
    assert obs.num_obs == 3 == len(obs._calls)
    assert sorted(c.shapes[0][0] for c in obs._calls) == [1, 2, 9]
    sub = obs.select(lambda args, kwargs: args[0].shape[0] < 9)
    with sub(m, store_n_calls=1):
        for b in range(5, 8):
            m(torch.ones(b, 2))
    assert sub.num_obs == 3


def test_dict_keys_whose_texts_collide_round_trip_through_write_records(tmp_path):
    import hookscope

    m, obs = Echo(), InputObserver()
    with obs(m):
        for b in (2, 3, 4):
            m(torch.ones(b, 3), {1: torch.ones(b, 5), "1": torch.ones(1, b), "int:1": torch.ones(b),
                                 float("nan"): torch.ones(2, b)})
    path = tmp_path / "calls.jsonl"
    assert obs.write_records(str(path)) == 3
    read = json.loads(hookscope.infer(str(path)).to_json())
    assert read == json.loads(obs._dynamic_shapes().to_json())
    names = set(read[1])
    assert len(names) == 4 and {"1", "int:1"} <= names  # the str keys keep their own text


def test_the_engine_and_the_stored_calls_agree_whatever_a_signal_handler_raises():
    # A Python signal handler runs between two instructions and may raise (a RecursionError when handlers nest): the
    # engine keeps a call and appends it to the observer's list in one step (add_call_shapes), never one without the
    # other; a call the engine refuses (the recording is full) is appended nowhere.
    from hookscope import _engine
    engine = _engine.ShapeEngine(store_n_calls=1)
    engine.set_parameters('[{"name": "x"}]')
    engine.begin_recording()
    template = _engine.CallTemplate('{"args":[{"shape":[],"dtype":"float32"}],"kwargs":[]}')
    stored: list = []
    assert engine.add_call_shapes(template, [(2, 3)], "first", stored) is True
    assert engine.add_call_shapes(template, [(4, 3)], "second", stored) is False
    assert (stored, engine.num_obs) == (["first"], 1)
    unbounded = _engine.ShapeEngine(store_n_calls=None)
    unbounded.set_parameters('[{"name": "x"}]')
    unbounded.begin_recording()
    with pytest.raises(TypeError, match="hookscope: add_call_shapes: into is a list or None, not str"):
        unbounded.add_call_shapes(template, [(5, 3)], "third", "not a list")
    assert unbounded.num_obs == 0  # refused before the engine kept it


def test_add_call_shapes_records_what_add_call_of_the_filled_call_records():
    # The engine prepares a template's structure once per engine and per ranks (shape_engine::add_structure) and is
    # handed the sizes alone afterwards: the same summary as the call in JSON, with ranks that change (beyond the
    # template's structures, whose calls then go as value trees), one template for several engines, a result.
    from hookscope import _engine

    def call(shapes):
        x, m, r = ({"shape": list(s), "dtype": d} for s, d in zip(shapes, ("float32", "int64", "float32")))
        return {"args": [x], "kwargs": [["m", {"tuple": [m, {"int": 3}]}]], "result": r}

    def engine():
        e = _engine.ShapeEngine(store_n_calls=None, keep_calls=False)
        e.set_parameters('[{"name": "x"}, {"name": "m"}]')
        e.begin_recording()
        return e

    template = _engine.CallTemplate(json.dumps(call([(), (), ()])))
    assert template.tensors == 3
    by_shapes, other, by_json = engine(), engine(), engine()
    calls = [[(2, 3), (2,), (2, 3)], [(4, 3), (4,), (4, 3)]] * 3
    calls += [[(n,) * (1 + n % 12), (n,), (n, 1)] for n in range(1, 30)]
    for shapes in calls:
        assert by_shapes.add_call_shapes(template, shapes)
        assert other.add_call_shapes(template, shapes)
        assert by_json.add_call(json.dumps(call(shapes)))
    expected = by_json.to_summary_json(function="f")
    assert by_shapes.to_summary_json(function="f") == expected
    assert other.to_summary_json(function="f") == expected
