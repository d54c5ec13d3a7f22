import json, re, os, statistics, subprocess
from resolve import git, ls, resolve
runs=json.load(open("runs2.json"))
ROUND_DATE={"3.0":"2023-06","3.1":"2023-11","4.0":"2024-06","4.1":"2024-11","5.0":"2025-06","5.1":"2025-11"}
GPU={"NVIDIA H100-SXM5-80GB":"h100-sxm-80gb","NVIDIA H100-SXM-80GB":"h100-sxm-80gb","NVIDIA H200-SXM5-141GB":"h200-sxm-141gb",
     "NVIDIA Blackwell GPU (B200-SXM-180GB)":"b200","NVIDIA Blackwell GPU (GB200)":"gb200",
     "NVIDIA Blackwell Ultra GPU (GB300)":"gb300","NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)":"b300"}
MODEL={"gpt3":"gpt3-175b","llama31_405b":"llama-3.1-405b","llama31_8b":"llama-3.1-8b"}
UF="University-of-Florida/benchmarks/{bm}/implementations/hpg.dgxb200x8/"
MANUAL={
 ("5.1","Dell","1xXE9680Lx8B200-SXM-180GB"):"Dell/benchmarks/llama31_8b/implementations/nemo/config_1xXE9680Lx8B200-SXM-180GB.sh",
 ("5.1","Dell","1xXE9780x8B300-SXM-270GB"):"Dell/benchmarks/llama31_8b/implementations/nemo/config_XE9780x8B300-SXM-270GB_1x8x2xtp1pp1cp1_8b.sh",
 ("5.1","Dell","2xXE9680Lx8B200-SXM-180GB"):"Dell/benchmarks/llama31_8b/implementations/nemo/config_2xXE9680Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1_8b.sh",
 ("5.1","Dell","2xXE9685Lx8B200-SXM-180GB"):"Dell/benchmarks/llama31_8b/implementations/nemo/config_XE9685Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1.sh",
 ("5.1","Lenovo","SR680aV3-8xB200_SXM_180GB"):"Lenovo/benchmarks/llama31_8b/config_SR780aV3_SR680aV3_SR680aV4.sh",
 ("5.1","Lenovo","SR680aV4-8xB300_SXM"):"Lenovo/benchmarks/llama31_8b/config_SR780aV3_SR680aV3_SR680aV4.sh",
 ("5.1","Lenovo","SR780aV3-8xB200_SXM_180GB"):"Lenovo/benchmarks/llama31_8b/config_SR780aV3_SR680aV3_SR680aV4.sh",
 ("5.1","Nebius","nebius_b200_n1"):"Nebius/benchmarks/llama31_8b/configs/nebius_b200_n1/config_DGXB200_1x8x2xtp1pp1cp1_8b_fp4.sh",
 ("5.1","Nebius","nebius_b200_n2"):"Nebius/benchmarks/llama31_8b/configs/nebius_b200_n2/config_DGXB200_2x8x2xtp1pp1cp1_8b_fp4.sh",
 ("5.1","Nebius","nebius_b200_n4"):"Nebius/benchmarks/llama31_8b/configs/nebius_b200_n4/config_DGXB200_4x8x1xtp1pp1cp1_8b_fp4.sh",
 ("5.1","Nebius","nebius_b300_n1"):"Nebius/benchmarks/llama31_8b/configs/nebius_b300_n1/config_DGXB200_1x8x2xtp1pp1cp1_8b.sh",
 ("5.1","Supermicro","AS-4126GS-NBR-LCC"):"Supermicro/benchmarks/llama31_8b/implementations/AS-4126GS-NBR-LCC/config_AS-4126GS-NBR-LCC_1x8x2xtp1pp1cp1_8b_fp4.sh",
 ("5.1","Supermicro","SYS-422GS-NBRT-LCC"):"Supermicro/benchmarks/llama31_8b/implementations/SYS-422GS-NBRT-LCC/config_SYS-422GS-NBRT-LCC_1x8x2xtp1pp1cp1_8b_fp4.sh",
 ("5.1","Supermicro","AS-8126GS-NB3RT"):"Supermicro/benchmarks/llama31_8b/implementations/AS-8126GS-NB3RT/config_DGXB200_1x8x2xtp1pp1cp1_8b.sh",
 ("5.1","Oracle","8xBM.GPU.B200.8"):"Oracle/benchmarks/llama31_8b/config_DGXB200_8x8x1xtp1pp1cp2_8b.sh",
 ("5.1","Cisco","hpf_n16"):"Cisco/benchmarks/llama31_8b/implementations/nemo/config_DGXH100_16x8x1xtp2pp1cp1.sh",
 ("5.1","Cisco","hpf_n8"):"Cisco/benchmarks/llama31_8b/implementations/nemo/config_DGXH100_8x8x1xtp1pp1cp1.sh",
 ("5.1","HPE","HPE-Cray-XD670-H200-SXM5-141GB_n8_25.09"):"HPE/benchmarks/llama3_8b/implementations/nemo-x86_64/config_XD670_8x8x1xtp1pp1cp2_8b.sh",
 ("5.1","Verda","b200_8x8_ngc25.09"):"Verda/benchmarks/llama31_8b/implementations/b200_8x8_ngc25.09/config_DGXB200_8x8x1xtp1pp1cp2_8b.sh",
 ("5.1","University-of-Florida","hpg.dgxb200x8.n1"):UF.format(bm="llama31_8b")+"config_DGXB200_1x8x2xtp1pp1cp1_8b.sh",
 ("5.1","University-of-Florida","hpg.dgxb200x8.n2"):UF.format(bm="llama31_8b")+"config_DGXB200_2x8x2xtp1pp1cp1_8b.sh",
 ("5.1","University-of-Florida","hpg.dgxb200x8.n4"):UF.format(bm="llama31_8b")+"config_DGXB200_4x8x1xtp1pp1cp2_8b.sh",
 ("5.1","University-of-Florida","hpg.dgxb200x8.n8"):UF.format(bm="llama31_8b")+"config_DGXB200_8x8x1xtp1pp1cp2_8b.sh",
 ("5.1","University-of-Florida","hpg.dgxb200x8.n16"):UF.format(bm="llama31_8b")+"config_DGXB200_16x8x1xtp1pp1cp2_8b.sh",
 ("5.1","University-of-Florida","hpg.dgxb200x8.n32","llama31_8b"):UF.format(bm="llama31_8b")+"config_DGXB200_32x8x1xtp1pp1cp2_8b.sh",
 ("5.1","University-of-Florida","hpg.dgxb200x8.n32","llama31_405b"):UF.format(bm="llama31_405b")+"config_DGXB200_32x8x144xtp4pp8cp2_cg.sh",
 ("5.1","University-of-Florida","hpg.dgxb200x8.n56"):UF.format(bm="llama31_405b")+"config_DGXB200_56x8x144xtp4pp8cp2_cg.sh",
 ("4.0","smc","64xSMC-H100-SXM-80GB"):"smc/benchmarks/gpt3/implementations/nemo/config_SMCH100_64x8x128x4x8.sh",
 ("4.1","Oracle","1536xBM.GPU.H100.8"):"Oracle/benchmarks/gpt3/DGXH100_128x8x64x4x8_mbs2/config_DGXH100_192x8x64x4x8_mbs2.sh",
 ("4.1","Oracle","3072xBM.GPU.H100.8"):"Oracle/benchmarks/gpt3/DGXH100_384x8x32x4x8_mbs2/config_DGXH100_384x8x32x4x8_mbs2.sh",
 ("3.0","NVIDIA","dgxh100_n64_nemo"):"NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_64x8x128x4x8_mbs1.sh",
 ("3.0","NVIDIA","dgxh100_n96_nemo"):"NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh",
 ("3.0","NVIDIA_CoreWeave","coreweave_hgxh100_n192_ngc23.04_pytorch"):"NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_192x8x64x4x8_mbs1.sh",
 ("3.0","NVIDIA_CoreWeave","coreweave_hgxh100_n448_ngc23.04_pytorch"):"NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_448x8x24x4x8_mbs1.sh",
 ("3.0","NVIDIA_CoreWeave","coreweave_hgxh100_n96_ngc23.04_pytorch"):"NVIDIA_CoreWeave/benchmarks/gpt3/implementations/pytorch/config_DGXH100_96x8x128x4x8_mbs1.sh",
 ("3.1","Azure+NVIDIA","ND_H100_v5_n1344_pytorch"):"Azure+NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_1344x8x8x4x8_mbs1.sh",
}
for n in ["1024x8x16","1280x8x8","1344x8x8","512x8x16","768x8x16","96x8x128"]:
    nodes=n.split("x")[0]; key="eos_n96_ngc23.09_nemo" if nodes=="96" else f"eos-dfw_n{nodes}_ngc23.09_nemo"
    MANUAL[("3.1","NVIDIA",key)]=f"NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_{n}x4x8_mbs1.sh"
