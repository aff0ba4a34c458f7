"""tools/generate_records.py, the input of `tools/bench.sh --read`: the same options give the same bytes, the shards
hold the single file's records, and hookscope-shapes reads what it writes (the shards' summaries merging into what
one pass over the file infers). tools/read_table.py: its verdicts on a run's figures. No timing is checked."""
import importlib.util
import json
import subprocess
import sys

import pytest

from support import SOURCE_ROOT

GENERATOR = SOURCE_ROOT / "tools" / "generate_records.py"
SIGNATURE = '"signature":[{"name":"input_ids"},{"name":"attention_mask"},{"name":"past_key_values","default":null}],'

spec = importlib.util.spec_from_file_location("read_table", SOURCE_ROOT / "tools" / "read_table.py")
read_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(read_table)


def generate(out, *options):
    subprocess.run([sys.executable, str(GENERATOR), str(out), *options], check=True, capture_output=True)


def lines_of(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_the_same_seed_gives_the_same_bytes_another_seed_others(tmp_path):
    generate(tmp_path / "a.jsonl", "--records", "500")
    generate(tmp_path / "b.jsonl", "--records", "500")
    generate(tmp_path / "c.jsonl", "--records", "500", "--seed", "1")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert (tmp_path / "a.jsonl").read_bytes() != (tmp_path / "c.jsonl").read_bytes()


def test_records_are_a_decoders_forward_calls(tmp_path):
    generate(tmp_path / "d.jsonl", "--records", "300")
    records = [json.loads(line) for line in lines_of(tmp_path / "d.jsonl")]
    assert len(records) == 300
    assert "signature" in records[0] and not any("signature" in r for r in records[1:])
    for r in records:
        assert r["function"] == "Decoder.forward" and r["args"] == [] and r["latency_ns"] >= 0
        (ids_name, ids), (mask_name, mask), (cache_name, cache) = r["kwargs"]
        assert (ids_name, mask_name, cache_name) == ("input_ids", "attention_mask", "past_key_values")
        batch, length = ids["shape"]
        assert 1 <= batch <= 8 and mask["shape"][0] == batch
        if cache is None:  # a prefill
            assert mask["shape"][1] == length
        else:  # a decode step: one token after the cached ones
            tensors = cache["tuple"]
            assert length == 1 and len(tensors) == 8
            assert all(t["shape"] == [batch, 8, mask["shape"][1] - 1, 64] for t in tensors)


def test_size_writes_until_the_file_holds_it(tmp_path):
    generate(tmp_path / "s.jsonl", "--size", "200K")
    size = (tmp_path / "s.jsonl").stat().st_size
    last = len(lines_of(tmp_path / "s.jsonl")[-1]) + 1
    assert 200_000 <= size < 200_000 + last


def test_shards_hold_the_files_records_in_order(tmp_path):
    generate(tmp_path / "one.jsonl", "--records", "1000")
    generate(tmp_path / "shards", "--records", "1000", "--shards", "7")
    shards = sorted((tmp_path / "shards").iterdir())
    assert len(shards) == 7
    assert all(lines_of(s)[0].startswith('{"function":"Decoder.forward",' + SIGNATURE) for s in shards)
    joined = [line.replace(SIGNATURE, "") for s in shards for line in lines_of(s)]
    assert joined == [line.replace(SIGNATURE, "") for line in lines_of(tmp_path / "one.jsonl")]


def test_hookscope_reads_them_and_the_shards_summaries_merge_into_the_files_pass(tmp_path, hookscope_shapes):
    generate(tmp_path / "one.jsonl", "--records", "2000")
    generate(tmp_path / "shards", "--records", "2000", "--shards", "5")
    summaries = []
    for shard in sorted((tmp_path / "shards").iterdir()):
        summary = tmp_path / (shard.stem + ".summary.json")
        subprocess.run([hookscope_shapes, "summarize", str(shard), "-o", str(summary)], check=True)
        summaries.append(str(summary))
    infer = [hookscope_shapes, "infer", "--store-n-calls", "all"]
    one = subprocess.run(infer + [str(tmp_path / "one.jsonl")], check=True, capture_output=True, text=True).stdout
    merged = subprocess.run(infer + summaries, check=True, capture_output=True, text=True).stdout
    assert one == merged
    assert json.loads(one)["past_key_values"][0] == {"0": "DYNAMIC", "2": "DYNAMIC"}


def run(name, records_per_s, seconds, **counters):
    return {"name": f"{name}/iterations:1/repeats:5_median", "run_name": f"{name}/iterations:1",
            "run_type": "aggregate", "aggregate_name": "median", "cpu_time": seconds * 1e3, "real_time": seconds * 1e3,
            "time_unit": "ms", "records_per_s": records_per_s, "bytes_per_s": records_per_s * 512, **counters}


@pytest.mark.parametrize("ours, merge_s, met", [(1_000_000, 0.5, True), (900_000, 0.5, False),
                                                (1_100_000, 1.5, False)])
def test_read_table_verdicts(ours, merge_s, met):
    data = {"benchmarks": [run(read_table.HOOKSCOPE, ours, 0.2), run(read_table.FLOOR, 1_300_000, 0.15),
                           run(read_table.BOOST, 1_500_000, 0.13), run(read_table.MERGE, 400_000, merge_s)]}
    rows, errors = read_table.rows_of(data, "cpu")
    assert not errors
    verdicts = [v for v, _ in read_table.targets(rows)]
    assert all(verdicts) == met
    table = "\n".join(read_table.table(rows, errors))
    assert f"{ours / 1_300_000:.2f}×" in table


def test_read_table_shows_a_missing_row():
    data = {"benchmarks": [run(read_table.HOOKSCOPE, 200_000, 1.0),
                           {"name": f"{read_table.FLOOR}/iterations:1", "error_occurred": True,
                            "error_message": "simdjson missing"}]}
    rows, errors = read_table.rows_of(data, "cpu")
    assert "simdjson missing" in "\n".join(read_table.table(rows, errors))
    assert [v for v, _ in read_table.targets(rows)] == [False, None, None]
