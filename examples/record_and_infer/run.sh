#!/usr/bin/env bash
# Records the example's calls through HOOKSCOPE_RECORD, then infers their dynamic shapes with hookscope-shapes,
# and checks both against what was worked out by hand. Usage: run.sh PROGRAM HOOKSCOPE_SHAPES HOOKS(1|0)
set -euo pipefail
program=$1 shapes=$2 hooks=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "\$ HOOKSCOPE_RECORD='service::encode=calls.jsonl' $(basename "$program")"
HOOKSCOPE_RECORD="service::encode=$dir/calls.jsonl" "$program"
if [ "$hooks" != 1 ]; then
  # Built with -Dhooks=false: nothing is observed, so nothing may be recorded.
  [ ! -e "$dir/calls.jsonl" ] || { echo "FAILED: hooks are compiled out but a record file was written"; exit 1; }
  echo "hooks compiled out: nothing recorded, as expected"
  exit 0
fi
echo "--- calls.jsonl ($(wc -l <"$dir/calls.jsonl") lines), first line:"
head -n 1 "$dir/calls.jsonl"

check() {  # check WHAT EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then
    printf 'FAILED: %s\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3"
    exit 1
  fi
  printf '%s\n' "$3"
}

echo "\$ hookscope-shapes infer calls.jsonl --store-n-calls all"
# Both dimensions of both inputs vary; the fourth call has no mask, which alignment fills with placeholders.
check "torch.export dynamic shapes" \
  '{"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"attention_mask":{"0":"DYNAMIC","1":"DYNAMIC"}}' \
  "$("$shapes" infer "$dir/calls.jsonl" --store-n-calls all)"

echo "\$ hookscope-shapes infer calls.jsonl --store-n-calls all --format trtexec"
# input_ids: batch 2,1,4,1 and length 5,9,7,3; attention_mask: 2,1,4 and 5,9,7, and in the fourth call the
# placeholder the model then receives, 1x0 (a profile covers the calls as the model receives them). opt is one
# observed call: among those giving both inputs, each seen once, the one agreeing with the most per-dim modes.
check "TensorRT profile" \
  '--minShapes=input_ids:1x3,attention_mask:1x0 --optShapes=input_ids:1x9,attention_mask:1x9 --maxShapes=input_ids:4x9,attention_mask:4x9' \
  "$("$shapes" infer "$dir/calls.jsonl" --store-n-calls all --format trtexec)"