EXCLUDE={
 ("3.1","NVIDIA","eos_n64_ngc23.09_nemo"):"no config in the submission matches the run: GBS 2048 on 64 nodes needs MINIBS 128 at TP 4 x PP 8, and the only 64-node config (config_DGXH100_64x8x192x4x8_mbs1.sh, a 'dryrun large config') has MINIBS 192 (GBS 3072)",
 ("4.0","smc-ac-power","64xSMC-H100-SXM-80GB"):"the same three result logs as smc/64xSMC-H100-SXM-80GB (power-measurement submission of the same runs); kept once",
 ("4.0","smc-dc-power","64xSMC-H100-SXM-80GB"):"the same three result logs as smc/64xSMC-H100-SXM-80GB (power-measurement submission of the same runs); kept once",
 ("5.1","Nebius","nebius_h200_n64"):"the v5.1 result logs repeat the v5.0 nebius_soperator_8xH200_n64_ngc25.01_nemo runs step for step (identical train_step_time sequences); kept once, as v5.0",
 ("5.1","Nebius","nebius_h200_n128"):"the v5.1 result logs repeat the v5.0 nebius_soperator_8xH200_n128_ngc25.01_nemo runs (identical median step time, 25.3564 s); kept once, as v5.0",
 ("5.1","Oracle","1xBM.GPU.B200.8"):"layout known (TP 1, PP 1, CP 1, MBS 2) but precision not: Oracle's folder holds both config_DGXB200_1x8x2xtp1pp1cp1_8b.sh (FP8) and config_DGXB200_1x8x2xtp1pp1cp1_8b_fp4.sh (NVFP4) and no README names the one run",
 ("5.1","Lambda","gb300_n18_ngc25.04_nemo"):"layout unknown: the only config, config_GB300_18x4x1xtp1pp1cp2_8b.sh, sources config_GB200_18x4x1xtp1pp1cp2_8b.sh, which the submission does not contain (the file name alone is not read as the layout)",
}
def customyaml_default(v,cfg,var):
    d=os.path.dirname(cfg)
    for cand in [d+"/conf/custom.yaml"]:
        if cand in ls(v):
            t=git(v,"show","HEAD:"+cand)
            m=re.search(r"\$\{oc\.env:"+var+r",([^}]*)\}",t)
            if m: return m.group(1).strip(), cand
    return None, None
