#!/usr/bin/env python3
"""Issue 53: PDF report tables wrap at word boundaries and never split an identifier.

    pdf_words_test.py CAPSIM SOURCE_DIR

Renders the report of every shipped example (scenarios/examples/*.yaml, `capsim report -o
X.pdf`) and cluster (scenarios/clusters/*.yaml, `capsim plan --report X.pdf`) to PDF, reads
its text back with pdftotext -raw (the text in drawing order: a table cell's lines follow
each other), and checks that no identifier of the plan is split across two lines. The
identifiers are the catalog's ids and names (GPU ids, instance ids and names: p5.48xlarge)
and every identifier-like token of the same report written as Markdown (resource names such
as nvidia.com/gpu, parallel layouts, pool names): letters with digits or punctuation, no
space, at most 40 characters (longer tokens, URLs and paths, may wrap after '/' or '-').
Each must also appear whole in the PDF at least once.

Negative controls: the checker finds the splits in text that Qt printed before the fix
(tests/render/fixtures/pdf-text-split-words.txt, from the 70B report), and finds one put
into a good report's text by hand.
Exit 77 (skipped) when pdftotext (Debian: poppler-utils) is missing.
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LONGEST = 40  # gui/src/report_writer.cpp: kLongestWholeToken
LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"}
SECTIONS = ["gpus", "cpus", "interconnects", "networks", "servers", "instances", "facilities"]


def fail(message):
    print(f"pdf_words_test: {message}", file=sys.stderr)
    sys.exit(1)


def is_identifier(token):
    return (4 <= len(token) <= LONGEST and re.search(r"[A-Za-z]", token) is not None
            and re.search(r"[0-9./_:=-]", token) is not None and re.fullmatch(r"[A-Za-z0-9./_:=+-]+", token) is not None
            and re.match(r"\d{4}-\d\d-\d\dT", token) is None)  # a run's timestamp differs between two runs


def tokens_of_markdown(text):
    """Identifier-like tokens of a Markdown report, outside its code blocks."""
    out = set()
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        line = html.unescape(re.sub(r"\\(.)", r"\1", line))
        for token in re.split(r"[\s|]+", line):
            token = token.strip("()[]{},;:`*'\"")
            token = token.rstrip(".")
            if is_identifier(token):
                out.add(token)
    return out


# An identifier stands alone: not part of a longer token such as a URL, which may wrap after
# '/' or '-' (a '.' that ends a sentence may follow it).
BEFORE = r"(?<![A-Za-z0-9._/:=+-])"
AFTER = r"(?![A-Za-z0-9_/:=+-]|\.[A-Za-z0-9])"


def splits(text, identifiers):
    """(identifier, 'head|tail') for each identifier printed with a line break inside it."""
    found = []
    for ident in sorted(identifiers):
        for k in range(1, len(ident)):
            if ident[:k] + "\n" + ident[k:] not in text:
                continue
            if re.search(BEFORE + re.escape(ident[:k]) + "\n" + re.escape(ident[k:]) + AFTER, text):
                found.append((ident, ident[:k] + "|" + ident[k:]))
    return found


def pdf_text(pdf):
    raw = subprocess.run(["pdftotext", "-raw", "-enc", "UTF-8", str(pdf), "-"], check=True, capture_output=True,
                         text=True).stdout
    for ligature, letters in LIGATURES.items():
        raw = raw.replace(ligature, letters)
    return raw


def main():
    capsim, src = sys.argv[1], Path(sys.argv[2])
    if shutil.which("pdftotext") is None:
        print("pdf_words_test: pdftotext missing (Debian: poppler-utils)")
        sys.exit(77)
    work = Path(tempfile.mkdtemp(prefix="capsim-pdf-words-"))
    env = dict(os.environ, CAPSIM_DB=str(work / "capsim.db"), QT_QPA_PLATFORM="offscreen")

    def capsim_run(*args):
        r = subprocess.run([capsim, *args], env=env, capture_output=True, text=True)
        if r.returncode not in (0, 1):  # 1: an expectation failed, the report is still written
            fail(f"capsim {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
        return r.stdout

    try:
        catalog = set()
        for section in SECTIONS:
            for entry in json.loads(capsim_run("catalog", "list", section, "--format", "json")):
                for value in (entry.get("id"), entry.get("fields", {}).get("name")):
                    if isinstance(value, str) and is_identifier(value):
                        catalog.add(value)
        if "p5.48xlarge" not in catalog or "h100-sxm-80gb" not in catalog:
            fail("the catalog's identifiers were not read (no p5.48xlarge or h100-sxm-80gb)")

        # Negative control 1: what Qt printed before the fix is caught, identifier by identifier.
        before = (src / "tests/render/fixtures/pdf-text-split-words.txt").read_text(encoding="utf-8")
        caught = {ident for ident, _ in splits(before, catalog | tokens_of_markdown(before))}
        for wanted in ("p5.48xlarge", "aws-p5-48xlarge", "p5en.48xlarge"):
            if wanted not in caught:
                fail(f"the check misses the split {wanted} in the fixture (caught: {sorted(caught)})")

        reports = [("report", f, ["report", str(f), "-o"]) for f in sorted((src / "scenarios/examples").glob("*.yaml"))]
        reports += [("plan", f, ["plan", str(f), "--report"]) for f in sorted((src / "scenarios/clusters").glob("*.yaml"))]
        checked = 0
        problems = []
        for kind, scenario, args in reports:
            name = f"{kind}-{scenario.stem}"
            capsim_run(*args, str(work / f"{name}.pdf"))
            capsim_run(*args, str(work / f"{name}.md"))
            text = pdf_text(work / f"{name}.pdf")
            markdown = (work / f"{name}.md").read_text(encoding="utf-8")
            identifiers = tokens_of_markdown(markdown) | {c for c in catalog if c in markdown}
            for ident, where in splits(text, identifiers):
                problems.append(f"{name}.pdf: {ident} split as {where}")
            flat = text.replace("\n", " ")
            for ident in sorted(identifiers):
                if ident not in flat:
                    problems.append(f"{name}.pdf: {ident} (in the Markdown report) is not in the PDF whole")
            checked += len(identifiers)
            # Negative control 2: the same text with its longest standalone identifier broken
            # by hand is caught.
            standalone = sorted(i for i in identifiers if re.search(BEFORE + re.escape(i) + AFTER, text))
            ident = max(standalone, key=len, default=None)
            if ident is None:
                fail(f"{name}.pdf: no identifier of the plan found in its text")
            half = len(ident) // 2
            broken = re.sub(BEFORE + re.escape(ident) + AFTER, lambda _: ident[:half] + "\n" + ident[half:], text, count=1)
            if ident not in {i for i, _ in splits(broken, {ident})}:
                fail(f"{name}.pdf: the check misses {ident} broken by hand")
        if problems:
            fail(f"{len(problems)} identifiers split or missing in the PDF reports:\n  " + "\n  ".join(problems))
        if len(reports) < 20 or checked < 500:
            fail(f"too little checked: {len(reports)} reports, {checked} identifiers")
        print(f"pdf_words_test: {len(reports)} PDF reports, {checked} identifiers, none split")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
