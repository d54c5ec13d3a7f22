// GKE and Terraform node-pool exports checked against what their tools accept: shared by
// validate_exports.mjs (one scenario's pools) and validate_cluster_exports.mjs (a cluster
// plan's pools).
//   terraform: JSON against schemas/google_container_node_pool.schema.json (ajv).
//   eks: JSON against schemas/aws_eks_node_group.schema.json (ajv), then what the schema cannot
//     say: min_size <= desired_size <= max_size, and every ${var.NAME} declared under variable.
//   gke: the script parsed as sh (sh -n, shellcheck when installed), each gcloud command's
//     flags and values against schemas/gcloud_node_pools_create.json.
// Each validator appends "WHERE: problem" lines to `problems`.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

// The npm packages the validators use, installed by ./setup.sh test in NPM_DIR/node_modules:
// load(rel) imports one. Exits 77 (ctest: skipped) when they are missing or do not load on
// this node (they declare node >= 22; Debian bookworm ships 18): an environment problem,
// not an export bug.
export function npmLoader(npmDir) {
  const modules = path.join(npmDir, "node_modules");
  if (!fs.existsSync(path.join(modules, "kubernetes-models"))) {
    console.log(`SKIP: the validators are not installed in ${modules} (./setup.sh test installs them with npm ci)`);
    process.exit(77);
  }
  return async (rel) => {
    try {
      return await import(pathToFileURL(path.join(modules, rel)).href);
    } catch (e) {
      console.log(`SKIP: cannot load ${rel} on node ${process.version}: ${e.message}`);
      process.exit(77);
    }
  };
}