def net(s,gpn):
    h=(s.get("host_networking") or "")
    m=re.search(r"Compute: (\d+)x (?:NVIDIA )?ConnectX-([78]) IB (NDR|XDR) (\d+)",h) or re.search(r"(\d+)x (?:NVIDIA )?ConnectX-([78]) (?:InfiniBand|IB) (NDR|XDR) (\d+) ?Gb",h)
    if m: return f"{m.group(1)} x ib-{m.group(3).lower()}-{m.group(4)}", h
    m=re.search(r"(\d+)x NVIDIA Quantum-2 CX7 InfiniBand \(400Gb/s\)",h)
    if m: return f"{m.group(1)} x ib-ndr-400", h
    m=re.search(r"Compute: (\d+)x BF3 ConnectX-7 400Gb/s",h)
    if m and "Ethernet" in (s.get("host_networking_topology") or ""): return f"{m.group(1)} x roce-400g", h+" / topology: "+s.get("host_networking_topology")
    return None, h
rows=[]; excluded=[]; sources=[]
for r in runs:
    v=r["v"]; key=(r["v"],r["org"],r["sys"]); s=r["system"] or {}
    label=f"v{v} {r['org']}/{r['sys']} {r['bm']}"
    if not r["median_all"]:
        why="no train_step_time in the MLLOG result files" if not r["keys"] else "no train_step_time key in the result files' tracked_stats (only "+", ".join(sorted(r["keys"]))+")"
        excluded.append((label,why)); continue
    if key in EXCLUDE: excluded.append((label,EXCLUDE[key])); continue
    cfg=MANUAL.get(key+(r["bm"],)) or MANUAL.get(key); readme=None
    if not cfg:
        for f in ls(v):
            if f.startswith(f"{r['org']}/benchmarks/{r['bm']}/implementations/") and f.endswith(f"README-{r['sys']}.md"):
                m=re.findall(r"config_[A-Za-z0-9_.\-]+\.sh",git(v,"show","HEAD:"+f))
                if m: cfg=os.path.dirname(f)+"/"+m[0]; readme=f
    if not cfg: excluded.append((label,"NO CONFIG MATCHED")); continue
    if cfg not in ls(v):
        alt=[f for f in ls(v) if f.startswith(f"{r['org']}/benchmarks/{r['bm']}/implementations/") and f.endswith("/"+os.path.basename(cfg))]
        assert len(alt)==1, (label,cfg,alt)
        cfg=alt[0]
    env=resolve(v,cfg)
    fallback=None
    if env.get("_missing") and "hpg.dgxb200x8" in cfg:
        # the hpg.dgxb200x8 README: "Please refer to the implementation directory b200_nemo for the details."
        fallback=cfg.split("/implementations/")[0]+"/implementations/b200_nemo/"
        env={}
        txt=git(v,"show","HEAD:"+cfg)
        for line in txt.split("\n"):
            m=re.match(r"^source\s+\$\(dirname \$\{BASH_SOURCE\[0\]\}\)/(\S+)",line.strip())
            if m: resolve(v,fallback+m.group(1),env)
        # then the config's own exports
        e2=resolve(v,cfg,{k:x for k,x in env.items() if k!="_missing"})
        env=e2; env.pop("_missing",None)
    E=lambda k: env[k][0] if k in env else None
    W=lambda k: f"{k}={env[k][0]} ({env[k][1].split('/')[-1]})" if k in env else None
    nodes=int(s["number_of_nodes"]); gpn=int(s["accelerators_per_node"]); gpus=nodes*gpn
    if E("TENSOR_MODEL_PARALLEL") is None: print("DEBUG",label,cfg,sorted(env)[:20]); excluded.append((label,"DEBUG")); continue
    tp=int(E("TENSOR_MODEL_PARALLEL")); pp=int(E("PIPELINE_MODEL_PARALLEL"))
    quotes=[W("TENSOR_MODEL_PARALLEL"),W("PIPELINE_MODEL_PARALLEL")]
    cpv=E("CONTEXT_PARALLEL")
    if cpv is None and r["bm"]!="gpt3":
        d,src=customyaml_default(v,cfg,"CONTEXT_PARALLEL"); cpv=d; quotes.append(f"CONTEXT_PARALLEL unset, conf/custom.yaml default {d}")
    elif cpv is not None: quotes.append(W("CONTEXT_PARALLEL"))
    cp=int(cpv) if cpv not in (None,"null") else 1
    vpv=E("INTERLEAVED_PIPELINE")
    if vpv is None:
        d,src=customyaml_default(v,cfg,"INTERLEAVED_PIPELINE")
        vpv=d; quotes.append(f"INTERLEAVED_PIPELINE unset, conf/custom.yaml default {d}" if d else "INTERLEAVED_PIPELINE unset")
    else: quotes.append(W("INTERLEAVED_PIPELINE"))
    vp=int(vpv) if vpv not in (None,"null","0","1") else 1
    if pp==1: vp=1
    mbs=int(E("MICRO_BATCH_SIZE")); minibs=int(E("MINIBS"))
    quotes+= [W("MINIBS"),W("MICRO_BATCH_SIZE")]
    dp=gpus//(tp*pp*cp); gbs=r["gbs"][0]
    assert dp*tp*pp*cp==gpus, (label,tp,pp,cp,gpus)
    assert dp*minibs==gbs, (label,dp,minibs,gbs)
    ga=r["ga"][0] if r["ga"] else None
    assert ga is None or abs(float(ga)-minibs/mbs)<1e-6, (label,ga,minibs,mbs)
    fp4=E("FP4")=="True"; fp8=E("FP8")=="True"
    precision="fp4" if fp4 else ("fp8" if fp8 else None)
    quotes.append(W("FP4") if fp4 else W("FP8"))
    if precision is None: excluded.append((label,f"precision not stated by the configs read ({cfg})")); continue
    lay={"tp":tp,"pp":pp,"dp":dp}
    if cp>1: lay["cp"]=cp
    if vp>1: lay["vp"]=vp
    sp=E("SEQ_PARALLEL")
    if sp is not None: quotes.append(W("SEQ_PARALLEL"))
    if sp=="False" and tp>1: lay["sp"]=False
    tpo=E("TP_COMM_OVERLAP")
    if tpo is not None: quotes.append(W("TP_COMM_OVERLAP"))
    if tpo=="True" and tp>1: lay["tp_comm_overlap"]=True
    if E("USE_DIST_OPTIMIZER")=="True": lay["sharding"]="zero1"; quotes.append(W("USE_DIST_OPTIMIZER"))
    ck=E("ACT_CKPT_GRANULARITY")
    if ck is not None: quotes.append(W("ACT_CKPT_GRANULARITY"))
    if ck in ("selective","full"): lay["recompute"]=ck
    if E("OVERWRITTEN_NUM_LAYERS") and r["bm"]!="llama31_8b": raise SystemExit(label+" overwrites layers")
    gpu=GPU[s["accelerator_model_name"]]
    network,hn=net(s,gpn) if nodes>1 else (None,s.get("host_networking"))
    files=r["files"]; rdir=os.path.dirname(files[0])
    med=statistics.median([x for x in []]) if False else r["median_all"]
    row={"id":f"mlperf-v{v}-{r['org']}-{r['sys']}-{r['bm']}".lower().replace("+","-").replace("_","-").replace(".","").replace("--","-"),
         "v":v,"org":r["org"],"sys":r["sys"],"bm":r["bm"],"commit":r["head"],"rdir":rdir,"nfiles":len(files),"nsteps":r["n_steps"],
         "cfg":cfg,"fallback":fallback,"model":MODEL[r["bm"]],"seq":r["seq"][0],"gbs":gbs,"mbs":mbs,"precision":precision,
         "gpu":gpu,"gpus":gpus,"gpn":gpn,"network":network,"hn":hn,"layout":lay,"quotes":[q for q in quotes if q],"value":med,
         "per_run":r["per_run_median"],"ga":ga,"minibs":minibs,"fp8attn":E("FP8_DPA"),"readme":readme,"sysname":s.get("system_name"),"accel":s["accelerator_model_name"]}
    rows.append(row)
json.dump({"rows":rows,"excluded":excluded},open("gen.json","w"),indent=1)
print(len(rows),"rows;",len(excluded),"excluded")
for x in excluded: print("EXCL",x)
import collections
print(collections.Counter(r["org"] for r in rows)); print(collections.Counter(r["gpu"] for r in rows)); print(collections.Counter(r["precision"] for r in rows))
for r in rows: print(r["id"],r["gpu"],r["gpus"],r["precision"],r["layout"],r["mbs"],r["network"],r["fallback"] and "FB")
