"""Shared by the checks that run a program under an environment variable (HOOKSCOPE_TRACE, HOOKSCOPE_RECORD)."""
import os
import subprocess
import sys

HOOKSCOPE_VARIABLES = ("HOOKSCOPE_TRACE", "HOOKSCOPE_RECORD")


def run(program, variable, setting, expected_stdout):
    """Runs `program` with only `variable` of hookscope's variables set (to `setting`, or unset when None);
    exits unless it succeeds with `expected_stdout`. Returns its stderr lines."""
    env = {k: v for k, v in os.environ.items() if k not in HOOKSCOPE_VARIABLES}
    if setting is not None:
        env[variable] = setting
    done = subprocess.run([program], env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0 or done.stdout != expected_stdout:
        sys.exit(f"{program} ({variable}={setting!r}) exited {done.returncode} with stdout {done.stdout!r}")
    return done.stderr.splitlines()


def expect(what, got, want):
    if got != want:
        shown = lambda v: (lambda r: r if len(r) <= 3000 else r[:3000] + f"... ({len(r)} characters)")(repr(v))
        sys.exit(f"{what}:\n  expected {shown(want)}\n  got      {shown(got)}")
    print(f"ok: {what}")
