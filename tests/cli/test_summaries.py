"""hookscope-shapes summarize and the summaries it writes: every record file of tests/data cut into random parts, each
part summarised, and the summaries read back giving what one pass over the whole file gives, in every output format;
summaries that disagree or are damaged refused with a sentence and the exit code of each case."""
import random

import pytest

from support import DATA, Checks, run


def shapes(program, argv, cwd=DATA, timeout=60, **kw):
    """hookscope-shapes ARGV, run in `cwd` (tests/data: messages name the files as given)."""
    return run([program] + argv, cwd=cwd, timeout=timeout, **kw)


# Summaries: every file cut into random parts by lines, each part summarised (--signature-from the whole file, whose
# first record carries the signature), and the summaries read back must give what one pass over the whole file
# gives with --store-n-calls all (the one-pass outputs are those checked by hand in CASES), in every output format.
SUMMARY_FILES = [("decoder_kv.jsonl", []), ("llm.jsonl", []), ("encoder.jsonl", []), ("optional.jsonl", []),
                 ("positional.jsonl", []), ("two_functions.jsonl", ["--function", "decode"]),
                 ("rank_mismatch.jsonl", []), ("dtype_change.jsonl", [])]
SUMMARY_VIEWS = [["infer"], ["infer", "--dim-names"], ["infer", "--typed"], ["infer", "--format", "report"],
                 ["infer", "--format", "onnx", "--dim-names"], ["infer", "--format", "trtexec", "--profiles", "auto"],
                 ["infer", "--format", "ort"], ["infer", "--batch-all"], ["args"], ["args", "--as-args-kwargs"]]
SEEDS = range(4)


def outcome(done):
    return done.returncode, done.stdout, done.stderr


class CutSummaries:
    """The summaries of each file's random cuts (one per seed), made once per file, shared by the cases."""

    def __init__(self, program, root):
        self.program, self.root, self.made = program, root, {}

    def of(self, name, select):
        """{seed: (cuts, [summary paths], [problems of summarize])}."""
        if name not in self.made:
            whole = str(DATA / name)
            lines = (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)
            self.made[name] = {}
            for seed in SEEDS:
                rng = random.Random(seed)
                cuts = sorted({0, len(lines)} | {rng.randrange(len(lines) + 1) for _ in range(rng.randrange(4))})
                tmp = self.root / f"{name}.{seed}"
                tmp.mkdir()
                summaries, problems = [], []
                for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
                    part = tmp / f"part{i}.jsonl"
                    part.write_text("".join(lines[a:b]), encoding="utf-8")
                    summary = str(tmp / f"part{i}.json")
                    code, _, err = outcome(shapes(self.program, ["summarize", str(part), "-o", summary, "--signature-from",
                                                                 whole] + select, cwd=tmp))
                    if code != 0 and "no call recorded" not in err:
                        problems.append(f"summarize {name} part {i} (lines {a}..{b}): exit {code}: {err}")
                    if code == 0:
                        summaries.append(summary)
                self.made[name][seed] = (cuts, summaries, problems)
        return self.made[name]


@pytest.fixture(scope="module")
def cut_summaries(hookscope_shapes, tmp_path_factory):
    return CutSummaries(hookscope_shapes, tmp_path_factory.mktemp("summaries"))


@pytest.mark.parametrize("name, select", SUMMARY_FILES, ids=[f for f, _ in SUMMARY_FILES])
def test_summarize_random_cuts(cut_summaries, name, select):
    problems = [p for _, _, found in cut_summaries.of(name, select).values() for p in found]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("view", SUMMARY_VIEWS, ids=[" ".join(v) for v in SUMMARY_VIEWS])
