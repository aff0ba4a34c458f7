"""hookscope-shapes on the record files of tests/data: stdout, stderr and the exit code of every invocation, one case
each; --help; standard input; the linear-time ratio of large inputs; the value kinds of C++ captures through
summarize and infer. (Summaries of random cuts against one pass, and damaged summaries: test_summaries.py.)

Every expectation below was worked out by hand from the record files and the InputObserver rules
(docs/input_observer_rules.md, cited as A1..D4): the command runs in tests/data, so messages
name the files as given. An expectation of None is not checked; a set holds strings the output must contain.
"""
import json
import os
import subprocess
import time

import pytest

from support import DATA, Checks, difference, expect, run

USAGE_HINT = "Try 'hookscope-shapes --help'.\n"

# llm.jsonl: Model::forward(input_ids, attention_mask, past_key_values=None), prefill then 3 decode steps.
# Call 1 has no cache (None, dropped: A3), so the best candidate is call 2 (A7); input_ids dim 1 takes 7,1,1,
# attention_mask dim 1 takes 7,8,9, each cache tensor dim 2 takes 7,8 (C1); a struct maps to a list (C4).
LLM_TORCH = ('{"input_ids":{"1":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},'
             '"past_key_values":[{"2":"DYNAMIC"},{"2":"DYNAMIC"}]}\n')
KEY_7 = '{"shape":[2,4,7,16],"dtype":"float16"}'
LLM_CALL_2 = ('[["input_ids",{"shape":[2,1],"dtype":"int64"}],["attention_mask",{"shape":[2,8],"dtype":"int64"}],'
              f'["past_key_values",{{"struct":"DynamicCache","fields":[["key_0",{KEY_7}],["value_0",{KEY_7}]]}}]]')
# Call 1 with its cache filled from the last call that has one (call 3, [2,4,8,16]), dynamic dim 2 set to 0 (D2).
KEY_0 = '{"shape":[2,4,0,16],"dtype":"float16"}'
LLM_CALL_1 = ('[["input_ids",{"shape":[2,7],"dtype":"int64"}],["attention_mask",{"shape":[2,7],"dtype":"int64"}],'
              f'["past_key_values",{{"struct":"DynamicCache","fields":[["key_0",{KEY_0}],["value_0",{KEY_0}]]}}]]')

# encoder.jsonl: encode(x, mask); x [1,5,16] [2,9,16] [2,5,16], mask likewise without the last dim.
ENCODER_TORCH = '{"x":{"0":"DYNAMIC","1":"DYNAMIC"},"mask":{"0":"DYNAMIC","1":"DYNAMIC"}}\n'

# dropped_note.jsonl: encoder.jsonl with notes of records its writer dropped (docs/record_format.md, "Notes") before,
# between and after its records, one of them of a function no record names; each note is skipped with a warning.
DROPPED_NOTES = ("hookscope-shapes: warning: dropped_note.jsonl:1: the writer dropped 1234 records of 'encode' "
                 "(buffer_full)\n"
                 "hookscope-shapes: warning: dropped_note.jsonl:3: the writer dropped 7 records of 'decode' "
                 "(buffer_full)\n"
                 "hookscope-shapes: warning: dropped_note.jsonl:5: the writer dropped 1 record of 'encode' "
                 "(too_large_at_signal)\n"
                 "hookscope-shapes: warning: dropped_note.jsonl:7: the writer dropped 5 records of 'encode' "
                 "(buffer_full)\n")

# A1: the 4th call of llm.jsonl is beyond the default --store-n-calls 3; the command says so.
LLM_LEFT_OUT = ("hookscope-shapes: warning: kept the first 3 of 4 calls of Model::forward; "
                "--store-n-calls all uses every call\n")

# decoder_kv.jsonl, written by Python's json.dumps (", " and ": " separators): Decoder.forward(input_ids,
# attention_mask, past_key_values=None, pixel_values=None), past_key_values a tuple (key, value) of [b,2,past,8],
# the image [b,3,16,16] at the prefill only (None, dropped by A3, later: B4 placeholders). Two generations, batch 1
# with 7 tokens and batch 2 with 5, each a prefill (past 0) and 3 decode steps; `result` = (logits [b,s,32], key,
# value [b,2,past+s,8]). Per call (batch B, sequence S, past P, mask T, image batch X with the placeholder's 0):
#   call 0..3: B 1, S 7 1 1 1, P 0 7 8 9, T 7 8 9 10, X 1 0 0 0
#   call 4..7: B 2, S 5 1 1 1, P 0 5 6 7, T 5 6 7 8, X 2 0 0 0
# Relations (profiles.cpp): T = S + P in all 8 calls; no a = k*b + c (worked through every pair by hand).
DEC_LEFT_OUT = ("hookscope-shapes: warning: kept the first 3 of 8 calls of Decoder.forward; "
                "--store-n-calls all uses every call\n")
ALL = ["--store-n-calls", "all"]
# pixel_values dim 0 (1, 2 at the prefills, absent elsewhere) equals input_ids dim 0 wherever both are given:
# batch_size. With a value_if_missing of batch 0 it is given at every decode step too, and differs: not batch_size.
DEC_NAMES_SHARED = ('{"input_ids":{"0":"batch_size","1":"sequence_length"},'
                    '"attention_mask":{"0":"batch_size","1":"total_sequence_length"},'
                    '"past_key_values":[{"0":"batch_size","2":"past_sequence_length"},'
                    '{"0":"batch_size","2":"past_sequence_length"}],"pixel_values":{"0":"batch_size"}}\n')
DEC_NAMES = ('{"input_ids":{"0":"batch_size","1":"sequence_length"},'
             '"attention_mask":{"0":"batch_size","1":"total_sequence_length"},'
             '"past_key_values":[{"0":"batch_size","2":"past_sequence_length"},'
             '{"0":"batch_size","2":"past_sequence_length"}],"pixel_values":{"0":"pixel_values_dim_0"}}\n')
DEC_NAME_NOTE = ("hookscope-shapes: warning: dimension 0 of 'pixel_values' is not named batch_size (its well-known "
                 "name): its values differ from those of dimension 0 of 'input_ids', which has that name; it gets a "
                 "name of its own\n")
# One profile over the 8 calls, solved from the relation T = S + P: the free dims' extremes over the calls as the
# model receives them (X's placeholder 0 included; the image 0..2, its decode-step placeholder 0x3x16x16 included);
# T computed from S and P: min 1 + 0, max 7 + 9 (widened from the observed 5 and 10);
# opt among the calls giving every input (the prefills 0 and 4), each seen once: the tie goes to the one agreeing
# with the most per-dim modes (B 1, S 1, P 0, T 7, image 1): call 0 (B, T, P twice, image; call 4 only P twice).
def spec(ids, mask, past, pix):
    return (f"input_ids:{ids},attention_mask:{mask},past_key_values.0:{past},past_key_values.1:{past},"
            f"pixel_values:{pix}")
