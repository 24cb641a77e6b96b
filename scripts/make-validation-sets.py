#!/usr/bin/env python3
"""Build the validation suite data/validation/*.csv from the shared measurements.

    python3 scripts/make-validation-sets.py [SHARED_DIR]

SHARED_DIR defaults to ../shared/validation relative to the repository root. It holds
measurements published by others (see its README.md for provenance); this script trims them to
the configurations headroom's catalog can describe, normalizes names and units, and writes

    data/validation/inference.csv      long form, one measurement per row
    data/validation/mlenergy.csv       ML.ENERGY leaderboard v2 (vLLM serving, energy per token)
    data/validation/training.csv       llm-foundry MPT training throughput (bf16)
    data/validation/mig-training.csv   MISO training throughput per A100 MIG slice
    data/validation/serving.csv        runs of today's vLLM: each run's requests and its latency

Every output row names its input as <shared file>:<line> (line 1 is the header). Each exclusion
rule below is a named function with the reason in its docstring; the summary printed at the end
counts the rows kept per data set and metric and the rows dropped per rule. The output is
deterministic: rows are written in input order and numbers with fixed rounding. Standard library
only.
"""

import argparse
import collections
import csv
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SHARED = os.path.join(REPO_ROOT, '..', 'shared', 'validation')
OUT_DIR = os.path.join(REPO_ROOT, 'data', 'validation')

# ---------------------------------------------------------------------------------------------
# Catalog names (data/models, data/hardware). Source names map to these exactly; a source name
# not in a map is a model or GPU the catalog does not describe and its row is dropped.

LMDEPLOY_MODELS = {  # lmdeploy docs already use these names
    'llama2-7b': 'llama2-7b',
    'llama2-13b': 'llama2-13b',
    'internlm-20b': 'internlm-20b',
    'llama2-70b': 'llama2-70b',
}
ARGONNE_MODELS = {
    'meta-llama/Llama-2-7b-hf': 'llama2-7b',
    'meta-llama/Llama-2-70b-hf': 'llama2-70b',
    'meta-llama/Meta-Llama-3-8B': 'llama3-8b',
    'meta-llama/Meta-Llama-3-70B': 'llama3-70b',
    'mistralai/Mistral-7B-v0.1': 'mistral-7b',
    'Qwen/Qwen2-7B': 'qwen2-7b',
    'Qwen/Qwen2-72B': 'qwen2-72b',
}
TRTLLM_MODELS = {
    # "LLaMA 7B/70B" are Llama-2 per the build configs in the same docs (arch_note column).
    'LLaMA 7B': 'llama2-7b',
    'LLaMA 70B': 'llama2-70b',
    # The docs do not give the Mistral revision; v0.8/v0.9 (early 2024) predate every base
    # revision but v0.1, which is the one TensorRT-LLM's examples used. Assumed.
    'Mistral 7B': 'mistral-7b',
}
MLENERGY_MODELS = {  # instruct variants of the catalog architectures
    'google/gemma-2-9b-it': 'gemma2-9b',
    'google/gemma-2-27b-it': 'gemma2-27b',
    'meta-llama/Meta-Llama-3.1-8B-Instruct': 'llama3.1-8b',
    'meta-llama/Meta-Llama-3.1-70B-Instruct': 'llama3.1-70b',
    # Not mapped: mistralai/Mistral-7B-Instruct-v0.3. The catalog's mistral-7b is v0.1 (vocab
    # 32000, 4096 sliding window); v0.3 has vocab 32768 and no sliding window. See
    # mlenergy_model_revision_not_in_catalog.
}
MLENERGY_OTHER_REVISIONS = {'mistralai/Mistral-7B-Instruct-v0.3'}


def lmdeploy_gpu(name):
    # "A100-80G (x8 node; SXM/PCIe not stated)": an 8-GPU A100-80G node is an HGX/DGX (SXM).
    return 'a100-80gb-sxm' if name.startswith('A100-80G') else None


def argonne_gpu(name):
    # The data does not state the A100 variant. Its vLLM A100 scripts are PBS jobs for ALCF
    # Polaris, whose nodes have 4x A100-SXM4-40GB; its TensorRT-LLM/DeepSpeed-MII A100 runs are
    # taken to be on the same machine. H100: JLSE testbed, SXM inferred from up to 595 W GPU
    # power, memory size not stated (the 80 GB SXM part is the only H100 SXM of 2024).
    if name.startswith('A100'):
        return 'a100-40gb-sxm'
    if name.startswith('H100'):
        return 'h100-80gb-sxm'
    return None


def trtllm_gpu(name):
    # The v0.5.0 blog states "A100 FP16, SXM 80GB"; later docs do not restate the A100 variant.
    return 'a100-80gb-sxm' if name.startswith('A100') else None


