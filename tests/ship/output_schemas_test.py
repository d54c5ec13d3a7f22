#!/usr/bin/env python3
"""Issue 53: every JSON output of every shipped example validates against its published schema.

    output_schemas_test.py CAPSIM SOURCE_DIR

For each output schema (`capsim schema --output list`): the schema is a valid draft 2020-12
schema and equals docs/output-schemas/NAME.schema.json. Then every shipped example
(scenarios/examples/*.yaml) goes through run, size, simulate, cost, estimate and compare with
--format json, every cluster (scenarios/clusters/*.yaml) through plan, and the validation
corpus through accuracy (plus `size --fabric simgrid` and `history show` of a stored run);
the other commands that print JSON go through their own inputs: memory (the rules, a preset, a
shape, inference), models, validate (every example and cluster, and an invalid scenario),
history list and diff (stored runs), catalog list (the summary and every section), catalog show
(the first entry of every section, and a GPU with an imported calibration profile), catalog
check and catalog validate, catalog import-calibration and import-skypilot (the test fixtures), and sweeps (run --sweep, whole, sharded
and with a failing point, and history merge of the shards; each point's run against run's
schema). Each document that a command prints (exit 0, or the exit code it
documents: 1 for stale prices, 2 for an invalid scenario) must validate against
its schema with python3-jsonschema (Debian's). A command that does not apply to a scenario
exits 2 and prints no JSON. Negative controls: each kind of document with a required key
removed, an unknown key added, or a value of the wrong type must fail, at the top and inside
shared parts. Exit 77 (skipped) when python3-jsonschema is not installed.
"""
import concurrent.futures
import copy
import json
import os
import pathlib
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("output_schemas_test: python3-jsonschema missing (Debian: python3-jsonschema; ./setup.sh test installs it)")
    sys.exit(77)

capsim, src = sys.argv[1], pathlib.Path(sys.argv[2])
failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def capsim_run(args, env):
    return subprocess.run([capsim] + args, capture_output=True, text=True, env=env, cwd=src)


