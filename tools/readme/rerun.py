#!/usr/bin/env python3
"""Reruns the README's console examples and rewrites their output in place.

Each ```console block is a list of `$ capsim ...` lines, each followed by its output. A command
followed directly by another command (or the block's end) keeps no output: the README shows it
for its comment only. Output cut short on purpose has a line `...`: the rerun output keeps as
many lines before and after it as the README does. Output abridged inside a line (`{..., ...}`)
is left as written. Usage: tools/readme/rerun.py [--check] [CAPSIM]; --check exits 1
when the README differs from what the commands print now.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(capsim, command, env):
    args = command.split("#", 1)[0].strip()
    out = subprocess.run(capsim + " " + args[len("capsim"):], shell=True, cwd=ROOT, env=env,
                         capture_output=True, text=True)
    return (out.stdout + out.stderr).rstrip("\n").split("\n")


def rewrite(lines, capsim, env):
    out, i = [], 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i].strip() != "```console":
            i += 1
            continue
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            out.append(line)
            i += 1
            if not line.startswith("$ capsim"):
                continue
            old = []
            while i < len(lines) and not lines[i].startswith("$ ") and lines[i].strip() != "```":
                old.append(lines[i])
                i += 1
            if not old or any("..." in o and o.strip() != "..." for o in old):
                out.extend(old)  # no output shown, or output abridged by hand ("{..., ...}"): kept
                continue
            new = run(capsim, line[2:], env)
            if "no such directory" in new[0]:  # the example needs files the text sets up first
                out.extend(old)
                continue
            if "..." in [o.strip() for o in old]:
                # Cut where the README cuts: the same lines before the "..." and after it.
                cut = [o.strip() for o in old].index("...")
                tail = len(old) - cut - 1
                if len(new) > cut + tail:
                    new = new[:cut] + ["..."] + (new[len(new) - tail:] if tail else [])
            out.extend(new)
    return out


def main():
    check = "--check" in sys.argv
    rest = [a for a in sys.argv[1:] if a != "--check"]
    capsim = rest[0] if rest else os.path.join(ROOT, "build", "cli", "capsim")
    env = dict(os.environ, CAPSIM_DB=os.path.join(ROOT, "build", "readme-rerun.db"), COLUMNS="100")
    path = os.path.join(ROOT, "README.md")
    lines = open(path).read().split("\n")
    new = rewrite(lines, capsim, env)
    if check:
        sys.exit(0 if new == lines else 1)
    open(path + ".tmp", "w").write("\n".join(new))
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
