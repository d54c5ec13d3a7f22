import json, datetime, sys
d=json.load(open("gen.json"))
ROUND_DATE={"3.0":"2023-06","3.1":"2023-11","4.0":"2024-06","4.1":"2024-11","5.0":"2025-06","5.1":"2025-11"}
KEY={"3.0":"train_step_timing","3.1":"train_step_timing","4.0":"train_step_timing in s","4.1":"train_step_timing in s","5.0":"train_step_time","5.1":"train_step_time"}
def q(s): return '"'+s.replace('\\','\\\\').replace('"','\\"')+'"'
out=[]
heads={}
for r in d["rows"]: heads[r["v"]]=r["commit"]
H=[]
H.append("# Published TRAINING step times from MLCommons MLPerf Training results (closed division), v3.0 to v5.1:")
H.append("# GPT-3 175B (benchmark gpt3, seq 2048), Llama 3.1 405B (llama31_405b, seq 8192) and Llama 3.1 8B")
H.append("# (llama31_8b, seq 8192) on H100, H200, B200, B300, GB200 and GB300 systems in 14 submitter folders, 8 to 10,752 GPUs.")
H.append("# Added under the first-look protocol (issue 48): every row is first_look: true and fit: false; no row was")
H.append("# chosen, dropped or annotated by its error (nobody looked at capsim's prediction for any row before it was")
H.append("# committed); every result with a logged step time and a readable layout is here, the rest are listed below.")
H.append("#")
H.append("# Sources (each round's results repository, read at the commit of its mirrored HEAD; as_of = the month the")
H.append("# round's results were published):")
for v in sorted(heads):
    H.append(f"#  [v{v}] https://github.com/mlcommons/training_results_v{v} at commit {heads[v]} (published {ROUND_DATE[v]})")
H.append("# Each row's source names its results folder (<org>/results/<system>/<benchmark>/result_*.txt) and its `where`")
H.append("# names the config script the row's layout was read from; the row's note quotes the lines.")
H.append("#")
H.append("# The metric. MLPerf reports time-to-train; the result logs also hold, per logged step, the MLLOG key")
H.append("# tracked_stats {train_step_time} (v5.x) or {train_step_timing} / {\"train_step_timing in s\"} (v3.x, v4.x).")
H.append("# What it is: NVIDIA's NeMo implementations log the Lightning timer of one training batch, and one batch is one")
H.append("# optimizer step over the global batch (gradient accumulation inside): v5.1's custom_callbacks.py")
H.append("# DeltaTimingCallback.on_train_batch_end logs d = t1 - t0 between consecutive batch ends as train_step_time.")
H.append("# Checked on every row's logs: the gap between the MLLOG time_ms stamps of consecutive logged steps, divided")
H.append("# by the logged value, has a median of 1.00-1.07 (v3.x/v4.x log every step, the metadata 'step' advancing by")
H.append("# GBS x seq tokens; v5.0 405B and Cisco's v5.1 8B every step, advancing by GBS samples; v5.1 405B every step;")
H.append("# the other v5.1 8B logs every 32 steps, the gap being 32.0-32.4 x the value). So the value is seconds per")
H.append("# optimizer step of GBS sequences. The rows were extracted by a script reading the mirrored repositories.")
H.append("# measured.value = the median of all logged train_step_time values over all of the row's result files")
H.append("# (3 runs for gpt3/405B, 10 for 8B; warm-up steps outside the timed region are not logged with this key);")
H.append("# the note lists each run's median. Evaluation pauses are not in the value (they fall between steps).")
H.append("#")
H.append("# Conventions. hardware.gpus = number_of_nodes x accelerators_per_node of the system JSON")
H.append("# (<org>/systems/<system>.json); layout.dp = GPUs / (TP x PP x CP); the row's layout is the config script's")
H.append("# TENSOR_MODEL_PARALLEL, PIPELINE_MODEL_PARALLEL, CONTEXT_PARALLEL, INTERLEAVED_PIPELINE (vp), MICRO_BATCH_SIZE")
H.append("# (micro_batch), resolved through the scripts it sources (later exports win) and, for a variable no script")
H.append("# sets, the env default of the implementation's conf/custom.yaml (e.g. ${oc.env:INTERLEAVED_PIPELINE,12},")
H.append("# ${oc.env:CONTEXT_PARALLEL,4}). Every row was checked: GBS logged (global_batch_size) = MINIBS x dp, and the")
H.append("# logged gradient_accumulation_steps = MINIBS / MICRO_BATCH_SIZE. precision: fp8 where the config exports FP8=True")
H.append("# (Transformer Engine FP8; the v5.x recipes' FP8_RECIPE is tensorwise), fp4 where it exports FP4=True")
H.append("# (NVFP4, FP4_RECIPE=nvfp4; capsim's loader has no fp4 precision, so these rows are reported 'not predicted').")
H.append("# sharding: zero1 where the config exports USE_DIST_OPTIMIZER=True (Megatron's distributed optimizer).")
H.append("# tp_comm_overlap: true where TP_COMM_OVERLAP=True and TP > 1; sp: false where SEQ_PARALLEL=False and TP > 1")
H.append("# (otherwise capsim's default, sequence parallel with TP, which is also conf/custom.yaml's default True).")
H.append("# Not set (the scenario defaults apply), because the configs do not state them in capsim's terms: the attention")
H.append("# kernel (Transformer Engine / cuDNN fused attention; some 8B configs add FP8 attention, FP8_DPA=True, which")
H.append("# capsim does not model), recompute (no config sets ACT_CKPT_GRANULARITY; conf/custom.yaml's default is null,")
H.append("# i.e. none, which is capsim's default too), CUDA graphs, FP8 parameter gather, asymmetric pipeline stages")
H.append("# (ASYM_PP_EMBED / ASYM_PP_LOSS in the v5.1 405B configs).")
H.append("# Models: capsim presets gpt3-175b (96 layers, d 12288, 96 heads, vocab 50257), llama-3.1-405b, llama-3.1-8b;")
H.append("# MLPerf's gpt3 benchmark is GPT-3 175B at sequence 2048, llama31_405b / llama31_8b are Llama 3.1 405B / 8B at")
H.append("# 8192 (the logged max_sequence_length).")
H.append("# GPUs: H100-SXM5-80GB -> h100-sxm-80gb, H200-SXM5-141GB -> h200-sxm-141gb, B200-SXM-180GB -> b200. GB200,")
H.append("# GB300 (Grace-Blackwell, 4 GPUs per compute tray in an NVL72 rack: NVLink spans 72 GPUs, which capsim's")
H.append("# gpus_per_node cannot express; written gpus_per_node 4 as the system JSON counts them) and B300 are not in")
H.append("# capsim's catalog: those rows are written as gb200 / gb300 / b300 and reported 'not predicted'.")
H.append("# Network: from the system JSON's host_networking where it names the compute NICs' count and kind")
H.append("# ('Compute: 8x ConnectX-7 IB NDR 400Gb/s' -> '8 x ib-ndr-400'; '4x ConnectX-8 IB XDR 800 Gb/s' ->")
H.append("# '4 x ib-xdr-800'; Cisco's 'Compute: 8x BF3 ConnectX-7 400Gb/s' on an 'Ethernet Fabric' -> '8 x roce-400g');")
H.append("# else unknown (Oracle 'ROCE2', University of Florida 'InfiniBand', Verda '100GbE InfiniBand', HPE's two NIC")
H.append("# sets, Supermicro/SMC/Dell multi-node without a compute NIC): capsim then assumes the DGX reference network.")
H.append("# Single-node rows leave inter_node out. intra_node is left to the catalog's default for the GPU.")
H.append("#")
H.append("# Found but left out:")
for lab,why in d["excluded"]:
    H.append(f"#  - {lab}: {why}.")