with tempfile.TemporaryDirectory(prefix="capsim-output-schemas-") as scratch:
    env = dict(os.environ, CAPSIM_DB=os.path.join(scratch, "capsim.db"))

    # The schemas: listed, valid, and what the docs ship.
    listed = capsim_run(["schema", "--output", "list"], env)
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    validators = {}
    for name in names:
        printed = capsim_run(["schema", "--output", name], env)
        if printed.returncode != 0:
            fail(f"capsim schema --output {name}: exit {printed.returncode}: {printed.stderr}")
            continue
        shipped = src / "docs" / "output-schemas" / f"{name}.schema.json"
        if not shipped.exists() or shipped.read_text() != printed.stdout:
            fail(f"{shipped} is not what `capsim schema --output {name}` prints (regenerate it)")
        schema = json.loads(printed.stdout)
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[name] = jsonschema.Draft202012Validator(schema)
    for name in ("run", "size", "simulate", "cost", "plan", "accuracy", "compare", "estimate", "memory", "models",
                 "validate", "history-list", "history-diff", "catalog-list", "catalog-show", "catalog-check",
                 "catalog-validate", "catalog-import-calibration", "catalog-import-skypilot", "sweep"):
        if name not in validators:
            fail(f"no output schema '{name}'")
    # A name that is not an output: exit 2, the usual error with a "did you mean".
    typo = capsim_run(["schema", "--output", "rnu"], env)
    if typo.returncode != 2 or typo.stderr != "error: --output: no output schema named 'rnu' (did you mean 'run'?)\n":
        fail(f"capsim schema --output rnu: exit {typo.returncode}, {typo.stderr!r}")
    if failures:
        sys.exit(1)

    # Every document every command prints on every shipped input.
    jobs = []
    for example in sorted((src / "scenarios" / "examples").glob("*.yaml")):
        rel = str(example.relative_to(src))
        jobs.append(("run", ["run", "--no-history", "--format", "json", rel]))
        for command in ("size", "simulate", "cost", "estimate", "compare"):
            jobs.append((command, [command, "--format", "json", rel]))
    for cluster in sorted((src / "scenarios" / "clusters").glob("*.yaml")):
        jobs.append(("plan", ["plan", "--format", "json", str(cluster.relative_to(src))]))
    jobs.append(("accuracy", ["accuracy", "--format", "json"]))
    # The keys only some options add: the SimGrid fabric's figures beside the analytic ones.
    jobs.append(("size", ["size", "--fabric", "simgrid", "--format", "json", "scenarios/examples/lora-7b-one-node.yaml"]))
    # The commands that take no scenario (their exit codes other than 0 are in `documented`).
    for memory in (["--params", "7B", "--mode", "train"], ["--params", "70B", "--mode", "infer"],
                   ["--model", "llama-3.1-405b", "--tp", "8", "--pp", "16", "--dp", "64", "--sp", "--seq-len", "8192",
                    "--zero", "1"],
                   ["--model", "llama-2-70b", "--mode", "infer", "--tp", "4", "--batch", "8", "--context", "4096"],
                   ["--model", "mixtral-8x7b", "--ep", "8", "--fine-tuning", "lora"],
                   ["--layers", "32", "--hidden", "4096", "--heads", "32", "--vocab", "32000", "--seq-len", "4096",
                    "--attention", "eager"]):
        jobs.append(("memory", ["memory", "--format", "json"] + memory))
    jobs.append(("models", ["models", "--format", "json"]))
    every_input = [str(p.relative_to(src)) for d in ("examples", "clusters")
                   for p in sorted((src / "scenarios" / d).glob("*.yaml"))]
    jobs.append(("validate", ["validate", "--format", "json"] + every_input))
    invalid = os.path.join(scratch, "invalid.yaml")
    with open(invalid, "w") as f:
        f.write("name: invalid\nworkload:\n  kind: trainng\n")
    jobs.append(("validate", ["validate", "--format", "json", invalid, "scenarios/examples/lora-7b-one-node.yaml"]))
    jobs.append(("catalog-list", ["catalog", "list", "--format", "json"]))
    sections = json.loads(capsim_run(["catalog", "list", "--format", "json"], env).stdout)
    for section in sections:
        jobs.append(("catalog-list", ["catalog", "list", section, "--format", "json"]))
    jobs.append(("catalog-list", ["catalog", "list", "gpus", "--where", "memory>=80 GB", "--sort", "memory_bandwidth",
                                  "--desc", "--format", "json"]))
    for section in sections:  # the first entry of every section
        first = json.loads(capsim_run(["catalog", "list", section, "--format", "json"], env).stdout)
        if first:
            jobs.append(("catalog-show", ["catalog", "show", first[0]["id"], "--format", "json"]))
    jobs.append(("catalog-show", ["catalog", "show", "aws-p5-48xlarge", "--format", "json"]))
    jobs.append(("catalog-check", ["catalog", "check", "--format", "json"]))
    jobs.append(("catalog-check", ["catalog", "check", "--max-age", "1mo", "--format", "json"]))  # stale rows for sure
    jobs.append(("catalog-validate", ["catalog", "validate", "--format", "json"]))
    jobs.append(("catalog-import-skypilot", ["catalog", "import-skypilot", "tests/hardware/fixtures/skypilot", "--commit",
                                             "0" * 40, "-o", os.path.join(scratch, "skypilot.yaml"), "--format", "json"]))
    jobs.append(("catalog-validate", ["catalog", "validate", "data/catalog/gpus.yaml", "--format", "json"]))
    # The exit codes a command documents beside 0, with JSON still printed.
    documented = {("validate", invalid): 2, ("catalog-check", "--format"): (0, 1), ("sweep", "hardware.max_gpus=0,8"): 2}

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda job: (job, capsim_run(job[1], env)), jobs))

    # A stored run, shown again: `history show --format json` prints the run's document.
    stored = capsim_run(["run", "scenarios/examples/lora-7b-one-node.yaml"], env)
    if stored.returncode != 0:
        fail(f"capsim run (stored in the history): exit {stored.returncode}: {stored.stderr}")
    results.append((("run", ["history", "show", "1", "--format", "json"]),
                    capsim_run(["history", "show", "1", "--format", "json"], env)))
    # A second stored run, listed and compared with the first; and a calibration profile, so that
    # catalog show of its GPU has "measured".
    stored = capsim_run(["run", "scenarios/examples/llama-70b-pretrain.yaml"], env)
    if stored.returncode != 0:
        fail(f"capsim run (a second run in the history): exit {stored.returncode}: {stored.stderr}")
    for name, args in [("history-list", ["history", "list", "--format", "json"]),
                       ("history-list", ["history", "list", "--scenario", "lora-7b-one-node", "--format", "json"]),
                       ("history-diff", ["history", "diff", "1", "2", "--format", "json"]),
                       ("history-diff", ["history", "diff", "1", "1", "--format", "json"])]:
        results.append(((name, args), capsim_run(args, env)))
    args = ["catalog", "import-calibration", "data/calibration/h100-sxm-80gb-2026-11-26.json", "--format", "json"]
    results.append((("catalog-import-calibration", args), capsim_run(args, env)))
    # Sweeps: whole (one point fails: max_gpus 0 is bad input), and in two shards merged.
    lora = "scenarios/examples/lora-7b-one-node.yaml"
    sweep = "hardware.max_gpus=1,8"
    for args in (["run", lora, "--sweep", "hardware.max_gpus=0,8", "--jobs", "2", "--format", "json"],
                 ["run", lora, "--sweep", sweep, "--jobs", "2", "--format", "json"]):
        results.append((("sweep", args), capsim_run(args, env)))
    shards = [os.path.join(scratch, f"shard-{i}.db") for i in range(2)]
    for i, shard in enumerate(shards):
        args = ["--db", shard, "run", lora, "--sweep", sweep, "--shard", f"{i}/2", "--jobs", "1", "--format", "json"]
        results.append((("sweep", args), capsim_run(args, env)))
    args = ["--db", os.path.join(scratch, "merged.db"), "history", "merge"] + shards + ["--format", "json"]
    results.append((("sweep", args), capsim_run(args, env)))
    args = ["catalog", "show", "h100-sxm-80gb", "--format", "json"]
    results.append((("catalog-show", args), capsim_run(args, env)))

    validated = {name: 0 for name in validators}
    samples = {}
    for (name, args), result in results:
        what = "capsim " + " ".join(args)
        allowed = next((codes for (n, arg), codes in documented.items() if n == name and arg in args), 0)
        allowed = allowed if isinstance(allowed, tuple) else (allowed,)
        if name not in ("run", "size", "simulate", "cost", "plan", "accuracy", "compare", "estimate"):
            if result.returncode not in allowed:
                fail(f"{what}: exit {result.returncode} (expected {allowed}): {result.stderr.strip()}")
                continue
        elif result.returncode == 2 and name not in ("run", "size", "plan", "accuracy"):
            continue  # the command does not apply to this scenario (no cost: section, ...)
        elif result.returncode != 0:
            fail(f"{what}: exit {result.returncode}: {result.stderr.strip()}")
            continue
        document = json.loads(result.stdout)
        errors = sorted(validators[name].iter_errors(document), key=lambda e: list(e.absolute_path))
        for error in errors[:3]:
            path = "/".join(str(p) for p in error.absolute_path)
            fail(f"{what}: /{path}: {error.message[:300]}")
        validated[name] += 1
        samples.setdefault(name, []).append(document)
        if name == "sweep":  # each point's run is a run document
            for point in document["points"]:
                if point["run"] is not None:
                    for error in list(validators["run"].iter_errors(point["run"]))[:3]:
                        fail(f"{what}: point {point['point']}: /{'/'.join(map(str, error.absolute_path))}: {error.message[:300]}")
    failed_points = [p for d in samples.get("sweep", []) for p in d["points"] if p["run"] is None and p["error"]]
    if not failed_points:
        fail("sweep: no failing point (run null, error text) was validated")
    examples = len(list((src / "scenarios" / "examples").glob("*.yaml")))
    print("validated: " + ", ".join(f"{n} {c}" for n, c in validated.items()))
    # run and size apply to every example; the others to some (a cost: section, a deployment, ...).
    for name, expected in (("run", examples + 1), ("size", examples + 1)):
        if validated[name] != expected:
            fail(f"{name}: {validated[name]} documents validated, expected {expected}")
    for name, count in validated.items():
        if count == 0:
            fail(f"{name}: no shipped input produced a document to validate")

    # Negative controls: a document that is not what the writer prints must fail.
    def must_fail(name, document, how):
        if validators[name].is_valid(document):
            fail(f"negative control passed validation: {name} with {how}")

    for name, documents in samples.items():
        for document in documents[:3]:
            if not isinstance(document, dict):
                continue  # models, catalog list SECTION: arrays, their controls are below
            required = validators[name].schema.get("required", [])
            for key in required:
                broken = copy.deepcopy(document)
                del broken[key]
                must_fail(name, broken, f"'{key}' removed")
            broken = copy.deepcopy(document)
            broken["renamed_key"] = 1
            must_fail(name, broken, "an unknown top-level key")
            broken = copy.deepcopy(document)
            broken["schema"] = 1
            must_fail(name, broken, "schema a number")
    # Inside shared parts, where the schema closes a $ref'd part with unevaluatedProperties.
    run = next(d for d in samples["run"] if "sizing" in d)
    for how, change in [
        ("plan.gpus removed", lambda d: d["plan"].pop("gpus")),
        ("plan.time_seconds a string", lambda d: d["plan"].__setitem__("time_seconds", "1 h")),
        ("plan.node_pools[0] with a renamed key", lambda d: d["plan"]["node_pools"][0].__setitem__("gpu_per_node", 8)),
        ("sizing.frontier removed", lambda d: d["sizing"].pop("frontier")),
        ("sizing.recommended.reason removed", lambda d: d["sizing"]["recommended"].pop("reason")),
        ("sizing.recommended with an unknown key", lambda d: d["sizing"]["recommended"].__setitem__("cost_usd", 1.0)),
        ("sizing with an unknown key", lambda d: d["sizing"].__setitem__("recomended", {})),
        ("sizing.frontier[0].gpus a string", lambda d: d["sizing"]["frontier"][0].__setitem__("gpus", "8")),
        ("measurements value a string", lambda d: next(iter(d["measurements"].values())).__setitem__("value", "1")),
        ("expectations[0].passed removed", lambda d: d["expectations"][0].pop("passed")),
        ("status not a status", lambda d: d.__setitem__("status", "ok")),
    ]:
        broken = copy.deepcopy(run)
        change(broken)
        must_fail("run", broken, how)
    serving = next(d for d in samples["run"] if "serving_simulation" in d)
    for how, change in [
        ("serving_simulation.node removed", lambda d: d["serving_simulation"].pop("node")),
        ("serving_simulation with an unknown key", lambda d: d["serving_simulation"].__setitem__("nodes", 1)),
    ]:
        broken = copy.deepcopy(serving)
        change(broken)
        must_fail("run", broken, how)
    cost = samples["cost"][0]
    broken = copy.deepcopy(cost)
    broken["options"][0]["total"] = "12 USD" if "total" in broken["options"][0] else None
    broken["options"][0].setdefault("totl", 1)
    must_fail("cost", broken, "options[0] changed")
    plan = samples["plan"][0]
    broken = copy.deepcopy(plan)
    broken["pools"][0].pop(next(iter(broken["pools"][0])))
    must_fail("plan", broken, "pools[0] with its first key removed")
    accuracy = samples["accuracy"][0]
    broken = copy.deepcopy(accuracy)
    broken["rows"][0]["error_percent" if "error_percent" in broken["rows"][0] else "id"] = "12 %"
    must_fail("accuracy", broken, "rows[0] with a number as text")

    # The other commands' documents, inside their objects and arrays.
    def controls(name, pick, changes):
        document = next((d for d in samples.get(name, []) if pick(d)), None)
        if document is None:
            fail(f"{name}: no document to break")
            return
        for how, change in changes:
            broken = copy.deepcopy(document)
            change(broken)
            must_fail(name, broken, how)

    controls("memory", lambda d: d["model"] is not None, [
        ("components.kv_cache removed", lambda d: d["components"].pop("kv_cache")),
        ("components with an unknown key", lambda d: d["components"].__setitem__("lora", 1.0)),
        ("total_bytes as text", lambda d: d.__setitem__("total_bytes", "79 GB")),
        ("rule not a rule", lambda d: d.__setitem__("rule", "exact")),
        ("formulas[0] a number", lambda d: d["formulas"].__setitem__(0, 1)),
    ])
    controls("models", lambda d: len(d) > 1, [
        ("an id a number", lambda d: d.__setitem__(0, 7)),
        ("an id twice", lambda d: d.append(d[0])),
        ("an object in the list", lambda d: d.append({"id": "x"})),
    ])
    controls("validate", lambda d: not d["valid"], [
        ("errors removed", lambda d: d.pop("errors")),
        ("valid as text", lambda d: d.__setitem__("valid", "false")),
        ("errors a list", lambda d: d.__setitem__("errors", ["workload.kind"])),
    ])
    if not any(d["valid"] for d in samples.get("validate", [])) or not any(
            not d["valid"] and d["errors"] > 0 for d in samples.get("validate", [])):
        fail("validate: expected both a valid run (every example and cluster) and an invalid one with errors")
    controls("history-list", lambda d: len(d["runs"]) > 1, [
        ("runs[0].sweep removed", lambda d: d["runs"][0].pop("sweep")),
        ("runs[0] with an unknown key", lambda d: d["runs"][0].__setitem__("wall_seconds", 1)),
        ("runs[1].id as text", lambda d: d["runs"][1].__setitem__("id", "1")),
    ])
    controls("history-diff", lambda d: d["outputs"], [
        ("a.id removed", lambda d: d["a"].pop("id")),
        ("b with an unknown key", lambda d: d["b"].__setitem__("sweep", "")),
        ("outputs[0].before an object", lambda d: d["outputs"][0].__setitem__("before", {"value": 1})),
        ("outputs[0] with an unknown key", lambda d: d["outputs"][0].__setitem__("unit", "s")),
        ("inputs[0] a number", lambda d: d["inputs"].__setitem__(0, 1) if d["inputs"] else d["inputs"].append(1)),
    ])
    controls("catalog-list", lambda d: isinstance(d, dict), [
        ("gpus removed", lambda d: d.pop("gpus")),
        ("an unknown section", lambda d: d.__setitem__("tpus", 1)),
        ("a count as text", lambda d: d.__setitem__("cpus", "8")),
    ])
    def first_field(d, test):
        entity = next(e for e in d if any(test(v) for v in e["fields"].values()))
        return entity["fields"], next(k for k, v in entity["fields"].items() if test(v))
    quantity = lambda v: isinstance(v, dict) and "unit" in v
    controls("catalog-list", lambda d: isinstance(d, list) and d and d[0]["kind"] == "gpu", [
        ("[0].kind a section name", lambda d: d[0].__setitem__("kind", "gpus")),
        ("[0] with an unknown key", lambda d: d[0].__setitem__("notes", "")),
        ("[0].id removed", lambda d: d[0].pop("id")),
        ("a quantity without its unit", lambda d: (lambda f, k: f[k].pop("unit"))(*first_field(d, quantity))),
        ("a quantity's value as text", lambda d: (lambda f, k: f[k].__setitem__("value", "80 GB"))(*first_field(d, quantity))),
        ("a quantity with source but no as_of", lambda d: (lambda f, k: f[k].pop("as_of"))(*first_field(d, quantity))),
        ("a field a bare number", lambda d: (lambda f, k: f.__setitem__(k, 80e9))(*first_field(d, quantity))),
    ])
    controls("catalog-show", lambda d: "measured" in d, [
        ("measured.figures[0].measured removed", lambda d: d["measured"]["figures"][0].pop("measured")),
        ("measured with an unknown key", lambda d: d["measured"].__setitem__("profile_id", 1)),
        ("measured.synthetic as text", lambda d: d["measured"].__setitem__("synthetic", "no")),
        ("fields removed", lambda d: d.pop("fields")),
    ])
    controls("catalog-check", lambda d: d["stale"], [
        ("stale[0].age_months as text", lambda d: d["stale"][0].__setitem__("age_months", "12 months")),
        ("stale[0] with an unknown key", lambda d: d["stale"][0].__setitem__("currency", "USD")),
        ("stale[0].your_quote removed", lambda d: d["stale"][0].pop("your_quote")),
    ])
    controls("catalog-import-calibration", lambda d: True, [
        ("profile_id as text", lambda d: d.__setitem__("profile_id", "1")),
        ("gemm_curves removed", lambda d: d.pop("gemm_curves")),
    ])
    controls("sweep", lambda d: "shard" in d and d["shard"] is None, [
        ("points[0].exit_code removed", lambda d: d["points"][0].pop("exit_code")),
        ("points[0] with an unknown key", lambda d: d["points"][0].__setitem__("label", "x")),
        ("points[0].run a string", lambda d: d["points"][0].__setitem__("run", "{}")),
        ("shard and merged_runs both", lambda d: d.__setitem__("merged_runs", 2)),
        ("shard not I/N", lambda d: d.__setitem__("shard", "first")),
    ])
    controls("sweep", lambda d: "merged_runs" in d, [
        ("shard_databases removed", lambda d: d.pop("shard_databases")),
        ("merged_runs as text", lambda d: d.__setitem__("merged_runs", "2")),
    ])
    controls("catalog-import-skypilot", lambda d: d["refused"], [
        ("refused[0].line as text", lambda d: d["refused"][0].__setitem__("line", "13")),
        ("refused[0] with an unknown key", lambda d: d["refused"][0].__setitem__("column", 1)),
        ("clouds a string", lambda d: d.__setitem__("clouds", "aws")),
    ])
    controls("catalog-validate", lambda d: True, [
        ("valid false", lambda d: d.__setitem__("valid", False)),
        ("entries as text", lambda d: d.__setitem__("entries", "219")),
    ])

if failures:
    print(f"output_schemas_test: {len(failures)} failures", file=sys.stderr)
    sys.exit(1)
print("output_schemas_test: ok")
