"""hookscope-shapes against hostile sources and outputs, one case per finding of an adversarial pass over the front
door: pipes and FIFOs read whole, `--signature-from` of the right function, `summarize -o` onto symbolic links,
FIFOs (refused), directories, its own input and a destination shared by concurrent runs; names that would forge output;
many functions; deep values that must read back from a summary."""
import json
import os
import stat
import subprocess
import threading

import pytest

from support import DATA

RECORD = {"function": "f", "signature": [{"name": "x"}], "args": [], "kwargs": [["x", {"shape": [2], "dtype": "float32"}]]}


def shapes(program, *argv, cwd, stdin=None, timeout=60):
    return subprocess.run([program, *map(str, argv)], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          stdin=stdin, env={k: v for k, v in os.environ.items() if not k.startswith("HOOKSCOPE_")})


def records(n, first_shape=64, pad_to=None):
    lines = []
    for i in range(n):
        r = {"function": "f", "args": [{"shape": [first_shape if i == 0 else i % 4 + 1, 3], "dtype": "float32"}],
             "kwargs": []}
        if i == 0:
            r["signature"] = [{"name": "x"}]
        lines.append(json.dumps(r, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def test_a_pipe_is_read_whole(hookscope_shapes, tmp_path):
    """Looking for a summary must not take a pipe's first bytes away from the records (the first call's 64 is the
    maximum: losing it changes the answer)."""
    (tmp_path / "r.jsonl").write_text(records(300))
    whole = shapes(hookscope_shapes, "infer", "r.jsonl", "--store-n-calls", "all", "--format", "trtexec", cwd=tmp_path)
    assert whole.returncode == 0 and "maxShapes=x:64x3" in whole.stdout, whole.stderr
    piped = subprocess.run(f"'{hookscope_shapes}' infer <(cat r.jsonl) --store-n-calls all --format trtexec",
                           shell=True, executable="/bin/bash", capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert (piped.returncode, piped.stdout) == (0, whole.stdout), piped.stderr


def test_a_fifo_is_read_whole_and_does_not_hang(hookscope_shapes, tmp_path):
    (tmp_path / "r.jsonl").write_text(records(300))
    os.mkfifo(tmp_path / "fifo")
    writer = threading.Thread(target=lambda: (tmp_path / "fifo").write_text((tmp_path / "r.jsonl").read_text()))
    writer.start()
    done = shapes(hookscope_shapes, "infer", "fifo", "--store-n-calls", "all", "--format", "trtexec", cwd=tmp_path,
                  timeout=30)
    writer.join(timeout=30)
    assert done.returncode == 0 and "maxShapes=x:64x3" in done.stdout, done.stderr


def two_functions(tmp_path):
    full = [{"function": "encode", "signature": [{"name": "tokens"}, {"name": "mask"}],
             "args": [{"shape": [1, 5], "dtype": "int64"}, {"shape": [1, 5], "dtype": "bool"}], "kwargs": []},
            {"function": "decode", "signature": [{"name": "hidden"}, {"name": "cache"}],
             "args": [{"shape": [1, 5, 8], "dtype": "float32"}, {"shape": [1, 2, 8], "dtype": "float32"}], "kwargs": []},
            {"function": "decode", "args": [{"shape": [2, 7, 8], "dtype": "float32"},
                                            {"shape": [2, 3, 8], "dtype": "float32"}], "kwargs": []}]
    (tmp_path / "full.jsonl").write_text("".join(json.dumps(r) + "\n" for r in full))
    (tmp_path / "part.jsonl").write_text(json.dumps(full[2]) + "\n")


def test_signature_from_takes_the_signature_of_the_function_read(hookscope_shapes, tmp_path):
    two_functions(tmp_path)
    done = shapes(hookscope_shapes, "summarize", "part.jsonl", "--signature-from", "full.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["function"] == "decode"
    assert [p["name"] for p in summary["signature"]] == ["hidden", "cache"]


def test_signature_from_a_file_without_that_function_is_refused(hookscope_shapes, tmp_path):
    two_functions(tmp_path)
    (tmp_path / "other.jsonl").write_text(json.dumps(RECORD) + "\n")
    for source in ("other.jsonl", "/dev/null"):
        done = shapes(hookscope_shapes, "summarize", "part.jsonl", "--signature-from", source, cwd=tmp_path)
        assert done.returncode == 2
        assert f"--signature-from {source}: holds no record of 'decode'" in done.stderr


def test_summarize_output_through_a_planted_temporary_symlink(hookscope_shapes, tmp_path):
    """The temporary file's name is not predictable: a symbolic link planted at OUT.tmp is neither followed nor
    removed, and a user's own OUT.tmp stays."""
    (tmp_path / "r.jsonl").write_text(json.dumps(RECORD) + "\n")
    (tmp_path / "victim.txt").write_text("important\n")
    os.symlink("victim.txt", tmp_path / "report.json.tmp")
    done = shapes(hookscope_shapes, "summarize", "r.jsonl", "-o", "report.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "victim.txt").read_text() == "important\n"
    assert os.path.islink(tmp_path / "report.json.tmp")
    assert json.loads((tmp_path / "report.json").read_text())["format"] == "hookscope-shapes-summary"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl", "report.json", "report.json.tmp", "victim.txt"]


def test_summarize_output_through_a_symlink_keeps_the_link(hookscope_shapes, tmp_path):
    (tmp_path / "r.jsonl").write_text(json.dumps(RECORD) + "\n")
    (tmp_path / "target.json").write_text("old\n")
    os.chmod(tmp_path / "target.json", 0o600)
    os.symlink("target.json", tmp_path / "link.json")
    done = shapes(hookscope_shapes, "summarize", "r.jsonl", "-o", "link.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert os.path.islink(tmp_path / "link.json")
    assert json.loads((tmp_path / "target.json").read_text())["function"] == "f"
    assert stat.S_IMODE(os.stat(tmp_path / "target.json").st_mode) == 0o600


def test_summarize_output_to_a_fifo_is_refused(hookscope_shapes, tmp_path):
    """A summary is one document to keep: a FIFO is refused with a sentence (-o - and a redirection stream it), and
    stays a FIFO; nothing waits for a reader."""
    (tmp_path / "r.jsonl").write_text(json.dumps(RECORD) + "\n")
    os.mkfifo(tmp_path / "out")
    done = shapes(hookscope_shapes, "summarize", "r.jsonl", "-o", "out", cwd=tmp_path, timeout=30)
    assert done.returncode == 2 and "out: cannot write: it is a FIFO" in done.stderr, done.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out").st_mode)


def test_summarize_output_refusals(hookscope_shapes, tmp_path):
    (tmp_path / "r.jsonl").write_text(json.dumps(RECORD) + "\n")
    (tmp_path / "dir").mkdir()
    os.symlink("nowhere.json", tmp_path / "dangling.json")
    for output, why in (("dir", "it is a directory"), ("r.jsonl", "it is an input of this summary"),
                        ("dangling.json", "a symbolic link to a file that does not exist")):
        done = shapes(hookscope_shapes, "summarize", "r.jsonl", "-o", output, cwd=tmp_path)
        assert done.returncode == 2 and f"{output}: cannot write: {why}" in done.stderr, done.stderr
    assert (tmp_path / "r.jsonl").read_text() == json.dumps(RECORD) + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling.json", "dir", "r.jsonl"]  # no temporary left


def test_concurrent_summaries_to_one_output(hookscope_shapes, tmp_path):
    (tmp_path / "r.jsonl").write_text(records(3000))
    runs = [subprocess.Popen([hookscope_shapes, "summarize", "r.jsonl", "-o", "race.json"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(6)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in runs]
    assert all(code == 0 for code, _ in results), results
    assert json.loads((tmp_path / "race.json").read_text())["function"] == "f"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl", "race.json"]


def test_a_name_with_a_newline_cannot_forge_a_line(hookscope_shapes, tmp_path):
    lines = [json.dumps({"function": "a\nhookscope-shapes: all good", "args": [], "kwargs": []}),
             json.dumps({"function": "c", "args": [], "kwargs": []})]
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    done = shapes(hookscope_shapes, "infer", "r.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "'a\\x0ahookscope-shapes: all good', 'c'" in done.stderr


def test_many_functions_a_bounded_sentence(hookscope_shapes, tmp_path):
    (tmp_path / "r.jsonl").write_text("".join(
        json.dumps({"function": f"fn{i}", "args": [], "kwargs": []}) + "\n" for i in range(50000)))
    done = shapes(hookscope_shapes, "infer", "r.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert len(done.stderr) < 1000 and "'fn0', 'fn1'" in done.stderr and "and others" in done.stderr


def test_store_n_calls_past_the_largest_count(hookscope_shapes):
    done = shapes(hookscope_shapes, "infer", "llm.jsonl", "--store-n-calls", str(2**64 - 1), cwd=DATA)
    assert done.returncode == 2 and "is too large (all keeps every call)" in done.stderr


def test_deep_values_read_back_from_a_summary(hookscope_shapes, tmp_path):
    """What summarize writes, infer reads: values nested as deep as a record allows."""
    def nest(depth, v):
        for _ in range(depth):
            v = {"tuple": [v]}
        return v
    (tmp_path / "deep.jsonl").write_text("".join(
        json.dumps({"function": "f", "args": [nest(60, {"shape": [i + 1, 4], "dtype": "float32"})], "kwargs": []})
        + "\n" for i in range(3)))
    one_pass = shapes(hookscope_shapes, "infer", "deep.jsonl", "--store-n-calls", "all", cwd=tmp_path)
    assert one_pass.returncode == 0, one_pass.stderr
    written = shapes(hookscope_shapes, "summarize", "deep.jsonl", "-o", "deep.json", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    merged = shapes(hookscope_shapes, "infer", "deep.json", cwd=tmp_path)
    assert (merged.returncode, merged.stdout) == (0, one_pass.stdout), merged.stderr


def test_a_cut_summary_names_no_parser_internals(hookscope_shapes, tmp_path):
    (tmp_path / "r.jsonl").write_text(json.dumps(RECORD) + "\n")
    text = shapes(hookscope_shapes, "summarize", "r.jsonl", cwd=tmp_path).stdout
    (tmp_path / "half.json").write_text(text[: len(text) // 2])
    done = shapes(hookscope_shapes, "infer", "half.json", cwd=tmp_path)
    assert done.returncode == 2 and "not a valid summary: not JSON: incomplete JSON" in done.stderr
    assert "boost" not in done.stderr and ".hpp" not in done.stderr