H.append("")
H.append("kind: training")
H.append("rows:")
for r in d["rows"]:
    v=r["v"]; url=f"https://github.com/mlcommons/training_results_v{v}/tree/{r['commit']}/{r['rdir']}"
    lay=r["layout"]
    lay_s="{"+", ".join(f"{k}: {str(x).lower() if isinstance(x,bool) else x}" for k,x in lay.items())+"}"
    note=(f"Median logged step time ('{KEY[v]}') {r['value']:.4f} s over {r['nsteps']} logged steps of {r['nfiles']} result files "
          f"(per-run medians {', '.join(f'{x:.4f}' for x in r['per_run'])} s); logged global_batch_size {r['gbs']}, "
          f"max_sequence_length {r['seq']}, gradient_accumulation_steps {r['ga']}. System JSON: {r['accel']}, "
          f"{r['gpus']//r['gpn']} nodes x {r['gpn']}, host_networking '{r['hn'] or ''}'. Config {r['cfg']}"
          +(f" (named by {r['readme']})" if r.get('readme') else " (matched by node count x GPUs, MINIBS and the checks below)")
          +(f"; the scripts it sources are read from {r['fallback']} as its README says ('Please refer to the implementation directory b200_nemo')" if r['fallback'] else "")
          +": "+"; ".join(r["quotes"])+f". dp = {r['gpus']}/({lay['tp']}x{lay['pp']}x{lay.get('cp',1)}) = {lay['dp']}; MINIBS {r['minibs']} x dp {lay['dp']} = GBS {r['gbs']}."
          +(" FP8 attention (FP8_DPA=True) not modelled." if r.get('fp8attn')=="True" else "")
          +(" NVFP4 (FP4=True): no fp4 precision in capsim's loader." if r['precision']=="fp4" else ""))
    out+= [f"  - id: {r['id']}",
      f"    source: {q('MLCommons MLPerf Training v'+v+' results, '+r['org']+' submission, system '+r['sys']+', benchmark '+r['bm']+'; '+url)}",
      f"    where: {q(r['rdir']+'/result_*.txt (MLLOG tracked_stats '+KEY[v]+'); layout from '+r['cfg'])}",
      f"    as_of: \"{ROUND_DATE[v]}\"",
      f"    group: mlperf-training",
      f"    fit: false",
      f"    first_look: true",
      f"    model: {r['model']}",
      f"    seq_len: {r['seq']}",
      f"    global_batch: {r['gbs']}",
      f"    micro_batch: {r['mbs']}",
      f"    precision: {r['precision']}",
      f"    hardware:",
      f"      gpu: {r['gpu']}",
      f"      gpus: {r['gpus']}",
      f"      gpus_per_node: {r['gpn']}"]
    if r["gpus"]>r["gpn"]:
        out.append(f"      inter_node: {q(r['network']) if r['network'] else 'unknown'}")
    out+= [f"    layout: {lay_s}",
      f"    measured:",
      f"      metric: step_time_s",
      f"      value: {round(r['value'],4)}",
      f"    note: {q(note)}"]
open(sys.argv[1] if len(sys.argv)>1 else "training_mlperf.yaml","w").write("\n".join(H+out)+"\n")
print(len(d["rows"]))
