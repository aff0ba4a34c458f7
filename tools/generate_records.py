#!/usr/bin/env python3
"""Writes a decoder's recorded `forward` calls as JSON Lines, as hookscope's writers write them (docs/record_format.md):
the input of the reading benchmark (bench/read.bench.cpp, `tools/bench.sh --read`).

    python3 tools/generate_records.py OUT.jsonl                        # 200,000 records, ~100 MB
    python3 tools/generate_records.py OUT.jsonl --size 1G              # records until the file holds 1 GB
    python3 tools/generate_records.py OUT.jsonl --records 50000 --seed 7
    python3 tools/generate_records.py SHARDS/ --shards 1000            # the same records in 1,000 files

The calls are those of generate() runs of random batch (1-8) and prompt length (4-64 tokens): a prefill (the whole
prompt, no cache: `past_key_values` null) then 8-64 decode steps of one token each, the cache (a tuple of 8 tensors,
[batch, 8, past, 64]) growing by one position a step. The first record of a file carries the function's signature,
as a writer writes it with a function's first record; with --shards each shard is one writer's file (its first record
carries the signature), and the shards, in order, hold the records of the single file.

Deterministic: the same options give the same bytes. Standard library only.
"""

import argparse
import os
import random
import sys

FUNCTION = "Decoder.forward"
SIGNATURE = ('[{"name":"input_ids"},{"name":"attention_mask"},{"name":"past_key_values","default":null}]')
DEFAULT_RECORDS = 200_000


def parse_size(text):
    """'100M', '1G', '5000000' -> bytes (powers of 1000: the sizes people quote for files)."""
    units = {"K": 10**3, "M": 10**6, "G": 10**9}
    try:
        if text[-1:].upper() in units:
            return int(float(text[:-1]) * units[text[-1].upper()])
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 100M, 1G or a number of bytes)") from None


def records(seed):
    """The record lines without the signature, forever: (line head, line tail) around where a signature goes."""
    rng = random.Random(seed)
    head = '{"function":"' + FUNCTION + '",'
    while True:
        batch, prompt, steps = rng.randint(1, 8), rng.randint(4, 64), rng.randint(8, 64)
        for step in range(steps + 1):
            past = 0 if step == 0 else prompt + step - 1
            length = prompt if step == 0 else 1
            if past == 0:
                cache = "null"
            else:
                t = f'{{"shape":[{batch},8,{past},64],"dtype":"float16"}}'
                cache = '{"tuple":[' + ",".join([t] * 8) + "]}"
            tail = (f'"args":[],"kwargs":[["input_ids",{{"shape":[{batch},{length}],"dtype":"int64"}}],'
                    f'["attention_mask",{{"shape":[{batch},{past + length}],"dtype":"int64"}}],'
                    f'["past_key_values",{cache}]],"latency_ns":{rng.randint(10_000, 90_000)}}}\n')
            yield head, tail


def line_of(head, tail, first):
    return head + ('"signature":' + SIGNATURE + "," if first else "") + tail


def write_one(path, count, size, seed):
    written = n = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for head, tail in records(seed):
            if (count is not None and n >= count) or (size is not None and written >= size):
                break
            line = line_of(head, tail, n == 0)
            out.write(line)
            written += len(line)
            n += 1
    return n, written


def write_shards(directory, shards, count, size, seed):
    """The records of write_one(count or size), cut into `shards` files of consecutive records (shard-00000.jsonl,
    ...), each starting with the signature."""
    if size is not None:  # how many records the single file holds, to cut it evenly
        count = sum(1 for _ in range_until_size(seed, size))
    if count < shards:
        sys.exit(f"generate_records: {count:,} records cannot fill {shards:,} shards")
    os.makedirs(directory, exist_ok=True)
    width = max(5, len(str(shards - 1)))
    stream = records(seed)
    n = written = 0
    for s in range(shards):
        in_shard = count // shards + (1 if s < count % shards else 0)
        with open(os.path.join(directory, f"shard-{s:0{width}d}.jsonl"), "w", encoding="utf-8",
                  newline="\n") as out:
            for i in range(in_shard):
                head, tail = next(stream)
                line = line_of(head, tail, i == 0)
                out.write(line)
                written += len(line)
                n += 1
    return n, written


def range_until_size(seed, size):
    written = 0
    for i, (head, tail) in enumerate(records(seed)):
        if written >= size:
            return
        written += len(line_of(head, tail, i == 0))
        yield i


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the file to write (with --shards: the directory of the shards)")
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("--records", type=int, metavar="N", help=f"records to write (default {DEFAULT_RECORDS:,})")
    amount.add_argument("--size", type=parse_size, metavar="BYTES",
                        help="write records until the file holds at least BYTES (100M, 1G, ...)")
    parser.add_argument("--shards", type=int, metavar="N", help="cut the records into N files in the directory OUT")
    parser.add_argument("--seed", type=int, default=0, help="the random generator's seed (default 0)")
    args = parser.parse_args(argv)
    if args.records is not None and args.records < 1:
        parser.error("--records must be at least 1")
    if args.shards is not None and args.shards < 1:
        parser.error("--shards must be at least 1")
    count = args.records if args.records is not None or args.size is not None else DEFAULT_RECORDS
    if args.shards is None:
        n, written = write_one(args.out, count, args.size, args.seed)
    else:
        n, written = write_shards(args.out, args.shards, count, args.size, args.seed)
    print(f"generate_records: {args.out}: {n:,} records, {written / 1e6:.1f} MB"
          + (f" in {args.shards} shards" if args.shards else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