DEC_TRT = ("--minShapes=" + spec("1x1", "1x1", "1x2x0x8", "0x3x16x16") +
           " --optShapes=" + spec("1x7", "1x7", "1x2x0x8", "1x3x16x16") +
           " --maxShapes=" + spec("2x7", "2x16", "2x2x9x8", "2x3x16x16") + "\n")
# --profiles auto: split on S = 1 (6 calls) / S > 1 (2 calls: P constant 0, the image absent in decode); the split
# on B makes nothing constant. Prefill first (its first call is 0); no widening needed in either (5 = 5 + 0,
# 7 = 7 + 0; 6 = 1 + 5, 10 = 1 + 9); decode opt = call 1, agreeing with every mode (B 1, S 1, P 7, T 8); the image,
# given by no decode call, takes its placeholder there (0x3x16x16, D2: call 4's shape, varying dim 0 set to 0).
DEC_TRT_AUTO = ("--profile=0 --minShapes=" + spec("1x5", "1x5", "1x2x0x8", "1x3x16x16") +
                " --optShapes=" + spec("1x7", "1x7", "1x2x0x8", "1x3x16x16") +
                " --maxShapes=" + spec("2x7", "2x7", "2x2x0x8", "2x3x16x16") +
                " --profile=1 --minShapes=" + spec("1x1", "1x6", "1x2x5x8", "0x3x16x16") +
                " --optShapes=" + spec("1x1", "1x8", "1x2x7x8", "0x3x16x16") +
                " --maxShapes=" + spec("2x1", "2x10", "2x2x9x8", "0x3x16x16") + "\n")
DEC_ORT = ("trt_profile_min_shapes=" + spec("1x1", "1x1", "1x2x0x8", "0x3x16x16") + "\n"
           "trt_profile_opt_shapes=" + spec("1x7", "1x7", "1x2x0x8", "1x3x16x16") + "\n"
           "trt_profile_max_shapes=" + spec("2x7", "2x16", "2x2x9x8", "2x3x16x16") + "\n")
# Outputs (finding 6): result.0 [B,S,32], result.1/2 [B,2,P+S,8]: their dims take the names of the input dims with the
# same values in every call (B, S, T).
DEC_ONNX = ('{"input_ids":{"0":"batch_size","1":"sequence_length"},'
            '"attention_mask":{"0":"batch_size","1":"total_sequence_length"},'
            '"past_key_values.0":{"0":"batch_size","2":"past_sequence_length"},'
            '"past_key_values.1":{"0":"batch_size","2":"past_sequence_length"},'
            '"pixel_values":{"0":"batch_size"},'
            '"result.0":{"0":"batch_size","1":"sequence_length"},"result.1":{"0":"batch_size","2":"total_sequence_length"},'
            '"result.2":{"0":"batch_size","2":"total_sequence_length"}}\n')
DEC_KV = lambda b, p: f'{{"tuple":[{{"shape":[{b},2,{p},8],"dtype":"float32"}},{{"shape":[{b},2,{p},8],"dtype":"float32"}}]}}'

