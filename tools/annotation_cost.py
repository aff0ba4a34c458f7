#!/usr/bin/env python3
"""Measures what annotating functions costs a translation unit: compile time and code size (the bench report).

Generates one TU of N functions of 1-4 parameters (int, double, std::string, tensor_spec, a small aggregate),
each with a caller, in three variants compiled at -O2 (compiler CPU time, user + system, best of --runs rounds in
which the three variants take turns):
  plain     the functions called directly, no hookscope header;
  enabled   each function annotated with HOOKSCOPE_OBSERVABLE and called through the annotation;
  disabled  the same source as enabled, with -DHOOKSCOPE_ENABLED=0;
  probes    the same source as enabled, with USDT probes (-DHOOKSCOPE_USDT=1; where <sys/sdt.h> is found).
Code size is text+data of the object file (`size`: machine code, read-only data, unwind tables and data) and, apart,
its machine code (the executable sections, `readelf -S`); per-annotation figures are (variant - plain) / N. The
byte targets (400 B without probes, 300 B with them) are judged on machine code; text+data is printed beside it.
Parameters are named a0, a1, ... (functions of one signature then share their observed-call code, as they do
in real code when the names repeat); --distinct-names gives every function names of its own (no sharing).
--instructions adds the instructions the compiler executes for each variant (valgrind's callgrind, summed over
the driver's processes): unlike this machine's timings, a repeatable figure (but ~50x slower to take).
--baseline DIR adds the annotated TU compiled against another include directory (e.g. a worktree of an older
commit), in the same rounds: how much a change saved, on this machine and this TU.
Prints a markdown table with the performance targets (docs/architecture.md), met or NOT met.
Usage: annotation_cost.py INCLUDE_DIR [--compiler c++] [--functions 200] [--runs 3] [--distinct-names] [--check]
                          [--keep DIR] [--instructions] [--baseline INCLUDE_DIR]
"""
import argparse
import glob
import os
import random
import resource
import subprocess
import sys
import tempfile

ENABLED_MAX_S = 3.0
ENABLED_MAX_BYTES = 400
PROBES_MAX_BYTES = 300
DISABLED_MAX_RATIO = 1.2

TYPES = [  # (parameter type, expression giving an argument, expression using a parameter `p`)
    ("int", "i", "p"),
    ("double", "0.5 * i", "static_cast<int>(p)"),
    ("const std::string&", "std::string(\"s\")", "static_cast<int>(p.size())"),
    ("const hookscope::tensor_spec&", "hookscope::tensor_spec{}", "static_cast<int>(p.shape.size())"),
    ("const gen::point&", "gen::point{i, 2.0}", "p.x"),
]


def generate(n, annotated, distinct_names=False):
    rng = random.Random(42)  # the same functions in every variant
    out = ["#include <string>", "#include \"hookscope/tensor.hpp\""]
    if annotated:
        out.append("#include \"hookscope/observable.hpp\"")
    out += ["namespace gen {", "struct point { int x; double y; };", "namespace impl {"]
    sigs = []
    for k in range(n):
        params = [TYPES[rng.randrange(len(TYPES))] for _ in range(rng.randint(1, 4))]
        sigs.append(params)
        decl = ", ".join(f"{t} a{j}" for j, (t, _, _) in enumerate(params))
        body = " + ".join(use.replace("p", f"a{j}", 1) if use != "p" else f"a{j}"
                          for j, (_, _, use) in enumerate(params))
        out.append(f"[[gnu::noinline]] int f{k}({decl}) {{ return {body} + {k}; }}")
    out.append("}  // namespace impl")
    for k, params in enumerate(sigs):
        if annotated:
            names = ", ".join(f"f{k}_a{j}" if distinct_names else f"a{j}" for j in range(len(params)))
            out.append(f"HOOKSCOPE_OBSERVABLE(f{k}, impl::f{k}, {names});")
        else:
            out.append(f"using impl::f{k};")
    out.append("}  // namespace gen")
    for k, params in enumerate(sigs):
        args = ", ".join(a for _, a, _ in params)
        out.append(f"int call{k}(int i) {{ return gen::f{k}({args}); }}")
    return "\n".join(out) + "\n"


