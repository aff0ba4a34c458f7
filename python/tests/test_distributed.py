"""Beyond one machine: record shards summarised in the worker processes of a local Dask cluster and merged
in the driver give exactly what one pass over the concatenated shards gives (and what hookscope-shapes gives)."""
import json
import os
import random
import subprocess

import pytest

import hookscope
import hookscope.distributed

from helpers import build_dir

distributed = pytest.importorskip("distributed", reason="distributed (Dask) is installed by tools/python_env.sh")

SIGNATURE = [{"name": "input_ids"}, {"name": "attention_mask"}, {"name": "past_key_values", "default": None},
             {"name": "use_cache", "default": {"bool": True}}]


def tensor(*shape, dtype="float32"):
    return {"shape": list(shape), "dtype": dtype}


def write_shard(path, rng, n_calls, function="Model::forward"):
    """Generations of a decoder (prefill, then decode steps with a growing cache), as one process writes them: the
    signature on its first record."""
    with open(path, "w", encoding="utf-8") as f:
        written = 0
        while written < n_calls:
            batch, past = rng.randint(1, 4), 0
            for step in range(rng.randint(1, 6)):
                seq = rng.randint(2, 30) if step == 0 else 1
                cache = None if past == 0 else {"tuple": [tensor(batch, 2, past, 8), tensor(batch, 2, past, 8)]}
                record = {"function": function, "args": [tensor(batch, seq, dtype="int64")],
                          "kwargs": [["attention_mask", tensor(batch, past + seq, dtype="int64")],
                                     ["past_key_values", cache]],
                          "result": {"tuple": [tensor(batch, seq, 100), tensor(batch, 2, past + seq, 8)]}}
                if written == 0:
                    record["signature"] = SIGNATURE
                f.write(json.dumps(record) + "\n")
                written += 1
                past += seq
        # Another function in the same file: the summaries are of the one asked for.
        f.write(json.dumps({"function": "Model::other", "args": [tensor(1)], "kwargs": []}) + "\n")


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    rng = random.Random(13)
    paths = []
    for i in range(8):
        path = root / f"shard{i}.jsonl"
        write_shard(path, rng, rng.randint(20, 200))
        paths.append(str(path))
    empty = root / "no_forward.jsonl"  # a shard where the function never ran
    empty.write_text(json.dumps({"function": "Model::other", "args": [tensor(1)], "kwargs": []}) + "\n")
    paths.insert(3, str(empty))
    return paths


@pytest.fixture(scope="module")
def client():
    # Worker processes (not threads): what distributes the work over machines distributes it here.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            yield c


def every_output(ds):
    return [ds.to_json(), ds.to_typed_json(), ds.to_onnx(), ds.to_trtexec(), ds.to_ort_options(), ds.report(),
            ds.warnings]


def test_summaries_are_computed_in_the_workers(client, shards):
    driver = os.getpid()
    workers = set(client.run(os.getpid).values())
    assert len(workers) == 2 and driver not in workers
    on_cluster = hookscope.distributed.summaries(client, shards, function="Model::forward")
    assert on_cluster == [hookscope.summarize([s], function="Model::forward") for s in shards]
    assert json.loads(on_cluster[3])["calls"] == 0  # the shard without the function: an empty summary


@pytest.mark.parametrize("options", [{}, {"dim_names": True}, {"dim_names": True, "profiles": "auto"},
                                     {"batch_all": True}])
def test_cluster_result_equals_one_pass(client, shards, options):
    on_cluster = hookscope.distributed.infer(client, shards, function="Model::forward", **options)
    one_pass = hookscope.infer(shards, function="Model::forward", store_n_calls=None, **options)
    assert every_output(on_cluster) == every_output(one_pass)
    assert on_cluster.relations == one_pass.relations
    assert on_cluster.tensorrt_profiles == one_pass.tensorrt_profiles
    # The decoder's facts, as a check that the comparison compares something.
    assert '"0":"DYNAMIC"' in one_pass.to_json() or "batch_size" in one_pass.to_json()


def test_cluster_result_equals_the_command_line(client, shards, tmp_path):
    on_cluster = hookscope.distributed.infer(client, shards, function="Model::forward", dim_names=True)
    program = build_dir() / "hookscope-shapes"
    if not program.exists():
        pytest.fail(f"{program} is not built (tools/test.sh builds it before the Python tests)")
    summary_files = []
    for i, text in enumerate(hookscope.distributed.summaries(client, shards, function="Model::forward")):
        path = tmp_path / f"s{i}.json"
        path.write_text(text + "\n")
        summary_files.append(str(path))
    done = subprocess.run([str(program), "infer", *summary_files, "--dim-names", "--format", "report"],
                          capture_output=True, text=True, check=True)
    assert done.stdout == on_cluster.report()


def test_merging_summaries_recorded_differently_is_refused(client, shards, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"function": "Model::forward", "signature": [{"name": "x"}],
                                 "args": [tensor(2)], "kwargs": []}) + "\n")
    with pytest.raises(hookscope.LoadError, match="the signatures differ") as e:
        hookscope.distributed.load(client, [shards[0], str(other)], function="Model::forward")
    assert e.value.kind == "signatures_differ"


def test_docs_recipe_runs(shards, tmp_path, monkeypatch):
    from helpers import ROOT
    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    section = text[text.index("## Beyond one machine: Dask\n"):]
    code = section[section.index("```python\n") + len("```python\n"):section.index("```\n", section.index("```python"))]
    (tmp_path / "records").mkdir()
    forward = [s for s in shards if "no_forward" not in s]
    for i, shard in enumerate(forward):
        (tmp_path / "records" / f"forward-{i}.jsonl").write_text(open(shard, encoding="utf-8").read())
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(code, "docs/python.md (Beyond one machine: Dask)", "exec"), scope)
    expected = hookscope.infer(sorted(str(p) for p in (tmp_path / "records").glob("forward-*.jsonl")),
                               function="Model::forward", store_n_calls=None, dim_names=True)
    assert scope["ds"].to_json() == expected.to_json()
    assert "batch_size" in expected.to_json()
