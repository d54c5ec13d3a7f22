#!/usr/bin/env python3
"""Issue 53: every JSON output of every shipped example validates against its published schema.

    output_schemas_test.py CAPSIM SOURCE_DIR

For each output schema (`capsim schema --output list`): the schema is a valid draft 2020-12
schema and equals docs/output-schemas/NAME.schema.json. Then every shipped example
(scenarios/examples/*.yaml) goes through run, size, simulate, cost, estimate and compare with
--format json, every cluster (scenarios/clusters/*.yaml) through plan, and the validation
corpus through accuracy (plus `size --fabric simgrid` and `history show` of a stored run);
each document that a command prints (exit 0) must validate against
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
    for name in ("run", "size", "simulate", "cost", "plan", "accuracy", "compare", "estimate"):
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

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda job: (job, capsim_run(job[1], env)), jobs))

    # A stored run, shown again: `history show --format json` prints the run's document.
    stored = capsim_run(["run", "scenarios/examples/lora-7b-one-node.yaml"], env)
    if stored.returncode != 0:
        fail(f"capsim run (stored in the history): exit {stored.returncode}: {stored.stderr}")
    results.append((("run", ["history", "show", "1", "--format", "json"]),
                    capsim_run(["history", "show", "1", "--format", "json"], env)))

    validated = {name: 0 for name in validators}
    samples = {}
    for (name, args), result in results:
        what = "capsim " + " ".join(args)
        if result.returncode == 2 and name not in ("run", "size", "plan", "accuracy"):
            continue  # the command does not apply to this scenario (no cost: section, ...)
        if result.returncode != 0:
            fail(f"{what}: exit {result.returncode}: {result.stderr.strip()}")
            continue
        document = json.loads(result.stdout)
        errors = sorted(validators[name].iter_errors(document), key=lambda e: list(e.absolute_path))
        for error in errors[:3]:
            path = "/".join(str(p) for p in error.absolute_path)
            fail(f"{what}: /{path}: {error.message[:300]}")
        validated[name] += 1
        samples.setdefault(name, []).append(document)
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

if failures:
    print(f"output_schemas_test: {len(failures)} failures", file=sys.stderr)
    sys.exit(1)
print("output_schemas_test: ok")
