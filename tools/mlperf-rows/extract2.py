import subprocess, json, re, statistics, collections, os
BMS={"gpt3","llama31_405b","llama31_8b"}
out=[]
for v in ["3.0","3.1","4.0","4.1","5.0","5.1"]:
    repo=os.path.join(os.environ.get("MLPERF_MIRROR","/work/.mirror"),f"mlcommons+training_results_v{v}/repo")
    head=subprocess.run(["git","-C",repo,"rev-parse","HEAD"],capture_output=True,text=True).stdout.strip()
    files=subprocess.run(["git","-C",repo,"ls-tree","-r","--name-only","HEAD"],capture_output=True,text=True).stdout.split("\n")
    groups=collections.defaultdict(list)
    for f in files:
        m=re.match(r"([^/]+)/results/([^/]+)/([^/]+)/(result[^/]*\.txt)$",f)
        if m and m.group(3) in BMS: groups[(m.group(1),m.group(2),m.group(3))].append(f)
    for (org,sysn,bm),fl in sorted(groups.items()):
        info={"v":v,"head":head,"org":org,"sys":sysn,"bm":bm,"files":sorted(fl)}
        allt=[];meds=[];keys=collections.Counter();gbs=set();seq=set();ga=set();status=[];dts=[];dsamp=set();impl=set()
        for f in sorted(fl):
            txt=subprocess.run(["git","-C",repo,"show","HEAD:"+f],capture_output=True,text=True,errors="replace").stdout
            ts=[];prev=None
            for line in txt.split("\n"):
                i=line.find(":::MLLOG")
                if i<0: continue
                try: j=json.loads(line[i+8:])
                except Exception: continue
                k=j.get("key"); val=j.get("value"); md=j.get("metadata",{})
                if k=="global_batch_size": gbs.add(val)
                elif k=="max_sequence_length": seq.add(val)
                elif k=="gradient_accumulation_steps": ga.add(val)
                elif k=="run_stop": status.append(md.get("status"))
                elif k=="tracked_stats" and isinstance(val,dict):
                    for kk in val: keys[kk]+=1
                    st=[vv for kk,vv in val.items() if kk.startswith("train_step_tim")]
                    if st:
                        ts.append(st[0])
                        cur=(j["time_ms"],md.get("samples_count"),md.get("step"))
                        if prev and cur[2] is not None and prev[2] is not None and cur[2]-prev[2]==1:
                            dts.append(((cur[0]-prev[0])/1000.0)/st[0])
                            if cur[1] is not None and prev[1] is not None: dsamp.add(cur[1]-prev[1])
                        prev=cur
            if ts: meds.append(statistics.median(ts)); allt+=ts
        info.update(gbs=sorted(gbs),seq=sorted(seq),ga=sorted(ga),status=status,keys=dict(keys),
            per_run_median=[round(x,4) for x in meds],n_steps=len(allt),
            median_all=statistics.median(allt) if allt else None,
            ratio_dt_over_step=(round(statistics.median(dts),3) if dts else None),
            samples_per_step=sorted(dsamp))
        sj=subprocess.run(["git","-C",repo,"show",f"HEAD:{org}/systems/{sysn}.json"],capture_output=True,text=True).stdout
        try: info["system"]=json.loads(sj)
        except Exception as e: info["system"]=None
        out.append(info)
json.dump(out,open("runs2.json","w"),indent=1)
for i in out:
    s=i["system"] or {}
    print(i["v"],i["org"],i["sys"],i["bm"],len(i["files"]),"gbs",i["gbs"],"med",i["median_all"] and round(i["median_all"],4),"ratio",i["ratio_dt_over_step"],"dsamp",i["samples_per_step"],"|",s.get("number_of_nodes"),s.get("accelerators_per_node"),s.get("accelerator_model_name"),"keys",list(i["keys"])[:6])