MLENERGY_GPUS = {
    'NVIDIA A100-SXM4-40GB': 'a100-40gb-sxm',
    'NVIDIA H100 80GB HBM3': 'h100-80gb-sxm',
}
LLMFOUNDRY_GPUS = {
    'h100_80gb': 'h100-80gb-sxm',
    'a100_80gb': 'a100-80gb-sxm',
    'a100_40gb': 'a100-40gb-sxm',
}
ARGONNE_ENGINES = {
    'vLLM': 'vllm',
    'TensorRT-LLM': 'trtllm',
    'Deepspeed-MII': 'deepspeed-mii',
}

# ---------------------------------------------------------------------------------------------
# Hardware floor (a guard against transcription errors and failed runs, not a calibration):
# no run can be faster than reading every weight once per decode step at the GPU's peak memory
# bandwidth, or than doing 2 x parameters FLOPs per prompt token at its peak dense 16-bit tensor
# rate. FLOOR_MARGIN leaves room for what these counts overstate (embedding rows not read, the
# LM head run only on the last prompt token: at most ~14 % of the parameters, Qwen2-7B).

PARAMS_B = {  # total parameters, billions (data/models)
    'llama2-7b': 6.74, 'llama2-13b': 13.02, 'llama2-70b': 68.98, 'llama3-8b': 8.03,
    'llama3-70b': 70.55, 'llama3.1-8b': 8.03, 'llama3.1-70b': 70.55, 'mistral-7b': 7.24,
    'qwen2-7b': 7.62, 'qwen2-72b': 72.71, 'gemma2-9b': 9.24, 'gemma2-27b': 27.23,
    'internlm-20b': 20.0,
}
HBM_TB_S = {  # peak memory bandwidth, TB/s (NVIDIA datasheets; data/hardware)
    'a100-40gb-sxm': 1.555, 'a100-80gb-sxm': 2.039, 'h100-80gb-sxm': 3.35, 'h200-141gb-sxm': 4.8,
}
DENSE16_TFLOPS = {  # peak dense fp16/bf16 tensor TFLOP/s
    'a100-40gb-sxm': 312.0, 'a100-80gb-sxm': 312.0, 'h100-80gb-sxm': 989.0, 'h200-141gb-sxm': 989.0,
}
FLOOR_MARGIN = 0.8


def decode_step_floor_s(model, gpu, tp):
    return FLOOR_MARGIN * 2.0 * PARAMS_B[model] * 1e9 / (tp * HBM_TB_S[gpu] * 1e12)


def prefill_floor_s(model, gpu, tp, tokens):
    return FLOOR_MARGIN * 2.0 * PARAMS_B[model] * 1e9 * tokens / (tp * DENSE16_TFLOPS[gpu] * 1e12)


def below_hardware_floor(model, gpu, tp, batch, input_tokens, output_tokens, metric, value):
    """Faster than the GPU can physically run it (see the hardware floor above): a broken row."""
    if metric == 'decode_ms':
        return value / 1e3 < decode_step_floor_s(model, gpu, tp)
    if metric == 'prefill_ms':
        return value / 1e3 < prefill_floor_s(model, gpu, tp, batch * input_tokens)
    if metric == 'e2e_s':
        return value < output_tokens * decode_step_floor_s(model, gpu, tp)
    return False


# ---------------------------------------------------------------------------------------------
# Bookkeeping

class Summary:
    def __init__(self):
        self.read = collections.OrderedDict()      # source file -> rows read
        self.kept = collections.Counter()          # (out file, dataset, metric) -> rows
        self.dropped = collections.Counter()       # (out file, source file, metric, reason) -> rows
        self.dropped_models = collections.Counter()  # (source file, source model) -> rows
        self.warnings = []                         # kept rows worth a look

    def keep(self, out, dataset, metric):
        self.kept[(out, dataset, metric)] += 1

    def drop(self, out, src, metric, reason):
        self.dropped[(out, src, metric, reason)] += 1

    def warn(self, text):
        self.warnings.append(text)


S = Summary()


def read_rows(shared, name):
    """(first line number, row dict) for every record of a shared CSV; line 1 is the header."""
    path = os.path.join(shared, name)
    with open(path, newline='', encoding='utf-8') as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = []
        start = reader.line_num + 1
        for rec in reader:
            if len(rec) != len(header):
                sys.exit('%s:%d: %d fields, header has %d' % (name, start, len(rec), len(header)))
            rows.append((start, dict(zip(header, rec))))
            start = reader.line_num + 1
    S.read[name] = len(rows)
    return rows


def num(x, decimals):
    """x rounded to `decimals`, trailing zeros removed (10.0 -> 10, 0.4216 -> 0.4216)."""
    s = '%.*f' % (decimals, x)
    if '.' in s:
        s = s.rstrip('0').rstrip('.')
    return '0' if s in ('-0', '') else s