CASES = [
    # --- infer, in each format ---
    ("infer, torch format by default", ["infer", "llm.jsonl"], 0, LLM_TORCH, LLM_LEFT_OUT),
    ("infer --format torch", ["infer", "encoder.jsonl", "--format", "torch"], 0, ENCODER_TORCH, ""),
    # min/opt/max per dim, opt the most frequent value: dim 0 1,2,2 -> 1/2/2; dim 1 5,9,5 -> 5/5/9.
    ("infer --format trtexec", ["infer", "encoder.jsonl", "--format=trtexec"], 0,
     "--minShapes=x:1x5x16,mask:1x5 --optShapes=x:2x5x16,mask:2x5 --maxShapes=x:2x9x16,mask:2x9\n", ""),
    ("infer --format ort", ["infer", "encoder.jsonl", "--format", "ort"], 0,
     "trt_profile_min_shapes=x:1x5x16,mask:1x5\n"
     "trt_profile_opt_shapes=x:2x5x16,mask:2x5\n"
     "trt_profile_max_shapes=x:2x9x16,mask:2x9\n", ""),
    # The same numbers as torch_tensorrt.Input's keyword arguments; torch's dtype names.
    ("infer --format torch-tensorrt", ["infer", "encoder.jsonl", "--format", "torch-tensorrt"], 0,
     '[{"name":"x","dtype":"float32","min_shape":[1,5,16],"opt_shape":[2,5,16],"max_shape":[2,9,16]},'
     '{"name":"mask","dtype":"bool","min_shape":[1,5],"opt_shape":[2,5],"max_shape":[2,9]}]\n', ""),
    ("infer --format report", ["infer", "encoder.jsonl", "--format", "report"], 0,
     {"x", "mask", "1x5x16, 2x9x16, 2x5x16", "1x5, 2x9, 2x5"}, ""),
    # Every argument positional: an array; the scalar stays a leaf (A3) and gets null (C4).
    ("infer, positional arguments", ["infer", "positional.jsonl"], 0, '[{"0":"DYNAMIC"},null]\n', ""),
    ("infer from standard input", ["infer", "-"], 0, ENCODER_TORCH, "", "encoder.jsonl"),

    # --- options ---
    # Only the first 2 calls: the cache is seen once, so it is static.
    ("--store-n-calls 2", ["infer", "llm.jsonl", "--store-n-calls", "2"], 0,
     '{"input_ids":{"1":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},"past_key_values":[{},{}]}\n',
     LLM_LEFT_OUT.replace("first 3", "first 2")),
    ("--store-n-calls all", ["infer", "llm.jsonl", "--store-n-calls", "all"], 0, LLM_TORCH, ""),
    # Dim 0 of input_ids and of every leaf of past_key_values (C2).
    ("--batch", ["infer", "llm.jsonl", "--batch", "input_ids,past_key_values"], 0,
     '{"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},'
     '"past_key_values":[{"0":"DYNAMIC","2":"DYNAMIC"},{"0":"DYNAMIC","2":"DYNAMIC"}]}\n', LLM_LEFT_OUT),
    ("--batch-all", ["infer", "llm.jsonl", "--batch-all"], 0,
     '{"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"attention_mask":{"0":"DYNAMIC","1":"DYNAMIC"},'
     '"past_key_values":[{"0":"DYNAMIC","2":"DYNAMIC"},{"0":"DYNAMIC","2":"DYNAMIC"}]}\n', LLM_LEFT_OUT),
    # Well-known LLM names (C3).
    ("--dim-names, LLM names", ["infer", "llm.jsonl", "--dim-names"], 0,
     '{"input_ids":{"1":"sequence_length"},"attention_mask":{"1":"total_sequence_length"},'
     '"past_key_values":[{"2":"past_sequence_length"},{"2":"past_sequence_length"}]}\n', LLM_LEFT_OUT),
    # Dims with identical observed values share the first one's name (C3): x dim 0 and mask dim 0 take 1,2,2.
    ("--dim-names, shared names", ["infer", "encoder.jsonl", "--dim-names"], 0,
     '{"x":{"0":"x_dim_0","1":"x_dim_1"},"mask":{"0":"x_dim_0","1":"x_dim_1"}}\n', ""),
    ("--dim-name", ["infer", "llm.jsonl", "--dim-name", "input_ids:1=seq", "--dim-name", "attention_mask:1=total",
                    "--dim-name=past_key_values:2=past"], 0,
     '{"input_ids":{"1":"seq"},"attention_mask":{"1":"total"},"past_key_values":[{"2":"past"},{"2":"past"}]}\n',
     LLM_LEFT_OUT),
    # Without a value, pixel_values is seen once: static. With one, calls 2 and 3 get [0,3,8,8] (A4).
    ("optional input left out", ["infer", "optional.jsonl"], 0, '{"input_ids":{"1":"DYNAMIC"},"pixel_values":{}}\n', ""),
    ("--value-if-missing", ["infer", "optional.jsonl", "--value-if-missing",
                            'pixel_values={"shape":[0,3,8,8],"dtype":"float32"}'], 0,
     '{"input_ids":{"1":"DYNAMIC"},"pixel_values":{"0":"DYNAMIC"}}\n',
     {"hookscope-shapes: warning: ", "'pixel_values'", "0 and 1"}),  # torch.export specialises 0 and 1

    ("two files merge", ["infer", "encoder_part1.jsonl", "encoder_part2_crlf.jsonl"], 0, ENCODER_TORCH, ""),
    ("--function chooses among several", ["infer", "two_functions.jsonl", "--function", "decode"], 0,
     '{"y":{"1":"DYNAMIC"}}\n', ""),

    # --- args ---
    # The first call with as many arguments as the best candidate is call 2 (D1): nothing to fill.
    ("args", ["args", "llm.jsonl"], 0, '{"dict":' + LLM_CALL_2 + '}\n', LLM_LEFT_OUT),
    ("args --index 0", ["args", "llm.jsonl", "--index", "0"], 0, '{"dict":' + LLM_CALL_1 + '}\n', LLM_LEFT_OUT),
    ("args --as-args-kwargs", ["args", "llm.jsonl", "--as-args-kwargs"], 0,
     '{"tuple":[{"tuple":[]},{"dict":' + LLM_CALL_2 + '}]}\n', LLM_LEFT_OUT),
    ("args --flat", ["args", "optional.jsonl", "--flat"], 0,
     '{"list":[{"shape":[1,5],"dtype":"int64"},{"shape":[1,3,8,8],"dtype":"float32"}]}\n', ""),
    ("args, positional arguments", ["args", "positional.jsonl"], 0,
     '{"tuple":[{"shape":[3,4],"dtype":"float32"},{"int":2}]}\n', ""),
    # Call 3 misses pixel_values; no dim of it is dynamic, so a tensor of call 1's shape fills it (D2).
    ("args --index 2, placeholder filled", ["args", "optional.jsonl", "--index", "2"], 0,
     '{"dict":[["input_ids",{"shape":[1,7],"dtype":"int64"}],["pixel_values",{"shape":[1,3,8,8],"dtype":"float32"}]]}\n',
     ""),

    # --- a decoder with a KV cache and an image at the prefill, as a Python producer writes it (decoder_kv.jsonl) ---
    # 3 of 8 calls kept by default, and said so; batch is then static (calls 0-2 have batch 1), the image
    # seen once is static.
    ("decoder: default keeps 3 calls, says so", ["infer", "decoder_kv.jsonl"], 0,
     '{"input_ids":{"1":"DYNAMIC"},"attention_mask":{"1":"DYNAMIC"},"past_key_values":[{"2":"DYNAMIC"},'
     '{"2":"DYNAMIC"}],"pixel_values":{}}\n', DEC_LEFT_OUT),
    ("decoder: every call", ["infer", "decoder_kv.jsonl"] + ALL, 0,
     '{"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},"attention_mask":{"0":"DYNAMIC","1":"DYNAMIC"},'
     '"past_key_values":[{"0":"DYNAMIC","2":"DYNAMIC"},{"0":"DYNAMIC","2":"DYNAMIC"}],"pixel_values":{"0":"DYNAMIC"}}\n',
     ""),
    ("decoder: --dim-names share a name between dims equal wherever both are given",
     ["infer", "decoder_kv.jsonl", "--dim-names"] + ALL, 0, DEC_NAMES_SHARED, ""),
    # labels.jsonl (worked by hand): batch 1 then 2; the cache, absent at both prefills, has the batch of input_ids in
    # every call giving it: batch_size. pixel-values (1, 2 in calls 0, 1) and pixel_values (1, 2 in calls 1, 2) have
    # the same sequence but differ in call 1, and each differs from the batch (1, 1) there: three names, identifiers.
    ("labels: shared only where equal whenever both are given, identifiers made distinct",
     ["infer", "labels.jsonl", "--dim-names"] + ALL, 0,
     '{"input_ids":{"0":"batch_size","1":"sequence_length"},'
     '"attention_mask":{"0":"batch_size","1":"total_sequence_length"},'
     '"past_key_values":[{"0":"batch_size","2":"past_sequence_length"},{"0":"batch_size","2":"past_sequence_length"}],'
     '"pixel-values":{"0":"pixel_values_2_dim_0"},"pixel_values":{"0":"pixel_values_dim_0"}}\n',
     "hookscope-shapes: warning: dimension 0 of 'pixel_values' is not named batch_size (its well-known name): its "
     "values differ from those of dimension 0 of 'input_ids', which has that name; it gets a name of its own\n"),
    # With a value_if_missing 0 for the image (1,0,0,0,2,0,0,0): it differs from the batch inside a call.
    ("decoder: --dim-names with the image's value_if_missing", ["infer", "decoder_kv.jsonl", "--dim-names",
     "--value-if-missing", 'pixel_values={"shape":[0,3,16,16],"dtype":"float32"}'] + ALL, 0, DEC_NAMES, DEC_NAME_NOTE),
    # The tuple stays a tuple, the dict of arguments a dict.
    ("decoder: --typed", ["infer", "decoder_kv.jsonl", "--typed"] + ALL, 0,
     '{"dict":[["input_ids",{"0":"DYNAMIC","1":"DYNAMIC"}],["attention_mask",{"0":"DYNAMIC","1":"DYNAMIC"}],'
     '["past_key_values",{"tuple":[{"0":"DYNAMIC","2":"DYNAMIC"},{"0":"DYNAMIC","2":"DYNAMIC"}]}],'
     '["pixel_values",{"0":"DYNAMIC"}]]}\n', ""),
    ("decoder: trtexec, one consistent profile", ["infer", "decoder_kv.jsonl", "--format", "trtexec"] + ALL, 0,
     DEC_TRT, ""),
    ("decoder: ort, one consistent profile", ["infer", "decoder_kv.jsonl", "--format", "ort", "--profiles", "1"] + ALL,
     0, DEC_ORT, ""),
    ("decoder: trtexec, --profiles auto", ["infer", "decoder_kv.jsonl", "--format", "trtexec", "--profiles", "auto"]
     + ALL, 0, DEC_TRT_AUTO, ""),
    ("decoder: ort, --profiles auto: each input once per profile", ["infer", "decoder_kv.jsonl", "--format", "ort",
     "--profiles", "auto"] + ALL, 0,
     "trt_profile_min_shapes=" + spec("1x5", "1x5", "1x2x0x8", "1x3x16x16") + "," +
     spec("1x1", "1x6", "1x2x5x8", "0x3x16x16") + "\n"
     "trt_profile_opt_shapes=" + spec("1x7", "1x7", "1x2x0x8", "1x3x16x16") + "," +
     spec("1x1", "1x8", "1x2x7x8", "0x3x16x16") + "\n"
     "trt_profile_max_shapes=" + spec("2x7", "2x7", "2x2x0x8", "2x3x16x16") + "," +
     spec("2x1", "2x10", "2x2x9x8", "0x3x16x16") + "\n", ""),
    # DEC_TRT_AUTO's numbers with every 0 raised to 1 (the prefill's empty cache, the decode steps' absent image),
    # one warning for each.
    ("decoder: torch-tensorrt, --profiles auto: profiles=[...], min >= 1", ["infer", "decoder_kv.jsonl", "--format",
     "torch-tensorrt", "--profiles", "auto"] + ALL, 0,
     '[{"name":"input_ids","dtype":"int64","profiles":['
     '{"min_shape":[1,5],"opt_shape":[1,7],"max_shape":[2,7]},{"min_shape":[1,1],"opt_shape":[1,1],"max_shape":[2,1]}]},'
     '{"name":"attention_mask","dtype":"int64","profiles":['
     '{"min_shape":[1,5],"opt_shape":[1,7],"max_shape":[2,7]},{"min_shape":[1,6],"opt_shape":[1,8],"max_shape":[2,10]}'
     ']},{"name":"past_key_values.0","dtype":"float32","profiles":[{"min_shape":[1,2,1,8],"opt_shape":[1,2,1,8],'
     '"max_shape":[2,2,1,8]},{"min_shape":[1,2,5,8],"opt_shape":[1,2,7,8],"max_shape":[2,2,9,8]}]},'
     '{"name":"past_key_values.1","dtype":"float32","profiles":[{"min_shape":[1,2,1,8],"opt_shape":[1,2,1,8],'
     '"max_shape":[2,2,1,8]},{"min_shape":[1,2,5,8],"opt_shape":[1,2,7,8],"max_shape":[2,2,9,8]}]},'
     '{"name":"pixel_values","dtype":"float32","profiles":[{"min_shape":[1,3,16,16],"opt_shape":[1,3,16,16],'
     '"max_shape":[2,3,16,16]},{"min_shape":[1,3,16,16],"opt_shape":[1,3,16,16],"max_shape":[1,3,16,16]}]}]\n',
     {"warning: torch-tensorrt: dimension 2 of 'past_key_values.0' has min 0 in profile 0 (sequence_length > 1)",
      "dimension 2 of 'past_key_values.1' has min 0 in profile 0",
      "dimension 0 of 'pixel_values' has min 0 in profile 1 (sequence_length = 1)"}),
    ("decoder: onnx dynamic_axes, inputs and outputs", ["infer", "decoder_kv.jsonl", "--format", "onnx"] + ALL, 0,
     DEC_ONNX, ""),
    ("decoder: report: relations, phases, outputs", ["infer", "decoder_kv.jsonl", "--format", "report",
     "--profiles", "auto"] + ALL, 0,
     # 8 calls give S, P and T; 7 distinct (S, P): (7,0) (1,7) (1,8) (1,9) (5,0) (1,5) (1,6), (1,7) twice.
     {"relations (held in every call, determined by them):\n- total_sequence_length = sequence_length + "
      "past_sequence_length  [attention_mask dim 1]: 8 calls, 7 distinct points; torch.export cannot express it (a "
      "sum of two Dims)\n",
      "- sequence_length > 1 (2 calls)\n", "- sequence_length = 1 (6 calls)\n", "outputs:\nresult.0 ",
      "result.1           float32   1x2x7x8, 1x2x8x8"}, ""),
    ("decoder: report of one profile says what was widened", ["infer", "decoder_kv.jsonl", "--format", "report"] + ALL,
     0, {"- all calls (8 calls)\n", "widened: min of attention_mask dim 1 widened from 5 to 1 so that "
         "total_sequence_length = sequence_length + past_sequence_length holds at the min point\n",
         "widened: max of attention_mask dim 1 widened from 10 to 16"}, ""),
    # The default is call 0 (batch 1, past 0); --avoid-specialization takes call 4 (7 of its 9 varying
    # dims >= 2, as call 5; the first wins) and names the two left at 0.
    ("decoder: args keeps the reference's choice", ["args", "decoder_kv.jsonl"], 0,
     '{"dict":[["input_ids",{"shape":[1,7],"dtype":"int64"}],["attention_mask",{"shape":[1,7],"dtype":"int64"}],'
     '["past_key_values",' + DEC_KV(1, 0) + '],["pixel_values",{"shape":[1,3,16,16],"dtype":"float32"}]]}\n',
     DEC_LEFT_OUT),
    ("decoder: args --avoid-specialization", ["args", "decoder_kv.jsonl", "--avoid-specialization",
                                              "--store-n-calls", "8"], 0,
     '{"dict":[["input_ids",{"shape":[2,5],"dtype":"int64"}],["attention_mask",{"shape":[2,5],"dtype":"int64"}],'
     '["past_key_values",' + DEC_KV(2, 0) + '],["pixel_values",{"shape":[2,3,16,16],"dtype":"float32"}]]}\n',
     "hookscope-shapes: warning: avoid_specialization: no stored call has every dynamic dimension >= 2; call 4 has "
     "the most, but there dimension 2 of 'past_key_values.0' is 0, dimension 2 of 'past_key_values.1' is 0: "
     "torch.export specialises sizes 0 and 1\n"),
    ("decoder: --remove-inputs", ["infer", "decoder_kv.jsonl", "--remove-inputs", "pixel_values,attention_mask"] + ALL,
     0, '{"input_ids":{"0":"DYNAMIC","1":"DYNAMIC"},'
        '"past_key_values":[{"0":"DYNAMIC","2":"DYNAMIC"},{"0":"DYNAMIC","2":"DYNAMIC"}]}\n', ""),

    # --- bad input: exit 2, one message naming the file and the line ---
    ("not JSON", ["infer", "bad_not_json.jsonl"], 2, "",
     "hookscope-shapes: bad_not_json.jsonl:2: not JSON: syntax error at column 38\n"),
    ("wrong value kind", ["infer", "bad_kind.jsonl"], 2, "",
     "hookscope-shapes: bad_kind.jsonl:1: $.args: expected an array of values, found an object\n"),
    ("wrong scalar", ["args", "bad_kwarg_value.jsonl"], 2, "",
     "hookscope-shapes: bad_kwarg_value.jsonl:1: $.kwargs[1][1].int: expected an integer, found a string\n"),
    ("signature that changes", ["infer", "bad_signature_change.jsonl"], 2, "",
     'hookscope-shapes: bad_signature_change.jsonl:3: $.signature: the signature of "f" changed since '
     "bad_signature_change.jsonl:1 (it must stay the same for every record of a function)\n"),
    ("signature that changes from one file to the next", ["infer", "encoder_part1.jsonl", "bad_other_signature.jsonl"],
     2, "",
     'hookscope-shapes: bad_other_signature.jsonl:1: $.signature: the signature of "encode" changed since '
     "encoder_part1.jsonl:1 (it must stay the same for every record of a function)\n"),
    ("negative dimension", ["infer", "bad_negative_dim.jsonl"], 2, "",
     "hookscope-shapes: bad_negative_dim.jsonl:1: $.kwargs[1][1].shape[1]: negative dimension -3\n"),
    ("unknown dtype", ["infer", "bad_dtype.jsonl"], 2, "",
     'hookscope-shapes: bad_dtype.jsonl:1: $.args[0].dtype: unknown dtype "complex64" (expected one of float64 '
     "float32 float16 bfloat16 int64 int32 int16 int8 uint8 bool)\n"),
    # A writer stopped mid-line (a crash, SIGKILL) leaves a cut last line: the calls before it are inferred from.
    ("cut last line", ["infer", "cut_last_line.jsonl"], 0, "[]\n",
     "hookscope-shapes: warning: cut_last_line.jsonl:2: the last line is cut (no newline at the end, and not JSON: "
     "incomplete JSON at column 31); ignored: its writer was probably stopped while writing it\n"),
    # Notes of dropped records are skipped with a warning each: the calls written are inferred from.
    ("notes of dropped records", ["infer", "dropped_note.jsonl"], 0, ENCODER_TORCH, DROPPED_NOTES),
    ("a file's cut last line is left out, the next file is still read", ["infer", "cut_last_line.jsonl", "encoder.jsonl"], 2, "",
     {"hookscope-shapes: warning: cut_last_line.jsonl:2: the last line is cut",
      "hookscope-shapes: the records hold several functions ('f', 'encode')"}),
    # A key given twice: Boost.JSON would keep one silently; a Python dict cannot hold two.
    ("duplicate record key", ["infer", "bad_duplicate_key.jsonl"], 2, "",
     'hookscope-shapes: bad_duplicate_key.jsonl:1: $: duplicate key "function" in the record\n'),
    # The tensor object {"shape":[2],"shape":[3],...} closes at column 65 (its "}" is the 65th character).
    ("duplicate key in a value", ["infer", "bad_duplicate_shape.jsonl"], 2, "",
     'hookscope-shapes: bad_duplicate_shape.jsonl:1: duplicate key "shape" in the object that ends at column 65\n'),
    ("duplicate dict key inside a value", ["infer", "bad_duplicate_dict_key.jsonl"], 2, "",
     'hookscope-shapes: bad_duplicate_dict_key.jsonl:1: $.kwargs[0][1].dict[1][0]: duplicate key "k"\n'),
    ("missing file", ["infer", "encoder.jsonl", "no_such_file.jsonl"], 2, "",
     "hookscope-shapes: no_such_file.jsonl: cannot open: No such file or directory\n"),
    ("several functions without --function", ["infer", "two_functions.jsonl"], 2, "",
     "hookscope-shapes: the records hold several functions ('encode', 'decode'); choose one with --function NAME\n"),
    ("--function that is not there", ["infer", "two_functions.jsonl", "--function", "generate"], 2, "",
     "hookscope-shapes: no record of function 'generate' (the records hold 'encode', 'decode')\n"),

    # --- usage errors: exit 2 with the hint ---
    ("unknown option", ["infer", "llm.jsonl", "--frobnicate"], 2, "",
     "hookscope-shapes: unknown option '--frobnicate'\n" + USAGE_HINT),
    ("no command", ["llm.jsonl"], 2, "",
     "hookscope-shapes: unknown command 'llm.jsonl' (expected infer, args or summarize)\n" + USAGE_HINT),
    ("nothing at all", [], 2, "", "hookscope-shapes: no command (expected infer, args or summarize)\n" + USAGE_HINT),
    ("no file", ["infer"], 2, "",
     "hookscope-shapes: no input file (give FILE.jsonl..., or - for standard input)\n" + USAGE_HINT),
    ("unknown format", ["infer", "llm.jsonl", "--format", "xml"], 2, "",
     "hookscope-shapes: --format: expected torch, trtexec, ort, torch-tensorrt, onnx or report, got 'xml'\n" + USAGE_HINT),
    ("--profiles with a bad value", ["infer", "llm.jsonl", "--profiles", "2"], 2, "",
     "hookscope-shapes: --profiles: expected 1 or auto, got '2'\n" + USAGE_HINT),
    ("--typed with another format", ["infer", "llm.jsonl", "--typed", "--format", "onnx"], 2, "",
     "hookscope-shapes: --typed is for --format torch only\n" + USAGE_HINT),
    ("--avoid-specialization given to infer", ["infer", "llm.jsonl", "--avoid-specialization"], 2, "",
     "hookscope-shapes: --avoid-specialization is for 'args' only\n" + USAGE_HINT),
    ("bad --store-n-calls", ["infer", "llm.jsonl", "--store-n-calls", "many"], 2, "",
     "hookscope-shapes: --store-n-calls: expected a non-negative integer, got 'many'\n" + USAGE_HINT),
    ("--store-n-calls 0", ["infer", "llm.jsonl", "--store-n-calls", "0"], 2, "",
     "hookscope-shapes: --store-n-calls: expected at least 1 (or all)\n" + USAGE_HINT),
    ("option without its value", ["infer", "llm.jsonl", "--function"], 2, "",
     "hookscope-shapes: --function: missing its value\n" + USAGE_HINT),
    ("--batch with --batch-all", ["infer", "llm.jsonl", "--batch", "input_ids", "--batch-all"], 2, "",
     "hookscope-shapes: --batch and --batch-all exclude each other\n" + USAGE_HINT),
    ("bad --value-if-missing JSON", ["infer", "optional.jsonl", "--value-if-missing",
                                     'pixel_values={"shape":[-1],"dtype":"float32"}'], 2, "",
     'hookscope-shapes: --value-if-missing pixel_values={"shape":[-1],"dtype":"float32"}: $.shape[0]: '
     "negative dimension -1\n" + USAGE_HINT),
    ("--value-if-missing without =", ["infer", "optional.jsonl", "--value-if-missing", "pixel_values"], 2, "",
     "hookscope-shapes: --value-if-missing: expected KEY=JSON, got 'pixel_values'\n" + USAGE_HINT),
    ("bad --dim-name", ["infer", "llm.jsonl", "--dim-name", "input_ids=seq"], 2, "",
     "hookscope-shapes: --dim-name: expected KEY:DIM=LABEL, got 'input_ids=seq'\n" + USAGE_HINT),
    ("--dim-name label not an identifier", ["infer", "llm.jsonl", "--dim-name", "input_ids:1=seq len"], 2, "",
     "hookscope-shapes: --dim-name: the label 'seq len' is not an identifier\n" + USAGE_HINT),
    ("--index given to infer", ["infer", "llm.jsonl", "--index", "1"], 2, "",
     "hookscope-shapes: --index is for 'args' only\n" + USAGE_HINT),
    ("--format given to args", ["args", "llm.jsonl", "--format", "torch"], 2, "",
     "hookscope-shapes: --format is for 'infer' only\n" + USAGE_HINT),
    ("--index with --store-n-calls all", ["args", "llm.jsonl", "--index", "1", "--store-n-calls", "all"], 2, "",
     "hookscope-shapes: --index needs stored calls: use --store-n-calls N, not all\n" + USAGE_HINT),

    # --- warnings and errors of the inference ---
    ("a dtype that changes between calls", ["infer", "dtype_change.jsonl"], 0, '{"x":{"0":"DYNAMIC"}}\n',
     "hookscope-shapes: warning: 'x' changed dtype between calls (float32, float16): an exported model takes one "
     "dtype per input\n"),
    ("an input name the trtexec syntax cannot carry", ["infer", "bad_spec_name.jsonl", "--format", "trtexec"], 1, "",
     "hookscope-shapes: the input name 'a b' cannot be written in trtexec's shape spec: it contains a space or a "
     "control character; rename the input (the ONNX model's input names must match anyway)\n"),
    ("... nor the ort one", ["infer", "bad_spec_name.jsonl", "--format", "ort"], 1, "",
     {"'a b'", "ONNX Runtime's shape spec", "a space"}),
    ("... while torch-tensorrt's JSON carries it", ["infer", "bad_spec_name.jsonl", "--format", "torch-tensorrt"], 0,
     '[{"name":"a b","dtype":"float32","min_shape":[2],"opt_shape":[2],"max_shape":[3]}]\n', ""),
    ("... while JSON carries it", ["infer", "bad_spec_name.jsonl", "--format", "onnx"], 0,
     '{"a b":{"0":"a_b_dim_0"}}\n', ""),

    # --- inference errors: exit 1 ---
    ("rank that changes", ["infer", "rank_mismatch.jsonl"], 1, "", {"hookscope-shapes: ", "'x'", "2x3, 2x3x4"}),
    ("--value-if-missing for no parameter", ["infer", "llm.jsonl", "--value-if-missing", 'nope={"int":1}'], 1, "",
     {"hookscope-shapes: llm.jsonl:1: ", "'nope'"}),
    ("no record at all", ["infer", "empty.jsonl"], 1, "", "hookscope-shapes: no call recorded in empty.jsonl\n"),

    # --- input that is not records at all: exit 2 with a sentence ---
    ("a stream without newlines that is not text (/dev/zero): an error once past the line limit",
     ["infer", "/dev/zero"], 2, "",
     "hookscope-shapes: /dev/zero:1: the line holds the byte 0x00 at column 1, which JSON text never holds, and is "
     "longer than 67108864 bytes, the reader's limit: not a record file\n"),
]