# The flags of each variant beyond the common ones; plain is compiled from a source without annotations.
VARIANT_FLAGS = {"plain": [], "enabled": ["-DHOOKSCOPE_ENABLED=1", "-DHOOKSCOPE_USDT=0"],
                 "disabled": ["-DHOOKSCOPE_ENABLED=0"]}
PROBES_FLAGS = ["-DHOOKSCOPE_ENABLED=1", "-DHOOKSCOPE_USDT=1"]
SDT_HEADERS = ("/usr/include/sys/sdt.h", "/usr/include/x86_64-linux-gnu/sys/sdt.h")


def compile_command(compiler, include_dir, src, obj, flags):
    return [compiler, "-std=c++20", "-O2", "-I", include_dir, *flags, "-c", src, "-o", obj]


def compile_once(compiler, include_dir, src, obj, flags):
    """Compiles `src` once; the compiler's CPU time (user + system), not wall time: the machine may be shared."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(compile_command(compiler, include_dir, src, obj, flags), check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def source_path(tmp, tag):
    """Where a variant's source is written; its object is next to it."""
    return os.path.join(tmp, tag.replace(" ", "_") + ".cpp")


def measure(compiler, variants, runs, tmp):
    """Best compile time and text+data of each variant {tag: (source, flags, include directory)}.

    The variants take turns in every round, so that a slow phase of the machine weighs on all of them alike
    (the ratios are what the targets compare)."""
    paths = {}
    for tag, (source, _, _) in variants.items():
        src = source_path(tmp, tag)
        paths[tag] = (src, os.path.splitext(src)[0] + ".o")
        with open(paths[tag][0], "w", encoding="utf-8") as f:
            f.write(source)
    best = {tag: float("inf") for tag in variants}
    for _ in range(runs):
        for tag, (_, flags, include_dir) in variants.items():
            best[tag] = min(best[tag], compile_once(compiler, include_dir, *paths[tag], flags))
    results = {}
    for tag in variants:
        fields = subprocess.run(["size", paths[tag][1]], capture_output=True, text=True,
                                check=True).stdout.splitlines()[1].split()
        results[tag] = (best[tag], int(fields[0]) + int(fields[1]), machine_code(paths[tag][1]))
    return results


def machine_code(obj):
    """Bytes of the object's executable sections (flag X in `readelf -S`: .text and its comdat and cold parts)."""
    out = subprocess.run(["readelf", "-SW", obj], capture_output=True, text=True, check=True).stdout
    total = 0
    for line in out.splitlines():
        if "]" not in line or not line.lstrip().startswith("["):
            continue
        columns = line.split("]", 1)[1].split()  # name, type, address, offset, size, entry size, flags, ...
        if len(columns) >= 7 and columns[1] == "PROGBITS" and "X" in columns[6]:
            total += int(columns[4], 16)
    return total