def write_csv(name, header, rows):
    path = os.path.join(OUT_DIR, name)
    with open(path, 'w', newline='', encoding='utf-8') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(header)
        for r in rows:
            w.writerow([r[h] for h in header])
    return path


# ---------------------------------------------------------------------------------------------
# inference.csv

INFERENCE_HEADER = ['dataset', 'engine', 'model', 'gpu', 'tp', 'batch', 'input_tokens',
                    'output_tokens', 'metric', 'value', 'idle_tail_s', 'source']
INF = 'inference.csv'


def inference_row(dataset, engine, model, gpu, tp, batch, inp, out, metric, value, decimals,
                  src, line, idle_tail_s=0):
    return {
        'dataset': dataset, 'engine': engine, 'model': model, 'gpu': gpu, 'tp': int(tp),
        'batch': int(batch), 'input_tokens': int(inp), 'output_tokens': int(out),
        'metric': metric, 'value': num(value, decimals), 'idle_tail_s': num(idle_tail_s, 3),
        'source': '%s:%d' % (src, line),
    }


def emit(rows, src, row):
    """Append `row` unless it is below the hardware floor; count it either way."""
    if below_hardware_floor(row['model'], row['gpu'], row['tp'], row['batch'],
                            row['input_tokens'], row['output_tokens'], row['metric'],
                            float(row['value'])):
        S.drop(INF, src, row['metric'], 'below_hardware_floor')
        return
    rows.append(row)
    S.keep(INF, row['dataset'], row['metric'])


def model_not_in_catalog(src, source_model, mapping, out, metric):
    """The catalog does not describe this model: nothing to predict it with."""
    if source_model in mapping:
        return False
    S.drop(out, src, metric, 'model_not_in_catalog')
    S.dropped_models[(src, source_model)] += 1
    return True


# lmdeploy ------------------------------------------------------------------------------------

LMDEPLOY = 'lmdeploy_a100_fp16_static.csv'


def lmdeploy_decode_too_short(r):
    """Fewer than 128 generated tokens: too few per-token samples for a stable P50."""
    return int(r['output_tokens']) < 128


def lmdeploy_ftl_includes_queueing(r):
    """Batch > 1: the first-token latency of a request includes waiting behind the others'
    prefills (profile_generation.py starts `batch` concurrent threads), so even its minimum is
    not the prefill of batch x input tokens."""
    return int(r['batch']) > 1


def lmdeploy_prompt_too_short(r):
    """Input < 128 tokens (the 1-token prompts): the FTL is dominated by fixed per-request
    overhead at the source's 10 ms resolution, not by prefill."""
    return int(r['input_tokens']) < 128


def lmdeploy_kv_capped(r):
    """Warn (kept): the last request's first token came more than twice the time of running
    every prefill back to back, i.e. requests waited for others to finish (KV cache full)."""
    return float(r['first_token_latency_max_ms']) > 2 * int(r['batch']) * float(
        r['first_token_latency_min_ms'])


def build_lmdeploy(shared, rows):
    for line, r in read_rows(shared, LMDEPLOY):
        gpu = lmdeploy_gpu(r['gpu'])
        for metric in ('decode_ms', 'prefill_ms'):
            if model_not_in_catalog(LMDEPLOY, r['model'], LMDEPLOY_MODELS, INF, metric):
                continue
            if gpu is None:
                S.drop(INF, LMDEPLOY, metric, 'gpu_not_in_catalog')
                continue
            model = LMDEPLOY_MODELS[r['model']]
            if metric == 'decode_ms':
                if lmdeploy_decode_too_short(r):
                    S.drop(INF, LMDEPLOY, metric, 'lmdeploy_decode_too_short')
                    continue
                value = float(r['per_token_latency_p50_ms'])
            else:
                if lmdeploy_ftl_includes_queueing(r):
                    S.drop(INF, LMDEPLOY, metric, 'lmdeploy_ftl_includes_queueing')
                    continue
                if lmdeploy_prompt_too_short(r):
                    S.drop(INF, LMDEPLOY, metric, 'lmdeploy_prompt_too_short')
                    continue
                value = float(r['first_token_latency_min_ms'])
            emit(rows, LMDEPLOY, inference_row(
                'lmdeploy-a100', 'lmdeploy', model, gpu, r['tp'], r['batch'], r['input_tokens'],
                r['output_tokens'], metric, value, 3, LMDEPLOY, line))
        if lmdeploy_kv_capped(r):
            S.warn('%s:%d %s batch %s %s/%s: FTL max %s ms > 2 x batch x FTL min %s ms '
                   '(requests queued for KV cache; decode P50 is at a smaller real batch)'
                   % (LMDEPLOY, line, r['model'], r['batch'], r['input_tokens'],
                      r['output_tokens'], r['first_token_latency_max_ms'],
                      r['first_token_latency_min_ms']))


# Argonne LLM-Inference-Bench -------------------------------------------------------------------