def matches(got, want):
    if want is None:
        return True
    if isinstance(want, set):
        return all(part in got for part in want)
    return got == want


def shapes(program, argv, cwd=DATA, timeout=60, **kw):
    """hookscope-shapes ARGV, run in `cwd` (tests/data: messages name the files as given)."""
    return run([program] + argv, cwd=cwd, timeout=timeout, **kw)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_invocation(hookscope_shapes, case):
    name, argv, code, out, err = case[:5]
    stdin_file = case[5] if len(case) > 5 else None
    stdin_text = (DATA / stdin_file).read_text(encoding="utf-8") if stdin_file else ""
    done = shapes(hookscope_shapes, argv, input=stdin_text)
    with Checks() as check:
        check.expect(f"hookscope-shapes {' '.join(argv)}: exit code", done.returncode, code)
        if not matches(done.stdout, out):
            check.require(False, difference("stdout" + (" (holding each of these)" if isinstance(out, set) else ""),
                                            done.stdout, out))
        if not matches(done.stderr, err):
            check.require(False, difference("stderr" + (" (holding each of these)" if isinstance(err, set) else ""),
                                            done.stderr, err))


@pytest.mark.parametrize("argv", [["infer"], ["infer", "--format", "report"], ["infer", "--format", "trtexec"],
                                  ["infer", "--store-n-calls", "all"], ["args"], ["args", "--index", "1"],
                                  ["summarize"]], ids=" ".join)
