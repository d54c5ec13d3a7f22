import subprocess, json, re, statistics, collections, os
runs=json.load(open("runs2.json"))
for r in runs:
    if not r["median_all"]: continue
    repo=os.path.join(os.environ.get("MLPERF_MIRROR","/work/.mirror"),f"mlcommons+training_results_v{r['v']}/repo")
    ratios=[];dsteps=collections.Counter();vals=[]
    gbs=r["gbs"][0]; seq=r["seq"][0] if r["seq"] else None
    for f in r["files"]:
        txt=subprocess.run(["git","-C",repo,"show","HEAD:"+f],capture_output=True,text=True,errors="replace").stdout
        seen={}
        for line in txt.split("\n"):
            i=line.find(":::MLLOG")
            if i<0: continue
            try: j=json.loads(line[i+8:])
            except Exception: continue
            if j.get("key")!="tracked_stats" or not isinstance(j.get("value"),dict): continue
            st=[vv for kk,vv in j["value"].items() if kk.startswith("train_step_tim")]
            if not st: continue
            s=j["metadata"].get("step")
            if s is None or s in seen: continue
            seen[s]=(j["time_ms"],st[0])
        ks=sorted(seen)
        ds=[b-a for a,b in zip(ks,ks[1:])]
        if not ds: continue
        mode=collections.Counter(ds).most_common(1)[0][0]
        dsteps[mode]+=1
        for a,b in zip(ks,ks[1:]):
            if b-a==mode: ratios.append((seen[b][0]-seen[a][0])/1000/seen[b][1])
            vals.append(seen[b][1])
    mode=dsteps.most_common(1)[0][0]
    unit = "tokens" if seq and abs(mode-gbs*seq)<1 else ("samples" if abs(mode-gbs)<1 else f"{mode} steps")
    print(r["v"],r["org"],r["sys"],r["bm"],"dstep",mode,unit,"dt/val median",round(statistics.median(ratios),3),"min",round(min(ratios),2),"max",round(max(ratios),2))
