#!/usr/bin/env python3
"""Writes the openAPIV3Schema of one version of a published CustomResourceDefinition as a
JSON Schema file for tests/exports/validate_cluster_exports.mjs (ajv).

  crd_to_schema.py CRD.yaml VERSION OUT.json "REPOSITORY PATH COMMIT"

The schema is the CRD's own, unchanged but for its "description" texts, which are dropped
(they are documentation; the JobSet schema is 365 kB with them, 80 kB without). A "$comment"
names where it came from. See tests/exports/schemas/README.md for the sources and licence.
"""
import json
import sys

import yaml


def without_descriptions(node):
    if isinstance(node, dict):
        return {k: without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    return node


def main():
    crd_path, version, out_path, source = sys.argv[1:5]
    with open(crd_path, encoding="utf-8") as f:
        crd = yaml.safe_load(f)
    versions = [v for v in crd["spec"]["versions"] if v["name"] == version]
    if len(versions) != 1:
        sys.exit(f"{crd_path}: no version {version}")
    schema = without_descriptions(versions[0]["schema"]["openAPIV3Schema"])
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    out = {
        "$comment": f"openAPIV3Schema of {group}/{version} {kind} from the CustomResourceDefinition "
        f"{source} (Apache License 2.0), description texts removed; written by crd_to_schema.py",
        **schema,
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