ARGONNE_LAT = 'argonne_llm_inference_bench_latency.csv'
ARGONNE_TTFT = 'argonne_llm_inference_bench_ttft.csv'
ARGONNE_POWER = 'argonne_llm_inference_bench_power.csv'
ARGONNE_IDLE_TAIL_S = 1.0  # vLLM/*/benchmark_power.py samples 1 s of idle after generate()


def argonne_config(r):
    return (r['framework'], r['model'], r['gpu'], r['tp'], r['batch'])


def argonne_faster_than_shorter_run(r, by_config):
    """Input = output = L in these runs, so a larger L is strictly more work: a run faster than
    any run of the same engine, model, GPU, TP and batch at a smaller L is broken (TensorRT-LLM
    Qwen2-7B H100 at L=2048 and Qwen2-72B H100 batch 1 at L=1024 finish 10-100x too fast)."""
    L = int(r['input_tokens'])
    lat = float(r['latency_s_end_to_end'])
    return any(L2 < L and lat2 > lat for L2, lat2 in by_config[argonne_config(r)])


def build_argonne_latency(shared, rows):
    data = read_rows(shared, ARGONNE_LAT)
    by_config = collections.defaultdict(list)
    for _, r in data:
        by_config[argonne_config(r)].append((int(r['input_tokens']),
                                             float(r['latency_s_end_to_end'])))
    repeats = collections.defaultdict(list)
    kept = []
    for line, r in data:
        m = 'e2e_s'
        target = argonne_target(ARGONNE_LAT, r, m)
        if target is None:
            continue
        gpu, engine = target
        if argonne_faster_than_shorter_run(r, by_config):
            S.drop(INF, ARGONNE_LAT, m, 'argonne_faster_than_shorter_run')
            continue
        n = len(rows)
        # Repeat runs of one configuration are kept as separate rows (the spread is a noise
        # estimate).
        emit(rows, ARGONNE_LAT, inference_row(
            'argonne-latency', engine, ARGONNE_MODELS[r['model']], gpu, r['tp'], r['batch'],
            r['input_tokens'], r['output_tokens'], m, float(r['latency_s_end_to_end']), 4,
            ARGONNE_LAT, line))
        if len(rows) > n:
            repeats[argonne_config(r) + (r['input_tokens'],)].append(line)
            kept.append((line, r))
    for key, lines in repeats.items():
        if len(lines) > 1:
            S.warn('%s: repeated configuration %s %s %s tp%s batch %s L=%s at lines %s'
                   % (ARGONNE_LAT, key[0], key[1], key[2].split(' ')[0], key[3], key[4], key[5],
                      ','.join(str(x) for x in lines)))
    warn_argonne_waves(kept)


def argonne_target(name, r, metric):
    """(catalog GPU, engine) of an Argonne row, or None (counted as dropped) when its model, GPU
    or framework is not one headroom knows."""
    if model_not_in_catalog(name, r['model'], ARGONNE_MODELS, INF, metric):
        return None
    gpu = argonne_gpu(r['gpu'])
    engine = ARGONNE_ENGINES.get(r['framework'])
    if gpu is None or engine is None:
        S.drop(INF, name, metric, 'gpu_or_engine_not_in_catalog')
        return None
    return gpu, engine


def warn_argonne_waves(kept):
    """Warn (kept): latency grew at least 0.9x as fast as the batch from the next smaller batch,
    i.e. the engine ran the batch in waves (KV cache full) rather than as one static batch."""
    best = {}
    for line, r in kept:
        key = argonne_config(r)[:4] + (r['input_tokens'],)
        b = int(r['batch'])
        lat = float(r['latency_s_end_to_end'])
        if (key, b) not in best or lat < best[(key, b)][0]:
            best[(key, b)] = (lat, line)
    batches = collections.defaultdict(list)
    for key, b in best:
        batches[key].append(b)
    for key in sorted(batches, key=lambda k: min(best[(k, b)][1] for b in batches[k])):
        bs = sorted(batches[key])
        for b1, b2 in zip(bs, bs[1:]):
            (l1, _), (l2, line2) = best[(key, b1)], best[(key, b2)]
            if b1 > 1 and l2 / l1 >= 0.9 * b2 / b1:
                S.warn('%s:%d %s %s %s tp%s L=%s: batch %d->%d latency x%.2f (waves: real '
                       'batch smaller than stated)' % (ARGONNE_LAT, line2, key[0], key[1],
                                                       key[2].split(' ')[0], key[3], key[4],
                                                       b1, b2, l2 / l1))