def test_notes_of_dropped_records_change_no_answer(hookscope_shapes, argv):
    with_notes = shapes(hookscope_shapes, argv + ["dropped_note.jsonl"])
    without = shapes(hookscope_shapes, argv + ["encoder.jsonl"])
    expect(f"{' '.join(argv)}: exit code, stdout and stderr with notes, as without them plus the notes' warnings",
           (with_notes.returncode, with_notes.stdout, with_notes.stderr),
           (without.returncode, without.stdout, DROPPED_NOTES + without.stderr))
    expect(f"{' '.join(argv)}: exit code without notes", without.returncode, 0)


def test_help(hookscope_shapes):
    done = shapes(hookscope_shapes, ["--help"])
    with Checks() as check:
        check.expect("--help: exit code", done.returncode, 0)
        check.require(done.stdout.startswith("usage: hookscope-shapes infer"),
                      f"--help: stdout starts with 'usage: hookscope-shapes infer', got {done.stdout[:80]!r}")
        check.expect("--help: stderr", done.stderr, "")


def test_stdin_a_directory(hookscope_shapes):
    fd = os.open(DATA, os.O_RDONLY)
    try:
        done = shapes(hookscope_shapes, ["infer", "-"], stdin=fd)
    finally:
        os.close(fd)
    expect("stdin a directory: exit code and stderr", (done.returncode, done.stderr),
           (2, "hookscope-shapes: <stdin>: cannot read: it is a directory\n"))


