"""Attaching bpftrace to a program while it runs, as the USDT tests do: the program prints "ready", bpftrace attaches
with -p and runs its script to its end, then the program is stopped, or left to end on its own when its output after
bpftrace's exit is what the test judges (its semaphores falling back to 0)."""
import subprocess


def attach_while_running(bpftrace, argv, script, env=None, wait_for_program=False):
    """bpftrace's CompletedProcess, and the program's output after "ready" ("" unless wait_for_program)."""
    program = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE, text=True)
    try:
        first = program.stdout.readline()
        assert first == "ready\n", f"{argv[0]} printed {first!r} instead of 'ready'"
        done = subprocess.run([bpftrace, "-p", str(program.pid), "-e", script], capture_output=True, text=True,
                              timeout=60, env=env)
        out = program.communicate(timeout=60)[0] if wait_for_program else ""
        return done, out
    finally:
        program.kill()
        program.wait()