def build_argonne_ttft(shared, rows):
    for line, r in read_rows(shared, ARGONNE_TTFT):
        m = 'prefill_ms'
        target = argonne_target(ARGONNE_TTFT, r, m)
        if target is None:
            continue
        gpu, engine = target
        # TTFT = latency of a run with output length 1 for the whole batch.
        emit(rows, ARGONNE_TTFT, inference_row(
            'argonne-ttft', engine, ARGONNE_MODELS[r['model']], gpu, r['tp'], r['batch'],
            r['input_tokens'], r['output_tokens_for_ttft_run'], m,
            float(r['ttft_s_batch']) * 1000.0, 2, ARGONNE_TTFT, line))


def argonne_power_not_one_gpu(r):
    """Only vLLM's power is known to be one GPU's: TensorRT-LLM's probe (gpu_id=-1) may sum
    every GPU NVML sees on the node, and DeepSpeed-MII's collection method is not in the repo."""
    return r['framework'] != 'vLLM'


def build_argonne_power(shared, rows):
    for line, r in read_rows(shared, ARGONNE_POWER):
        m = 'gpu_power_w'
        if model_not_in_catalog(ARGONNE_POWER, r['model'], ARGONNE_MODELS, INF, m):
            continue
        if argonne_power_not_one_gpu(r):
            S.drop(INF, ARGONNE_POWER, m, 'argonne_power_not_one_gpu (%s)' % r['framework'])
            continue
        gpu = argonne_gpu(r['gpu'])
        if gpu is None:
            S.drop(INF, ARGONNE_POWER, m, 'gpu_or_engine_not_in_catalog')
            continue
        emit(rows, ARGONNE_POWER, inference_row(
            'argonne-power', 'vllm', ARGONNE_MODELS[r['model']], gpu, r['tp'], r['batch'],
            r['input_tokens'], r['output_tokens'], m, float(r['avg_power_W_gpu0']), 2,
            ARGONNE_POWER, line, idle_tail_s=ARGONNE_IDLE_TAIL_S))


# TensorRT-LLM performance docs ---------------------------------------------------------------

TRTLLM = 'trtllm_perf_docs.csv'


def trtllm_not_fp16(r):
    """fp8 rows (all H100/H200 rows): the catalog models 2-byte weights and KV cache."""
    return r['precision'] != 'fp16'


def trtllm_not_a100(r):
    """Only the A100 rows are fp16 (kept for symmetry with trtllm_not_fp16)."""
    return trtllm_gpu(r['gpu']) is None


def trtllm_ambiguous_unit(r):
    """Throughput whose unit is not clearly total or per-GPU out tok/s (v0.6.1's A100 header
    reads 'out tok/s' at one commit and 'out tok/s/GPU' at another)."""
    return r['unit'] not in ('out tok/s', 'out tok/s/GPU')


def trtllm_combined_row(r):
    """The blog's 'throughput_and_first_token_latency' rows: max-throughput points at an
    unstated output length, or an FTL at batch 64 that includes 64 prefills (GPT-J only)."""
    return r['metric'] not in ('first_token_latency', 'throughput')


def build_trtllm(shared, rows):
    for line, r in read_rows(shared, TRTLLM):
        m = {'first_token_latency': 'prefill_ms', 'throughput': 'e2e_s'}.get(r['metric'], 'e2e_s')
        if trtllm_not_fp16(r):
            S.drop(INF, TRTLLM, m, 'trtllm_not_fp16')
            continue
        if trtllm_not_a100(r):
            S.drop(INF, TRTLLM, m, 'trtllm_not_a100')
            continue
        if model_not_in_catalog(TRTLLM, r['model'], TRTLLM_MODELS, INF, m):
            continue
        if trtllm_combined_row(r):
            S.drop(INF, TRTLLM, m, 'trtllm_combined_row')
            continue
        model, gpu = TRTLLM_MODELS[r['model']], trtllm_gpu(r['gpu'])
        batch, out = int(r['batch']), int(r['output_tokens'])
        if m == 'prefill_ms':
            # Batch-1 time to first token = prefill of input_tokens.
            assert batch == 1 and r['unit'] == 'ms', (TRTLLM, line)
            emit(rows, TRTLLM, inference_row(
                'trtllm-docs-a100', 'trtllm', model, gpu, r['tp'], batch, r['input_tokens'],
                out, m, float(r['value']), 2, TRTLLM, line))
            continue
        if trtllm_ambiguous_unit(r):
            S.drop(INF, TRTLLM, m, 'trtllm_ambiguous_unit')
            continue
        # throughput = batch x output_len / end-to-end latency (incl. the context phase).
        total = float(r['value'])
        if r['unit'] == 'out tok/s/GPU':
            total *= int(r['gpu_count'])
        emit(rows, TRTLLM, inference_row(
            'trtllm-docs-a100', 'trtllm', model, gpu, r['tp'], batch, r['input_tokens'], out, m,
            batch * out / total, 4, TRTLLM, line))


# ---------------------------------------------------------------------------------------------
# mlenergy.csv