// Ajv: the ajv constructor (from the npm packages); here: this folder; qualifiedName: the
// Kubernetes qualified-name rule (taint keys).
export function nodePoolValidators({ Ajv, here, qualifiedName }) {
  const terraformSchema = JSON.parse(fs.readFileSync(path.join(here, "schemas/google_container_node_pool.schema.json")));
  const validateTerraform = new Ajv({ allErrors: true, strict: false }).compile(terraformSchema);
  const gcloud = JSON.parse(fs.readFileSync(path.join(here, "schemas/gcloud_node_pools_create.json")));
  const eksSchema = JSON.parse(fs.readFileSync(path.join(here, "schemas/aws_eks_node_group.schema.json")));
  const validateEks = new Ajv({ allErrors: true, strict: false }).compile(eksSchema);

  function validateEksText(text, where, problems) {
    let j;
    try {
      j = JSON.parse(text);
    } catch (e) {
      return problems.push(`${where}: not JSON: ${e.message}`);
    }
    if (!validateEks(j)) {
      for (const e of validateEks.errors) problems.push(`${where}: ${e.instancePath || "/"} ${e.message}`);
      return;
    }
    for (const [name, g] of Object.entries(j.resource.aws_eks_node_group)) {
      const s = g.scaling_config;
      if (!(s.min_size <= s.desired_size && s.desired_size <= s.max_size))
        problems.push(`${where}: ${name}: scaling_config needs min_size <= desired_size <= max_size, got ${JSON.stringify(s)}`);
      for (const [k, v] of Object.entries(g.labels ?? {}))
        if (!qualifiedName(k) || v.length > 63) problems.push(`${where}: ${name}: label ${k}=${v} is no Kubernetes label`);
      for (const t of g.taint ?? []) if (!qualifiedName(t.key)) problems.push(`${where}: ${name}: taint key ${t.key} is no qualified name`);
      for (const m of JSON.stringify(g).matchAll(/\$\{var\.([A-Za-z0-9_-]+)\}/g))
        if (!(j.variable ?? {})[m[1]]) problems.push(`${where}: ${name}: var.${m[1]} is not declared`);
      // A launch template the group names must be one the file declares, by its id (or name)
      // and a version attribute Terraform exports (id, latest_version).
      for (const m of JSON.stringify(g).matchAll(/\$\{aws_launch_template\.([A-Za-z0-9_-]+)\.([a-z_]+)\}/g)) {
        if (!(j.resource.aws_launch_template ?? {})[m[1]]) problems.push(`${where}: ${name}: aws_launch_template.${m[1]} is not declared`);
        if (!["id", "name", "latest_version", "default_version"].includes(m[2]))
          problems.push(`${where}: ${name}: aws_launch_template has no attribute ${m[2]}`);
      }
    }
    // EFA interfaces as the EC2 User Guide lays them out: one per network card, the primary on
    // card 0 at device index 0, every other at device index 1.
    for (const [name, t] of Object.entries(j.resource.aws_launch_template ?? {})) {
      for (const m of JSON.stringify(t).matchAll(/\$\{var\.([A-Za-z0-9_-]+)\}/g))
        if (!(j.variable ?? {})[m[1]]) problems.push(`${where}: launch template ${name}: var.${m[1]} is not declared`);
      const cards = new Set();
      for (const n of t.network_interfaces ?? []) {
        if (cards.has(n.network_card_index)) problems.push(`${where}: launch template ${name}: two interfaces on network card ${n.network_card_index}`);
        cards.add(n.network_card_index);
        if (n.device_index !== (n.network_card_index === 0 ? 0 : 1))
          problems.push(`${where}: launch template ${name}: network card ${n.network_card_index} at device index ${n.device_index}`);
      }
    }
  }

  function validateTerraformText(text, where, problems) {
    let j;
    try {
      j = JSON.parse(text);
    } catch (e) {
      return problems.push(`${where}: not JSON: ${e.message}`);
    }
    if (!validateTerraform(j))
      for (const e of validateTerraform.errors) problems.push(`${where}: ${e.instancePath || "/"} ${e.message}`);
  }

  function validateGke(text, where, problems) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "capsim-gke-"));
    const file = path.join(dir, "pools.sh");
    fs.writeFileSync(file, text);
    const sh = spawnSync("sh", ["-n", file], { encoding: "utf8" });
    if (sh.status !== 0) problems.push(`${where}: sh -n: ${sh.stderr.trim()}`);
    const check = spawnSync("shellcheck", ["-s", "sh", file], { encoding: "utf8" });
    if (!check.error && check.status !== 0) problems.push(`${where}: shellcheck: ${check.stdout.trim()}`);
    fs.rmSync(dir, { recursive: true, force: true });
    const commands = text.replace(/\\\n/g, " ").split("\n").filter((l) => l.startsWith("gcloud "));
    if (commands.length === 0) problems.push(`${where}: no gcloud command`);
    for (const c of commands) {
      const words = c.trim().split(/\s+/);
      const head = words.slice(0, 5).join(" ");
      if (head !== "gcloud container node-pools create" + " " + words[4] || !/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(words[4]))
        problems.push(`${where}: '${head}' is not gcloud container node-pools create NAME`);
      const seen = new Map();
      for (const w of words.slice(5)) {
        const [flag, ...rest] = w.split("=");
        const value = rest.join("=");
        const kind = gcloud.flags[flag];
        if (kind === undefined) {
          problems.push(`${where}: ${flag}: not a flag of gcloud container node-pools create`);
          continue;
        }
        seen.set(flag, value);
        if (kind === "switch" && value !== "") problems.push(`${where}: ${flag} takes no value`);
        if (kind === "integer" && !/^[0-9]+$/.test(value)) problems.push(`${where}: ${flag}=${value}: not a count`);
        if (kind === "value" && value === "") problems.push(`${where}: ${flag} needs a value`);
        if (Array.isArray(kind) && !kind.includes(value)) problems.push(`${where}: ${flag}=${value}: not one of ${kind}`);
      }
      for (const required of ["--cluster", "--machine-type"])
        if (!seen.has(required)) problems.push(`${where}: ${required} missing`);
      if (!seen.has("--location") && !seen.has("--zone") && !seen.has("--region")) problems.push(`${where}: no location`);
      for (const [a, b] of gcloud.exclusive)
        if (seen.has(a) && seen.has(b)) problems.push(`${where}: ${a} and ${b} cannot be given together`);
      for (const f of gcloud.need_autoscaling)
        if (seen.has(f) && !seen.has("--enable-autoscaling")) problems.push(`${where}: ${f} needs --enable-autoscaling`);
      if (seen.has("--accelerator"))
        for (const kv of seen.get("--accelerator").split(",")) {
          const [k, v] = kv.split("=");
          const kind = gcloud.accelerator_keys[k];
          if (kind === undefined) problems.push(`${where}: --accelerator key '${k}' is not gcloud's`);
          else if (kind === "integer" && !/^[1-9][0-9]*$/.test(v)) problems.push(`${where}: --accelerator ${k}=${v}`);
          else if (Array.isArray(kind) && !kind.includes(v)) problems.push(`${where}: --accelerator ${k}=${v}: not one of ${kind}`);
        }
      if (seen.has("--node-taints"))
        for (const t of seen.get("--node-taints").split(",")) {
          const m = /^([^=]+)=([^:]*):(.+)$/.exec(t);
          if (!m || !qualifiedName(m[1]) || !gcloud.taint_effects.includes(m[3]))
            problems.push(`${where}: --node-taints ${t}: not KEY=VALUE:EFFECT`);
        }
    }
  }

  return { validateTerraformText, validateGke, validateEksText };
}
