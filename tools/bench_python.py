#!/usr/bin/env python3
"""Observe + infer cost, hookscope.torch.InputObserver vs onnx-diagnostic's InputObserver (the reference), on the
same calls of a small module: N forward calls of varying batch and length inside `with observer(model)`, then
infer_dynamic_shapes() and infer_arguments(). Prints a Markdown table (median of REPEAT runs, milliseconds).

Run with the venv of tools/python_env.sh (Debian's /usr/bin/python3 made it):
  build/pyenv/bin/python tools/bench_python.py [--repeat 5]
"""
import argparse
import statistics
import time

import torch

from hookscope.torch import InputObserver as HookscopeObserver
from onnx_diagnostic.investigate.input_observer import InputObserver as ReferenceObserver


class Model(torch.nn.Module):
    def forward(self, input_ids, attention_mask, past=None):
        return input_ids.sum() + attention_mask.sum()


def inputs(n):
    g = torch.Generator().manual_seed(0)
    out = []
    for i in range(n):
        b, s = 1 + i % 3, 1 + i % 17
        out.append(dict(input_ids=torch.randint(0, 10, (b, s), generator=g),
                        attention_mask=torch.ones(b, s + i % 5, dtype=torch.int64),
                        past=(torch.zeros(b, 2, i % 11, 4), torch.zeros(b, 2, i % 11, 4)) if i else None))
    return out


def run(observer_cls, calls, store):
    model = Model()
    obs = observer_cls()
    start = time.perf_counter()
    with obs(model, store_n_calls=store):
        for kw in calls:
            model(**kw)
    observed = time.perf_counter() - start
    obs.infer_dynamic_shapes()
    obs.infer_arguments()
    return observed, time.perf_counter() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    print("| calls (all stored) | hookscope observe | hookscope observe+infer | onnx-diagnostic observe | "
          "onnx-diagnostic observe+infer |")
    print("|---:|---:|---:|---:|---:|")
    for n in (3, 1000):
        calls = inputs(n)
        row = []
        for cls in (HookscopeObserver, ReferenceObserver):
            runs = [run(cls, calls, n) for _ in range(a.repeat)]
            row += [statistics.median(r[0] for r in runs) * 1e3, statistics.median(r[1] for r in runs) * 1e3]
        print(f"| {n} | " + " | ".join(f"{x:.2f} ms" for x in row) + " |")


if __name__ == "__main__":
    main()