def instructions(compiler, include_dir, src, flags, tmp):
    """Instructions executed by the compiler (every process the driver starts) compiling `src`, in millions."""
    for old in glob.glob(os.path.join(tmp, "callgrind.*")):
        os.remove(old)
    subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                    f"--callgrind-out-file={os.path.join(tmp, 'callgrind.%p')}",
                    *compile_command(compiler, include_dir, src, os.devnull, flags)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = 0
    for out in glob.glob(os.path.join(tmp, "callgrind.*")):
        with open(out, encoding="utf-8", errors="replace") as f:
            total += sum(int(line.split()[1]) for line in f if line.startswith("summary:"))
    return total / 1e6


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("include_dir")
    parser.add_argument("--compiler", default=os.environ.get("CXX", "c++"))
    parser.add_argument("--functions", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--distinct-names", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--keep", help="directory to keep the generated sources and objects in")
    parser.add_argument("--instructions", action="store_true",
                        help="also count the compiler's instructions per variant (needs valgrind)")
    parser.add_argument("--baseline", help="another include directory to compile the annotated TU against")
    args = parser.parse_args()
    n = args.functions

    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        os.makedirs(tmp, exist_ok=True)
        annotated = generate(n, True, args.distinct_names)
        sources = {"plain": generate(n, False), "enabled": annotated, "disabled": annotated}
        variants = {tag: (sources[tag], flags, args.include_dir) for tag, flags in VARIANT_FLAGS.items()}
        if any(os.path.exists(h) for h in SDT_HEADERS):
            variants["probes"] = (annotated, PROBES_FLAGS, args.include_dir)
        if args.baseline:
            variants.update({f"baseline {tag}": (annotated, VARIANT_FLAGS[tag], args.baseline)
                             for tag in ("enabled", "disabled")})
            if "probes" in variants:
                variants["baseline probes"] = (annotated, PROBES_FLAGS, args.baseline)
        results = measure(args.compiler, variants, args.runs, tmp)
        plain, enabled, disabled = results["plain"], results["enabled"], results["disabled"]
        counts = {}
        if args.instructions:
            for tag, (_, flags, include_dir) in variants.items():
                counts[tag] = instructions(args.compiler, include_dir, source_path(tmp, tag), flags, tmp)

    def per(v):
        return (v[1] - plain[1]) / n

    def per_code(v):
        return (v[2] - plain[2]) / n

    enabled_ok = enabled[0] <= ENABLED_MAX_S and per_code(enabled) <= ENABLED_MAX_BYTES
    disabled_ok = disabled[0] <= DISABLED_MAX_RATIO * plain[0]
    print(f"{n} functions of 1-4 parameters in one TU{' (distinct parameter names)' if args.distinct_names else ''}, "
          f"{os.path.basename(args.compiler)} -O2, compiler CPU time, best of {args.runs}:")
    print()
    print("| variant | compile time | text+data | per annotation | machine code per annotation | target |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    print(f"| plain | {plain[0]:.2f} s | {plain[1]} B | | | |")
    print(f"| enabled | {enabled[0]:.2f} s ({enabled[0] / plain[0]:.2f}× plain) | {enabled[1]} B | {per(enabled):.0f} B | "
          f"{per_code(enabled):.0f} B | ≤ {ENABLED_MAX_S:.0f} s and ≤ {ENABLED_MAX_BYTES} B of machine code: "
          f"{'met' if enabled_ok else 'NOT met'} |")
    print(f"| disabled | {disabled[0]:.2f} s ({disabled[0] / plain[0]:.2f}× plain) | {disabled[1]} B | "
          f"{per(disabled):.0f} B | {per_code(disabled):.0f} B | ≤ {DISABLED_MAX_RATIO}× plain: "
          f"{'met' if disabled_ok else 'NOT met'} |")
    probes_ok = True
    if "probes" in results:
        probes = results["probes"]
        probes_ok = per_code(probes) <= PROBES_MAX_BYTES
        print(f"| enabled, USDT probes | {probes[0]:.2f} s ({probes[0] / plain[0]:.2f}× plain) | {probes[1]} B | "
              f"{per(probes):.0f} B | {per_code(probes):.0f} B | ≤ {PROBES_MAX_BYTES} B of machine code: "
              f"{'met' if probes_ok else 'NOT met'} |")
    for tag in ("enabled", "disabled", "probes"):
        if f"baseline {tag}" in results:
            base = results[f"baseline {tag}"]
            print(f"| baseline {tag} | {base[0]:.2f} s ({base[0] / plain[0]:.2f}× plain) | {base[1]} B | "
                  f"{per(base):.0f} B | {per_code(base):.0f} B | now {results[tag][0] / base[0]:.2f}× its time |")
    if counts:
        print()
        print("| variant | compiler instructions | ratio to plain |")
        print("| --- | ---: | ---: |")
        for tag in counts:
            print(f"| {tag} | {counts[tag]:.0f} M | {counts[tag] / counts['plain']:.2f}× |")
    return 1 if args.check and not (enabled_ok and disabled_ok and probes_ok) else 0


if __name__ == "__main__":
    sys.exit(main())
