import subprocess, json, re, os, sys
def git(v,*a): return subprocess.run(["git","-C",os.path.join(os.environ.get("MLPERF_MIRROR","/work/.mirror"),f"mlcommons+training_results_v{v}/repo"),*a],capture_output=True,text=True,errors="replace").stdout
_ls={}
def ls(v):
    if v not in _ls: _ls[v]=git(v,"ls-tree","-r","--name-only","HEAD").split("\n")
    return _ls[v]
def expand(s,env):
    s=re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=]([^}]*)\}", lambda m: str(env.get(m.group(1),m.group(2))), s)
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: str(env.get(m.group(1),"")), s)
def resolve(v,path,env=None,trace=None,depth=0):
    """Emulate the export/source lines of a config script. Returns env: VAR -> (value, file:line, text)."""
    env = {} if env is None else env
    txt=git(v,"show","HEAD:"+path)
    d=os.path.dirname(path)
    stack=[]  # per open if: True when its current branch is read
    for n,raw in enumerate(txt.split("\n"),1):
        line=raw.strip()
        if re.match(r"^(if|case)\b",line): stack.append("version" if "MLPERF_VERSION" in line else False); continue
        if re.match(r"^else\b",line) and stack:
            stack[-1] = True if stack[-1]=="version" else False; continue
        if re.match(r"^(fi|esac)\b",line): stack.pop(); continue
        if any(x is not True for x in stack): continue
        m=re.match(r"^source\s+\$\(dirname \$\{BASH_SOURCE\[0\]\}\)/(\S+)",line) or re.match(r"^(?:source|\.)\s+(?:\./)?(\S+\.sh)",line)
        if m:
            p=os.path.normpath(os.path.join(d,m.group(1)))
            if p in ls(v): resolve(v,p,env,trace,depth+1)
            else: env.setdefault("_missing",[]).append(p)
            continue
        m=re.match(r"^export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$",line)
        if m:
            val=m.group(2).split(" #")[0].strip()
            if len(val)>=2 and val[0]==val[-1] and val[0] in "\"'": val=val[1:-1]
            val=expand(val,{k:x[0] for k,x in env.items() if isinstance(x,tuple)})
            env[m.group(1)]=(val,f"{path}:{n}",line)
            continue
        m=re.match(r'^:\s+"?\$\{([A-Za-z_][A-Za-z0-9_]*):?=([^}]*)\}"?',line)
        if m and m.group(1) not in env:
            env[m.group(1)]=(m.group(2).strip('"'),f"{path}:{n}",line)
    return env
if __name__=="__main__":
    v,p=sys.argv[1],sys.argv[2]
    e=resolve(v,p)
    for k in sorted(e):
        if k=="_missing": print("MISSING",e[k]); continue
        if re.search(sys.argv[3] if len(sys.argv)>3 else ".",k): print(k,"=",e[k][0],"  @",e[k][1])