# --- large inputs: linear time ---

def write_large_inputs(tmp, scale):
    """40,000 keyword arguments on one line (two records), and 160,000 distinct names, each divided by `scale`."""
    wide = os.path.join(tmp, f"wide{scale}.jsonl")
    with open(wide, "w", encoding="utf-8") as f:
        for n in (1, 2):
            kwargs = [[f"k{i}", {"shape": [1, n + i % 3], "dtype": "float32"}] for i in range(40000 // scale)]
            f.write(json.dumps({"function": "f", "args": [], "kwargs": kwargs}) + "\n")
    many = os.path.join(tmp, f"many{scale}.jsonl")
    with open(many, "w", encoding="utf-8") as f:
        for i in range(160000 // scale):
            f.write(json.dumps({"function": "f", "args": [], "kwargs": [[f"x{i}", {"shape": [1], "dtype": "float32"}]]})
                    + "\n")
    return {"40k kwargs on one line": (["infer", wide], 0),
            "160k distinct names, streaming": (["infer", many, "--store-n-calls", "all"], 1)}


@pytest.mark.parametrize("name", ["40k kwargs on one line", "160k distinct names, streaming"])
def test_large_input_takes_linear_time(hookscope_shapes, tmp_path, name):
    """Linear time on large inputs: each input and its quarter, timed in the same run, must take at most 8x as long
    as the quarter (linear: ~4x, quadratic: ~16x). A ratio rather than a wall-clock limit, which a sanitized build or a
    slow phase of the machine would miss; a quarter shorter than 0.05 s counts as 0.05 s (start-up noise)."""
    argv, code = write_large_inputs(tmp_path, 1)[name]
    quarter_argv, _ = write_large_inputs(tmp_path, 4)[name]
    problems = []

    def timed(argv, what):
        start = time.monotonic()
        done = shapes(hookscope_shapes, argv, cwd=tmp_path, timeout=300)
        if done.returncode != code:
            problems.append(f"{what}: exit {done.returncode} (expected {code}): {done.stderr.strip()[:200]}")
        return time.monotonic() - start

    for _ in range(2):  # once more if the machine slowed down under one of the two runs
        quarter = max(timed(quarter_argv, name + " (a quarter)"), 0.05)
        seconds = timed(argv, name)
        if seconds <= 8 * quarter:
            break
    print(f"{name}: {seconds:.2f} s, {seconds / quarter:.1f}x a quarter of it")
    if seconds > 8 * quarter:
        problems.append(f"{name}: {seconds:.2f} s, {seconds / quarter:.1f}x a quarter of the input "
                        f"(linear time: ~4x, at most 8x)")
    assert not problems, "\n".join(problems)


# The value kinds of C++ captures (bytes, opaque leaves, variants, text that is not UTF-8) through summarize: the
# summary is strict JSON (Python's json reads it) and infer reads it as it reads the records.
KINDS_LINES = [
    '{"function":"h","signature":[{"name":"x"},{"name":"m","default":{"variant":3,"value":{"bytes":"/w=="}}}],'
    '"args":[{"shape":[2],"dtype":"int64"}],"kwargs":[]}\n',
    '{"function":"h","args":[{"shape":[3],"dtype":"int64"}],'
    '"kwargs":[["m",{"opaque":{"base64":"/w=="},"depth_limited":true}]]}\n',
]


def test_summarize_the_cpp_kinds_and_value_if_missing_reads_back(hookscope_shapes, tmp_path):
    (tmp_path / "h.jsonl").write_text("".join(KINDS_LINES), encoding="utf-8")
    missing = '{"variant":2,"value":{"tuple":[{"str":{"base64":"gA=="}},{"float":-0.0},{"float":5e-324}]}}'
    done = shapes(hookscope_shapes, ["summarize", "h.jsonl", "--value-if-missing", f"m={missing}", "-o", "S.json"],
                  cwd=tmp_path)
    expect("summarize's exit code and stderr", (done.returncode, done.stderr), (0, ""))
    summary = json.loads((tmp_path / "S.json").read_bytes())  # strict UTF-8
    expect("the value_if_missing kept", summary["value_if_missing"], [["m", json.loads(missing)]])
    typed = ["infer", "--typed", "--store-n-calls", "all", "--value-if-missing", f"m={missing}"]
    one_pass = shapes(hookscope_shapes, typed + ["h.jsonl", "h.jsonl"], cwd=tmp_path)
    merged = shapes(hookscope_shapes, ["infer", "--typed", "S.json", "S.json"], cwd=tmp_path)
    expect("infer on two summaries against one pass", (merged.returncode, merged.stdout, merged.stderr),
           (one_pass.returncode, one_pass.stdout, one_pass.stderr))
    expect("infer's exit code", one_pass.returncode, 0)


def test_a_keyword_name_that_is_not_a_json_string_is_refused_by_the_reader(hookscope_shapes, tmp_path):
    # A keyword argument's name is a parameter's name, text: {"base64": ...} (for program-supplied text that is not
    # UTF-8) is not accepted there, so no writer downstream (summary, exporters) meets a name it cannot write.
    lines = "".join('{"function":"f","args":[],"kwargs":[[{"base64":"/w=="},{"shape":[%d,3],"dtype":"float32"}]]}\n'
                    % n for n in (2, 4))
    (tmp_path / "kw.jsonl").write_text(lines, encoding="utf-8")
    for command in (["summarize", "kw.jsonl", "-o", "S.json"], ["infer", "kw.jsonl"], ["args", "kw.jsonl"]):
        done = shapes(hookscope_shapes, command, cwd=tmp_path)
        expect(f"{command[0]}'s exit code and stderr", (done.returncode, done.stderr),
               (2, "hookscope-shapes: kw.jsonl:1: $.kwargs[0][0]: a keyword argument's name is a string (a "
                   "parameter's name is text), found an object\n"))
    assert not (tmp_path / "S.json").exists()


def test_value_if_missing_refuses_a_key_repeated_under_an_escape(hookscope_shapes, tmp_path):
    # "\u0066loat" is "float": the value would silently be one of the two numbers (here 5, not 0.1).
    (tmp_path / "h.jsonl").write_text("".join(KINDS_LINES), encoding="utf-8")
    done = shapes(hookscope_shapes, ["summarize", "h.jsonl", "--value-if-missing",
                                     'm={"float":0.1,"\\u0066loat":5}'], cwd=tmp_path)
    expect("summarize's exit code", done.returncode, 2)


@pytest.mark.parametrize("kwargs", [
    '[[{"base64":"/w=="},{"shape":[%d,3],"dtype":"float32"}]]',
    '[["x",{"dict":[[{"base64":"/w=="},{"shape":[%d,3],"dtype":"float32"}]]}]]',
], ids=["keyword name", "dict key"])
def test_infer_format_onnx_writes_json_or_refuses_a_name_that_is_not_utf8(hookscope_shapes, tmp_path, kwargs):
    # The torch and onnx formats (JSON objects keyed by names) refuse a name that is not UTF-8 with a sentence; the
    # reader refuses a keyword name that is not a JSON string. Never bytes that no strict parser reads.
    lines = "".join('{"function":"f","args":[],"kwargs":%s}\n' % (kwargs % n) for n in (2, 4))
    (tmp_path / "names.jsonl").write_text(lines, encoding="utf-8")
    for fmt in ("onnx", "torch"):
        done = subprocess.run([hookscope_shapes, "infer", "names.jsonl", "--format", fmt], cwd=tmp_path,
                              capture_output=True, timeout=60)
        assert done.returncode in (1, 2), (fmt, done.returncode, done.stdout)
        assert b"is not UTF-8" in done.stderr or b"a keyword argument's name is a string" in done.stderr, done.stderr
        typed = subprocess.run([hookscope_shapes, "infer", "names.jsonl", "--typed"], cwd=tmp_path,
                               capture_output=True, timeout=60)
        if typed.returncode == 0:
            json.loads(typed.stdout)  # strict UTF-8


def test_infer_compares_opaque_constants_by_type_name(hookscope_shapes, tmp_path):
    # docs/record_format.md: "to the shape engine, bytes and opaque leaves are constants like scalars (bytes equal by
    # content, opaque leaves by type name)". A leaf cut at the depth bound (depth_limited) has the same type name;
    # the engine compares the marker too and calls the two calls' constants different.
    head = '{"function":"f","signature":[{"name":"x"},{"name":"m","default":{"opaque":"Node"}}],'
    lines = (head + '"args":[],"kwargs":[["x",{"shape":[2],"dtype":"int64"}],["m",{"opaque":"Node"}]]}\n'
             '{"function":"f","args":[],"kwargs":[["x",{"shape":[3],"dtype":"int64"}],'
             '["m",{"opaque":"Node","depth_limited":true}]]}\n')
    (tmp_path / "o.jsonl").write_text(lines, encoding="utf-8")
    done = shapes(hookscope_shapes, ["infer", "o.jsonl"], cwd=tmp_path)
    expect("infer", (done.returncode, done.stdout, done.stderr), (0, '{"x":{"0":"DYNAMIC"}}\n', ""))
    # Different type names are different constants (this holds).
    (tmp_path / "o2.jsonl").write_text(lines.replace('"Node","depth_limited":true', '"Leaf"'), encoding="utf-8")
    done = shapes(hookscope_shapes, ["infer", "o2.jsonl"], cwd=tmp_path)
    expect("infer's exit code on different type names", done.returncode, 1)


def test_batch_leaves_an_input_only_ever_a_placeholder_static(hookscope_shapes, tmp_path):
    """--batch / --batch-all give no dynamic dim to an input every call left out (only --value-if-missing's
    placeholder, batch 0, was given), with a warning when --batch names it; the same through a summary."""
    sig = '"signature":[{"name":"input_ids"},{"name":"pixel_values","default":null}],'
    (tmp_path / "decode.jsonl").write_text(
        '{"function":"forward",' + sig + '"args":[],"kwargs":[["input_ids",{"shape":[2,1],"dtype":"int64"}]]}\n'
        '{"function":"forward","args":[],"kwargs":[["input_ids",{"shape":[3,1],"dtype":"int64"}]]}\n',
        encoding="utf-8")
    missing = ["--value-if-missing", 'pixel_values={"shape":[0,3,8,8],"dtype":"float32"}']
    want = '{"input_ids":{"0":"DYNAMIC"},"pixel_values":{}}\n'
    warning = ("hookscope-shapes: warning: a batch dimension is asked for 'pixel_values', which every call gave only "
               "as its value_if_missing placeholder: it gets no dynamic batch dimension\n")
    done = shapes(hookscope_shapes, ["infer", "decode.jsonl", "--batch", "pixel_values,input_ids"] + missing,
                  cwd=tmp_path)
    expect("--batch naming it", (done.returncode, done.stdout, done.stderr), (0, want, warning))
    done = shapes(hookscope_shapes, ["infer", "decode.jsonl", "--batch-all"] + missing, cwd=tmp_path)
    expect("--batch-all", (done.returncode, done.stdout, done.stderr), (0, want, ""))
    done = shapes(hookscope_shapes, ["summarize", "decode.jsonl", "-o", "S.json"] + missing, cwd=tmp_path)
    expect("summarize", (done.returncode, done.stderr), (0, ""))
    done = shapes(hookscope_shapes, ["infer", "S.json", "--batch-all"], cwd=tmp_path)
    expect("--batch-all on the summary", (done.returncode, done.stdout, done.stderr), (0, want, ""))