MLENERGY = 'mlenergy_v2_a100_h100.csv'
MLE = 'mlenergy.csv'
MLENERGY_HEADER = ['dataset', 'engine', 'model', 'gpu', 'tp', 'batch', 'avg_output_tokens',
                   'avg_tpot_ms', 'j_per_output_token', 'power_limit_w', 'task', 'source']


def mlenergy_model_revision_not_in_catalog(r):
    """A revision of a catalog family whose architecture differs from the catalog entry
    (Mistral-7B-Instruct-v0.3 vs the catalog's Mistral-7B-v0.1)."""
    return r['model'] in MLENERGY_OTHER_REVISIONS


def mlenergy_pipeline_parallel(r):
    """pp > 1 (16-GPU runs): the columns carry TP only, and the energy is over tp x pp GPUs."""
    return int(r['pp']) != 1


def build_mlenergy(shared):
    out = []
    m = 'j_per_output_token'
    for line, r in read_rows(shared, MLENERGY):
        if mlenergy_model_revision_not_in_catalog(r):
            S.drop(MLE, MLENERGY, m, 'mlenergy_model_revision_not_in_catalog')
            S.dropped_models[(MLENERGY, r['model'])] += 1
            continue
        if model_not_in_catalog(MLENERGY, r['model'], MLENERGY_MODELS, MLE, m):
            continue
        gpu = MLENERGY_GPUS.get(r['gpu'])
        if gpu is None:
            S.drop(MLE, MLENERGY, m, 'gpu_not_in_catalog')
            continue
        if mlenergy_pipeline_parallel(r):
            S.drop(MLE, MLENERGY, m, 'mlenergy_pipeline_parallel')
            continue
        model = MLENERGY_MODELS[r['model']]
        tokens = float(r['avg_output_tokens'])
        tpot = float(r['avg_tpot_ms'])
        if below_hardware_floor(model, gpu, int(r['tp']), 1, 0, 1, 'decode_ms', tpot):
            S.drop(MLE, MLENERGY, m, 'below_hardware_floor')
            continue
        out.append({
            'dataset': 'mlenergy-v2', 'engine': 'vllm', 'model': model, 'gpu': gpu,
            'tp': int(r['tp']), 'batch': '%.2f' % float(r['avg_batch_size']),
            'avg_output_tokens': num(tokens, 2), 'avg_tpot_ms': num(tpot, 3),
            'j_per_output_token': num(float(r['energy_per_request_J_all_gpus']) / tokens, 5),
            'power_limit_w': int(r['power_limit_W']), 'task': r['task'],
            'source': '%s:%d' % (MLENERGY, line),
        })
        S.keep(MLE, 'mlenergy-v2', m)
    return out


# ---------------------------------------------------------------------------------------------
# training.csv

LLMFOUNDRY = 'llmfoundry_mpt_training_throughput.csv'
TRN = 'training.csv'
TRAINING_HEADER = ['dataset', 'model', 'layers', 'hidden', 'heads', 'kv_heads',
                   'ffn_expansion_ratio', 'vocab', 'seq_len', 'gpu', 'gpu_count', 'micro_batch',
                   'global_batch_tokens', 'activation_checkpointing', 'tokens_per_s_per_gpu',
                   'mfu_pct', 'source']


def llmfoundry_not_bf16(r):
    """fp8 (amp_fp8, H100 only): the catalog's training model assumes 16-bit matmuls."""
    return r['precision'] not in ('amp_bf16', 'bf16')


def build_training(shared):
    out = []
    m = 'tokens_per_s_per_gpu'
    for line, r in read_rows(shared, LLMFOUNDRY):
        if llmfoundry_not_bf16(r):
            S.drop(TRN, LLMFOUNDRY, m, 'llmfoundry_not_bf16')
            continue
        gpu = LLMFOUNDRY_GPUS.get(r['gpu'])
        if gpu is None:
            S.drop(TRN, LLMFOUNDRY, m, 'gpu_not_in_catalog')
            continue
        ac = r['activation_checkpointing']
        assert ac in ('True', 'False'), (LLMFOUNDRY, line)
        # Every MPT size is kept: the architecture travels in the row, not in the catalog.
        out.append({
            'dataset': 'llmfoundry-mpt', 'model': r['model'], 'layers': int(r['n_layers']),
            'hidden': int(r['d_model']), 'heads': int(r['n_heads']),
            'kv_heads': int(r['kv_heads']), 'ffn_expansion_ratio': num(float(
                r['ffn_expansion_ratio']), 3), 'vocab': int(r['vocab_size']),
            'seq_len': int(r['seq_len']), 'gpu': gpu, 'gpu_count': int(r['gpu_count']),
            'micro_batch': int(r['micro_batch']),
            'global_batch_tokens': int(r['global_batch_tokens']),
            'activation_checkpointing': ac.lower(),
            'tokens_per_s_per_gpu': num(float(r['throughput_tok_per_s_per_gpu']), 2),
            'mfu_pct': num(float(r['mfu_pct']), 2), 'source': '%s:%d' % (LLMFOUNDRY, line),
        })
        S.keep(TRN, 'llmfoundry-mpt', m)
    return out


