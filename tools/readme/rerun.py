#!/usr/bin/env python3
"""Reruns the README's console examples and rewrites their output in place.

Each ```console block is a list of `$ capsim ...` lines, each followed by its output. A command
followed directly by another command (or the block's end) keeps no output: the README shows it
for its comment only. Output cut short on purpose has a line `...`: the rerun output keeps as
many lines before and after it as the README does. Output abridged inside a line (`{..., ...}`)
is left as written. A line that differs only in a wall-clock time (`... node types in 0.09 s;`,
`... after warm-up) in 0.015 s`, `"wall_seconds": 0.1`) counts as unchanged and keeps the README's
text, so reruns neither fail --check nor churn the README over timing noise.

Figures in the prose that `capsim accuracy` computes carry a marker where they stand, an HTML
comment that Markdown does not show, and are rewritten from `capsim accuracy --format json`:
  <!-- accuracy: GROUP FIELD -->9.1 %   FIELD: mean, worst, held_out_mean, held_out_worst,
                                         fit_mean, rows, held_out_rows, dev_mean, dev_worst, dev_rows,
                                         first_look_mean, first_look_worst, first_look_rows,
                                         within=N (rows |error| <= N %)
  <!-- accuracy: row ID -->+26.5 %      one row's signed error
The number keeps the README's decimals, sign style and thousands separator.
Usage: tools/readme/rerun.py [--check] [--db FILE] [CAPSIM]; --check exits 1 when the README
differs from what the commands print now and prints the difference; a bad option or a CAPSIM
that is not an executable exits 2 and leaves the README alone.
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Wall-clock times the commands print (scenarios/src/sizing.cpp, scenarios/src/simulation.cpp, the
# JSON reports' wall_seconds): they differ run to run, so they are masked before lines are compared.
WALL_TIME = re.compile(r'((?:node types|after warm-up\)) in )[0-9][0-9.eE+-]*( s)'
                       r'|("wall_seconds": ?)[0-9][0-9.eE+-]*')


def mask_wall_time(line):
    return WALL_TIME.sub(lambda m: (m.group(1) or m.group(3)) + "<t>" + (m.group(2) or ""), line)


def keep_old_timings(old, new):
    """The new output; a line that differs from the old only in a wall time is kept as it was."""
    kept = [o if mask_wall_time(o) == mask_wall_time(n) else n for o, n in zip(old, new)]
    return kept + new[len(old):]


def run(capsim, command, env):
    args = command.split("#", 1)[0].strip()
    out = subprocess.run(capsim + " " + args[len("capsim"):], shell=True, cwd=ROOT, env=env,
                         capture_output=True, text=True)
    return (out.stdout + out.stderr).rstrip("\n").split("\n")


FIGURE = re.compile(r'(<!-- accuracy: ([^>]*?) -->)([+\u2212-]?)([0-9][0-9,]*(?:\.[0-9]+)?)')
GROUP_FIELDS = {"mean": "mean_abs_error_percent", "worst": "max_abs_error_percent",
                "held_out_mean": "held_out_mean_abs_error_percent",
                "held_out_worst": "held_out_max_abs_error_percent",
                "fit_mean": "fit_mean_abs_error_percent", "rows": "rows", "held_out_rows": "held_out_rows",
                "dev_mean": "dev_mean_abs_error_percent", "dev_worst": "dev_max_abs_error_percent",
                "dev_rows": "dev_rows", "first_look_mean": "first_look_mean_abs_error_percent",
                "first_look_worst": "first_look_max_abs_error_percent", "first_look_rows": "first_look_rows"}


def figure(report, spec):
    """The value a marker names, or an error text."""
    words = spec.split()
    if len(words) == 2 and words[0] == "row":
        rows = [r for r in report["rows"] if r["id"] == words[1] and "error_percent" in r]
        return rows[0]["error_percent"] if rows else "no predicted row '%s'" % words[1]
    if len(words) != 2:
        return "expected 'GROUP FIELD' or 'row ID', got '%s'" % spec
    group, field = words
    if field.startswith("within="):
        bound = float(field[len("within="):])
        return float(sum(1 for r in report["rows"]
                         if group in r.get("groups", []) and "error_percent" in r and abs(r["error_percent"]) <= bound))
    groups = [g for g in report["groups"] if g["group"] == group]
    if not groups or field not in GROUP_FIELDS:
        return "no group '%s' or field '%s'" % (group, field)
    value = groups[0][GROUP_FIELDS[field]]
    return "group '%s' has no %s" % (group, field) if value is None else float(value)


def formatted(value, old_sign, old_number):
    """value written the way the README wrote the number it replaces."""
    decimals = len(old_number.split(".")[1]) if "." in old_number else 0
    text = "%.*f" % (decimals, abs(value))
    if "," in old_number:
        whole, _, frac = text.partition(".")
        text = "{:,}".format(int(whole)) + ("." + frac if frac else "")
    if not old_sign:
        return text if value >= 0 or text.strip("0.") == "" else "-" + text
    # The prose writes a minus as U+2212; a number written with an ASCII hyphen keeps it.
    return ("+" if value >= 0 else "-" if old_sign == "-" else "\u2212") + text


def rewrite_figures(lines, capsim, env):
    """The lines with every marked accuracy figure recomputed; errors for markers that name nothing."""
    if not any("<!-- accuracy:" in line for line in lines):
        return lines, []
    printed = run(capsim, "capsim accuracy --format json", env)
    try:
        report = json.loads("\n".join(printed))
    except ValueError:
        return lines, ["capsim accuracy --format json printed no JSON: " + " ".join(printed)[:300]]
    errors, out = [], []
    for number, line in enumerate(lines, 1):
        def replace(m):
            value = figure(report, m.group(2))
            if isinstance(value, str):
                errors.append("README.md:%d: %s" % (number, value))
                return m.group(0)
            return m.group(1) + formatted(value, m.group(3), m.group(4))
        out.append(FIGURE.sub(replace, line))
    return out, errors


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
            out.extend(keep_old_timings(old, new))
    return out


def main():
    # argparse refuses an unknown option (exit 2) instead of it being run as the capsim command
    # and its error written into every example.
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 when the README differs, write nothing")
    parser.add_argument("--db", default=os.path.join(ROOT, "build", "readme-rerun.db"),
                        help="the store the examples write to (default: build/readme-rerun.db)")
    parser.add_argument("capsim", nargs="?", default=os.path.join(ROOT, "build", "cli", "capsim"))
    args = parser.parse_args()
    check, capsim = args.check, args.capsim
    if " " not in capsim and not (os.path.isfile(capsim) and os.access(capsim, os.X_OK)):
        parser.error("no capsim executable at %s (build it, or name it)" % capsim)
    # Price ages are counted to a fixed day, the one the tests use (tests/main.cpp), so that
    # the README's "as of ... N months old" lines do not change with the calendar.
    env = dict(os.environ, CAPSIM_DB=args.db, COLUMNS="100", CAPSIM_TODAY="2026-12-01")
    path = os.path.join(ROOT, "README.md")
    lines = open(path).read().split("\n")
    new, errors = rewrite_figures(rewrite(lines, capsim, env), capsim, env)
    for error in errors:
        print(error, file=sys.stderr)
    if errors:
        sys.exit(2)
    if check:
        if new != lines:
            diff = list(difflib.unified_diff(lines, new, "README.md", "README.md (rerun)", n=1, lineterm=""))
            print("\n".join(diff[:80] + (["... %d more lines" % (len(diff) - 80)] if len(diff) > 80 else [])))
        sys.exit(0 if new == lines else 1)
    open(path + ".tmp", "w").write("\n".join(new))
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