@pytest.mark.parametrize("name, select", SUMMARY_FILES, ids=[f for f, _ in SUMMARY_FILES])
def test_summaries_give_one_pass(hookscope_shapes, cut_summaries, name, select, view):
    whole = str(DATA / name)
    with Checks() as check:
        for seed, (cuts, summaries, _) in cut_summaries.of(name, select).items():
            want = outcome(shapes(hookscope_shapes, view[:1] + [whole, "--store-n-calls", "all"] + select + view[1:],
                                  cwd=cut_summaries.root))
            got = outcome(shapes(hookscope_shapes, view[:1] + summaries + view[1:], cwd=cut_summaries.root))
            check.expect(f"{name} cut at {cuts} (seed {seed}), {' '.join(view)}: (exit code, stdout, stderr) of the "
                         "summaries against one pass", got, want)


SUMMARY_ERRORS = [  # (what, argv, exit code, a part of stderr); S1 and S2 summarise decoder_kv.jsonl's lines 1-3 and
    # 4-8 (S2 without the signature, which is on line 1); BAD is S1 with its first "present" count made negative.
    ("records among summaries", ["infer", "S1", "decoder_kv.jsonl"], 2,
     "decoder_kv.jsonl: holds records while other inputs are summaries"),
    ("a part without its signature", ["infer", "S1", "S2"], 2,
     "S2: cannot merge: the signatures differ: (input_ids, attention_mask, past_key_values, pixel_values) and "
     "none"),
    ("summaries of another function", ["infer", "S1", "--function", "encode"], 2,
     "S1: a summary of 'Decoder.forward', not of 'encode'"),
    ("--store-n-calls 3 with summaries", ["infer", "S1", "--store-n-calls", "3"], 2,
     "--store-n-calls: summaries hold every call"),
    ("--value-if-missing with summaries", ["infer", "S1", "--value-if-missing", "pixel_values=null"], 2,
     "--value-if-missing applies when summarising"),
    ("--index with summaries", ["args", "S1", "--index", "0"], 2, "--index needs stored calls"),
    ("summarize keeps every call", ["summarize", "decoder_kv.jsonl", "--store-n-calls", "2"], 2,
     "summarize keeps every call"),
    ("an inference option for summarize", ["summarize", "decoder_kv.jsonl", "--format", "report"], 2,
     "--format is for 'infer' and 'args'"),
    ("a damaged summary", ["infer", "BAD"], 2, "BAD: not a valid summary: $.arguments[0].present: expected a count"),
    ("a summary that cannot be written", ["summarize", "decoder_kv.jsonl", "-o", "/nonexistent/s.json"], 2,
     "/nonexistent/s.json: cannot write: No such file or directory"),
    ("EIO reading a regular file", ["infer", "/proc/self/mem"], 2, "/proc/self/mem after line 0: Input/output error"),
]


@pytest.fixture(scope="module")
def summaries_dir(hookscope_shapes, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("summary_errors")
    lines = (DATA / "decoder_kv.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp / "p1.jsonl").write_text("".join(lines[:3]), encoding="utf-8")
    (tmp / "p2.jsonl").write_text("".join(lines[3:]), encoding="utf-8")
    shapes(hookscope_shapes, ["summarize", "p1.jsonl", "-o", str(tmp / "S1")], cwd=tmp)
    shapes(hookscope_shapes, ["summarize", "p2.jsonl", "-o", str(tmp / "S2")], cwd=tmp)
    text = (tmp / "S1").read_text(encoding="utf-8")
    (tmp / "BAD").write_text(text.replace('"present":', '"present":-', 1), encoding="utf-8")
    (tmp / "decoder_kv.jsonl").write_text("".join(lines), encoding="utf-8")
    return tmp


@pytest.mark.parametrize("what, argv, code, err", SUMMARY_ERRORS, ids=[e[0] for e in SUMMARY_ERRORS])
def test_summary_error(hookscope_shapes, summaries_dir, what, argv, code, err):
    done = shapes(hookscope_shapes, argv, cwd=summaries_dir)
    with Checks() as check:
        check.expect(f"{what} ({' '.join(argv)}): exit code", done.returncode, code)
        check.require(err in done.stderr, f"{what} ({' '.join(argv)}): stderr {done.stderr!r} does not hold {err!r}")