# ---------------------------------------------------------------------------------------------
# mig-training.csv

MISO = 'miso_mig_training_steptime.csv'
MIG = 'mig-training.csv'
MIG_HEADER = ['dataset', 'model', 'batch', 'slice', 'samples_per_s_median', 'source']
MIG_SLICES = ('1g', '2g', '3g', '4g', '7g')


def miso_no_full_gpu_reference(r, have_7g):
    """No 7g (whole-GPU) run of the same model and batch: no reference for relative scaling."""
    return (r['model'], r['batch']) not in have_7g


def build_mig(shared):
    data = read_rows(shared, MISO)
    have_7g = {(r['model'], r['batch']) for _, r in data if r['mig_profile'].startswith('7g.')}
    out = []
    m = 'samples_per_s_median'
    for line, r in data:
        # Slice = the compute part of the MIG profile name ("3g.20gb" -> "3g").
        sl = r['mig_profile'].split('.')[0]
        if sl not in MIG_SLICES:
            S.drop(MIG, MISO, m, 'unknown_mig_profile')
            continue
        if miso_no_full_gpu_reference(r, have_7g):
            S.drop(MIG, MISO, m, 'miso_no_full_gpu_reference')
            continue
        out.append({
            'dataset': 'miso-mig', 'model': r['model'], 'batch': int(r['batch']), 'slice': sl,
            'samples_per_s_median': num(float(r['samples_per_s_median']), 2),
            'source': '%s:%d' % (MISO, line),
        })
        S.keep(MIG, 'miso-mig', m)
    return out


# ---------------------------------------------------------------------------------------------
# serving.csv: runs of a serving engine, each with its workload (the prompt and output tokens of
# every request, all sent at once) and what was measured end to end.

SRV = 'serving.csv'
SERVING_HEADER = ['dataset', 'engine', 'model', 'gpu', 'tp', 'server', 'input_lens',
                  'output_lens', 'metric', 'value', 'source']
# The engine name the calibration fitted on these runs carries (data/fits/vllm-server.yaml).
SERVING_ENGINE = 'vllm-server'
BUILDKITE = 'vllm_ci_latency_buildkite.csv'
LAMBDA = 'lambdalabs_vllm_sharegpt10.csv'
BUILDKITE_MODELS = {
    'meta-llama/Llama-3.1-8B (llama-3.1 8B per page text)': 'llama3.1-8b',
    'meta-llama/Meta-Llama-3-70B-Instruct': 'llama3-70b',
}
BUILDKITE_GPUS = {'A100-SXM4-80GB': 'a100-80gb-sxm', '8xH100': 'h100-80gb-sxm',
                  'H200': 'h200-141gb-sxm'}
LAMBDA_MODELS = {
    'meta-llama/Meta-Llama-3-8B-Instruct': 'llama3-8b',
    'meta-llama/Meta-Llama-3-70B-Instruct': 'llama3-70b',
}
LAMBDA_GPUS = {'A100-80GB-SXM': 'a100-80gb-sxm', 'H100-80GB-SXM': 'h100-80gb-sxm'}


def serving_row(dataset, model, gpu, tp, server, inputs, outputs, metric, value, src, line):
    return {
        'dataset': dataset, 'engine': SERVING_ENGINE, 'model': model, 'gpu': gpu, 'tp': int(tp),
        'server': 'yes' if server else 'no', 'input_lens': ' '.join(str(i) for i in inputs),
        'output_lens': ' '.join(str(o) for o in outputs), 'metric': metric,
        'value': num(value, 3), 'source': '%s:%d' % (src, line),
    }


def buildkite_loose(r):
    """A serving test whose ShareGPT prompts, outputs and concurrency the page does not give:
    no workload to replay."""
    return r['comparable'] != 'yes'


def build_buildkite(shared, rows):
    """benchmark_latency.py: one offline batch of `batch` prompts, no server; end to end."""
    m = 'e2e_ms'
    for line, r in read_rows(shared, BUILDKITE):
        if buildkite_loose(r):
            S.drop(SRV, BUILDKITE, m, 'buildkite_loose')
            continue
        if model_not_in_catalog(BUILDKITE, r['model'], BUILDKITE_MODELS, SRV, m):
            continue
        batch = int(r['batch'])
        rows.append(serving_row('vllm-ci', BUILDKITE_MODELS[r['model']],
                                BUILDKITE_GPUS[r['gpu_label']], r['tp'], False,
                                [int(r['input_tokens'])] * batch,
                                [int(r['output_tokens'])] * batch, m, float(r['value_ms']),
                                BUILDKITE, line))
        S.keep(SRV, 'vllm-ci', m)


