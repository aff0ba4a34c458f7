"""examples/lowering_passes run with HOOKSCOPE_TRACE=passes::fold_constants,passes::eliminate_*: the traced passes,
and only they, appear on stderr."""
from support import expect, run

TRACE = "passes::fold_constants,passes::eliminate_*"


def test_traced_passes_and_only_they(lowering_passes, hooks_enabled):
    done = run([lowering_passes], {"HOOKSCOPE_TRACE": TRACE}, timeout=120)
    expect(f"{lowering_passes} exit code", done.returncode, 0)
    traced = [line for line in done.stderr.splitlines() if line.startswith("hookscope: trace: ")]
    want = [] if not hooks_enabled else [
        "hookscope: trace: passes::fold_constants(graph=graph(9 ops))",
        "hookscope: trace: passes::fold_constants returned graph(9 ops)",
        "hookscope: trace: passes::eliminate_dead_code(graph=graph(9 ops))",
        "hookscope: trace: passes::eliminate_dead_code returned graph(5 ops)",
    ] * 2  # the program lowers twice: once observed by its own callbacks, once not; the trace sees both
    expect(f"trace lines (HOOKSCOPE_TRACE={TRACE})", traced, want)