def lambda_output_tokens(output_len):
    """benchmark_serving.py counts the tokens of the returned text: a request answered by an
    end-of-sequence token at once returns empty text, 0 tokens. It was prefilled and produced
    that one token, so it counts as 1 (prefill only). Read so because the same prompts got very
    short answers from the other models of the set (Llama-3-8B: 9 and 3 tokens where
    Llama-3-70B returned 0), not as failed requests; first read as failures, they left the 70B
    runs' prefill 53% short (a 40% TTFT miss on every 70B run)."""
    return max(1, output_len)


def lambda_other_mistral_revision(r):
    """Mistral-7B-Instruct-v0.3 (vocab 32768, no sliding window) is not the catalog's
    mistral-7b (v0.1), as for ML.ENERGY."""
    return r['model'] in MLENERGY_OTHER_REVISIONS


def build_lambda(shared, rows):
    """benchmark_serving.py against the OpenAI server: median TTFT and the decode span."""
    for line, r in read_rows(shared, LAMBDA):
        metrics = (('ttft_ms', 'median_ttft_ms'), ('decode_span_ms', 'decode_span_ms'))
        if lambda_other_mistral_revision(r):
            for m, _ in metrics:
                S.drop(SRV, LAMBDA, m, 'lambda_other_mistral_revision')
                S.dropped_models[(LAMBDA, r['model'])] += 1
            continue
        if model_not_in_catalog(LAMBDA, r['model'], LAMBDA_MODELS, SRV, 'ttft_ms'):
            continue
        ins = [int(x) for x in r['input_lens'].strip('[]').split(',')]
        outs = [int(x) for x in r['output_lens'].strip('[]').split(',')]
        empty = sum(1 for o in outs if o == 0)
        if empty:
            S.warn('%s:%d: %d of %d requests returned no text: counted as 1 token '
                   '(lambda_output_tokens)' % (LAMBDA, line, empty, len(outs)))
        for m, column in metrics:
            rows.append(serving_row('lambda-sharegpt10', LAMBDA_MODELS[r['model']],
                                    LAMBDA_GPUS[r['gpu']], r['tp'], True, ins,
                                    [lambda_output_tokens(o) for o in outs], m,
                                    float(r[column]), LAMBDA, line))
            S.keep(SRV, 'lambda-sharegpt10', m)


# ---------------------------------------------------------------------------------------------

def print_summary():
    print('## Rows read\n')
    print('| source file | rows |\n|---|---|')
    for name, n in S.read.items():
        print('| %s | %d |' % (name, n))
    print('\n## Rows kept\n')
    print('| file | dataset | metric | rows |\n|---|---|---|---|')
    totals = collections.Counter()
    for (out, ds, m), n in S.kept.items():
        print('| %s | %s | %s | %d |' % (out, ds, m, n))
        totals[out] += n
    for out, n in totals.items():
        print('| %s | **total** | | %d |' % (out, n))
    print('\n## Rows dropped\n')
    print('| file | source file | metric | rule | rows |\n|---|---|---|---|---|')
    for (out, src, m, reason), n in S.dropped.items():
        print('| %s | %s | %s | %s | %d |' % (out, src, m, reason, n))
    print('\n## Dropped rows by source model (model_not_in_catalog, mlenergy_model_revision_not_in_catalog)\n')
    print('| source file | model | rows |\n|---|---|---|')
    for (src, model), n in sorted(S.dropped_models.items()):
        print('| %s | %s | %d |' % (src, model, n))
    print('\n## Warnings (rows kept)\n')
    for w in S.warnings:
        print('- ' + w)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('shared', nargs='?', default=DEFAULT_SHARED,
                   help='directory of the shared validation CSVs (default ../shared/validation)')
    args = p.parse_args(argv)
    shared = os.path.normpath(args.shared)
    if not os.path.isdir(shared):
        sys.exit('no such directory: %s (pass the shared validation directory)' % shared)
    os.makedirs(OUT_DIR, exist_ok=True)

    inference = []
    build_lmdeploy(shared, inference)
    build_argonne_latency(shared, inference)
    build_argonne_ttft(shared, inference)
    build_argonne_power(shared, inference)
    build_trtllm(shared, inference)
    outputs = [
        write_csv(INF, INFERENCE_HEADER, inference),
        write_csv(MLE, MLENERGY_HEADER, build_mlenergy(shared)),
        write_csv(TRN, TRAINING_HEADER, build_training(shared)),
        write_csv(MIG, MIG_HEADER, build_mig(shared)),
    ]
    serving = []
    build_buildkite(shared, serving)
    build_lambda(shared, serving)
    outputs.append(write_csv(SRV, SERVING_HEADER, serving))
    print_summary()
    print('\nWrote ' + ', '.join(os.path.relpath(o, REPO_ROOT) for o in outputs))


if __name__ == '__main__':
    main(sys.argv[1:])
