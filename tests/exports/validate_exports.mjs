// Issue 21: exports that real tools accept. Every shipped example x every export target either
// succeeds and validates, or is refused with one of the documented refusals (docs/exports.md).
//
//   node validate_exports.mjs CAPSIM EXAMPLES_DIR DOCS_EXPORTS_MD NPM_DIR
//
// Validation, per target:
//   k8s, karpenter (and the sweep manifest): each YAML document against the published schemas
//     of its kind (npm kubernetes-models: Kubernetes' OpenAPI for batch/v1 Job, apps/v1
//     Deployment, v1 ConfigMap and PersistentVolumeClaim; the LeaderWorkerSet CRD's schema
//     in schemas/ for leaderworkerset.x-k8s.io/v1 (ajv); @kubernetes-models/karpenter:
//     Karpenter's CRDs for karpenter.sh/v1 NodePool and karpenter.k8s.aws/v1 EC2NodeClass),
//     then the API server's own rules the schemas leave out (names, label keys and values,
//     container images, resource names and quantities, selectors that match, references).
//   terraform: JSON against schemas/google_container_node_pool.schema.json (ajv).
//   eks: JSON against schemas/aws_eks_node_group.schema.json (ajv) and the scaling bounds.
//   gke: the script parsed as sh (sh -n, shellcheck when installed), each gcloud command's
//     flags and values against schemas/gcloud_node_pools_create.json.
// The outcome table in docs/exports.md (between its "export-matrix" markers) must equal what
// this run finds; CAPSIM_UPDATE_GOLDEN=1 rewrites it. Exit 0: all as documented; 1: not; 77:
// the npm packages are not installed (ctest reports the test as skipped).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { containerRules, dns1123Label, dns1123Subdomain, labelValue, qualifiedName, quantity, strict } from "./k8s_rules.mjs";
import { nodePoolValidators, npmLoader } from "./node_pool_validators.mjs";

const [capsim, examplesDir, docPath, npmDir] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const load = npmLoader(npmDir);
const models = {
  "batch/v1 Job": (await load("kubernetes-models/batch/v1/Job.js")).Job,
  "apps/v1 Deployment": (await load("kubernetes-models/apps/v1/Deployment.js")).Deployment,
  "v1 ConfigMap": (await load("kubernetes-models/v1/ConfigMap.js")).ConfigMap,
  "v1 PersistentVolumeClaim": (await load("kubernetes-models/v1/PersistentVolumeClaim.js")).PersistentVolumeClaim,
  "karpenter.sh/v1 NodePool": (await load("@kubernetes-models/karpenter/karpenter.sh/v1/NodePool.js")).NodePool,
  "karpenter.k8s.aws/v1 EC2NodeClass": (await load("@kubernetes-models/karpenter/karpenter.k8s.aws/v1/EC2NodeClass.js"))
    .EC2NodeClass,
};
const YAML = (await load("yaml/dist/index.js")).default;
const Ajv = (await load("ajv/dist/ajv.js")).default;
// A serving replica that spans nodes exports as a LeaderWorkerSet: its published CRD schema
// (schemas/README.md), strict as the API server's field validation.
const lwsSchema = JSON.parse(fs.readFileSync(path.join(here, "schemas", "leaderworkerset.x-k8s.io_v1_leaderworkerset.schema.json")));
delete lwsSchema.$comment;
const validateLws = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(strict(lwsSchema));
models["leaderworkerset.x-k8s.io/v1 LeaderWorkerSet"] = class {
  constructor(doc) {
    this.doc = doc;
  }
  validate() {
    if (!validateLws(this.doc))
      throw new Error(validateLws.errors.map((e) => `${e.instancePath} ${e.message}`).join("; "));
  }
};

const { validateTerraformText, validateGke, validateEksText } = nodePoolValidators({ Ajv, here, qualifiedName });

// ---- The API server's rules that the OpenAPI schemas do not encode (k8s_rules.mjs, and
// below: names, labels, selectors).

function apiServerRules(doc, where, problems) {
  const bad = (p, why) => problems.push(`${where}: ${p}: ${why}`);
  const meta = doc.metadata ?? {};
  const name = meta.name ?? "";
  if (!(name.length <= 253 && dns1123Subdomain.test(name))) bad("metadata.name", `'${name}' is not a DNS-1123 subdomain`);
  // Jobs and Deployments label their pods with their name: it must be a label value too.
  if (["Job", "Deployment"].includes(doc.kind) && !(name.length <= 63 && dns1123Label.test(name)))
    bad("metadata.name", `'${name}' is not a DNS-1123 label (63 characters at most)`);
  const checkLabels = (labels, p) => {
    for (const [k, v] of Object.entries(labels ?? {})) {
      if (!qualifiedName(k)) bad(`${p}.${k}`, "not a qualified name");
      if (!labelValue(v)) bad(`${p}.${k}`, `'${v}' is not a valid label value`);
    }
  };
  const checkAnnotations = (notes, p) => {
    for (const [k, v] of Object.entries(notes ?? {})) {
      if (!qualifiedName(k)) bad(`${p}.${k}`, "not a qualified name");
      if (typeof v !== "string") bad(`${p}.${k}`, "annotation values are strings");
    }
  };
  checkLabels(meta.labels, "metadata.labels");
  checkAnnotations(meta.annotations, "metadata.annotations");
  const pod = doc.spec?.template?.spec;
  if (["Job", "Deployment"].includes(doc.kind)) {
    const tmeta = doc.spec?.template?.metadata ?? {};
    checkLabels(tmeta.labels, "spec.template.metadata.labels");
    if (!pod) return bad("spec.template.spec", "missing");
    checkLabels(pod.nodeSelector, "spec.template.spec.nodeSelector");
    containerRules(pod, "spec.template.spec", bad);
  }
  if (doc.kind === "Job") {
    if (!["Never", "OnFailure"].includes(pod?.restartPolicy)) bad("spec.template.spec.restartPolicy", "Never or OnFailure");
    const s = doc.spec;
    if (s.completionMode === "Indexed" && !(Number.isInteger(s.completions) && s.completions > 0))
      bad("spec.completions", "an Indexed Job needs completions");
    if (s.backoffLimitPerIndex !== undefined && s.completionMode !== "Indexed")
      bad("spec.backoffLimitPerIndex", "only for Indexed Jobs");
    if (s.parallelism > s.completions) bad("spec.parallelism", "more than completions");
    // Volumes the containers mount must exist.
    const volumes = new Set((pod?.volumes ?? []).map((v) => v.name));
    for (const c of pod?.containers ?? [])
      for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) bad("volumeMounts", `no volume '${m.name}'`);
  }
  if (doc.kind === "LeaderWorkerSet") {
    const t = doc.spec?.leaderWorkerTemplate?.workerTemplate ?? {};
    checkLabels(t.metadata?.labels, "spec.leaderWorkerTemplate.workerTemplate.metadata.labels");
    if (!t.spec) bad("spec.leaderWorkerTemplate.workerTemplate.spec", "missing");
    else {
      checkLabels(t.spec.nodeSelector, "spec.leaderWorkerTemplate.workerTemplate.spec.nodeSelector");
      containerRules(t.spec, "spec.leaderWorkerTemplate.workerTemplate.spec", bad);
    }
    if (!(doc.spec?.leaderWorkerTemplate?.size >= 2)) bad("spec.leaderWorkerTemplate.size", "a group of 2 pods or more");
  }
  if (doc.kind === "Deployment") {
    const want = doc.spec?.selector?.matchLabels ?? {};
    const have = doc.spec?.template?.metadata?.labels ?? {};
    if (Object.keys(want).length === 0) bad("spec.selector", "required");
    for (const [k, v] of Object.entries(want))
      if (have[k] !== v) bad("spec.selector.matchLabels", `the template's labels do not match ${k}=${v}`);
  }
  if (doc.kind === "NodePool") {
    const t = doc.spec?.template ?? {};
    checkLabels(t.metadata?.labels, "spec.template.metadata.labels");
    checkAnnotations(t.metadata?.annotations, "spec.template.metadata.annotations");
    for (const [i, r] of (t.spec?.requirements ?? []).entries()) {
      if (!qualifiedName(r.key)) bad(`spec.template.spec.requirements[${i}].key`, "not a label key");
      for (const v of r.values ?? []) if (!labelValue(v)) bad(`spec.template.spec.requirements[${i}]`, `'${v}' is no label value`);
    }
    for (const [r, q] of Object.entries(doc.spec?.limits ?? {}))
      if (!quantity.test(String(q))) bad(`spec.limits.${r}`, `'${q}' is not a quantity`);
  }
}

function schemaCheck(doc, where, problems) {
  const key = `${doc.apiVersion} ${doc.kind}`;
  const Model = models[key];
  if (!Model) return problems.push(`${where}: no schema for ${key}`);
  try {
    new Model(doc).validate();
  } catch (e) {
    problems.push(`${where}: ${key}: ${e.message}`);
  }
  apiServerRules(doc, `${where} ${doc.kind}/${doc.metadata?.name}`, problems);
}

function validateYamlStream(text, where, problems, kindsWanted) {
  const docs = YAML.parseAllDocuments(text);
  const objects = [];
  for (const d of docs) {
    if (d.errors.length) problems.push(`${where}: YAML: ${d.errors[0].message}`);
    const o = d.toJS();
    if (o !== null && o !== undefined) objects.push(o);
  }
  if (objects.length === 0) problems.push(`${where}: no documents`);
  for (const o of objects) schemaCheck(o, where, problems);
  const kinds = new Set(objects.map((o) => o.kind));
  for (const k of kindsWanted) if (!kinds.has(k)) problems.push(`${where}: no ${k}`);
  return objects;
}

function validateKarpenter(text, where, problems) {
  const objects = validateYamlStream(text, where, problems, ["NodePool", "EC2NodeClass"]);
  const classes = new Set(objects.filter((o) => o.kind === "EC2NodeClass").map((o) => o.metadata.name));
  for (const p of objects.filter((o) => o.kind === "NodePool")) {
    const ref = p.spec?.template?.spec?.nodeClassRef ?? {};
    if (ref.kind !== "EC2NodeClass" || !classes.has(ref.name))
      problems.push(`${where}: NodePool/${p.metadata.name} names EC2NodeClass '${ref.name}', which is not in the export`);
  }
}

const validators = {
  gke: validateGke,
  karpenter: validateKarpenter,
  terraform: validateTerraformText,
  eks: validateEksText,
  k8s: (text, where, problems) => {
    const objects = validateYamlStream(text, where, problems, []);
    if (!objects.some((o) => ["Job", "Deployment", "LeaderWorkerSet"].includes(o.kind)))
      problems.push(`${where}: no Job, Deployment or LeaderWorkerSet`);
  },
};

// ---- The matrix.
const doc = fs.readFileSync(docPath, "utf8");
const begin = "<!-- export-matrix: begin (tests/exports/validate_exports.mjs writes this table) -->";
const end = "<!-- export-matrix: end -->";
if (!doc.includes(begin) || !doc.includes(end)) {
  console.log(`FAIL: ${docPath} has no export-matrix markers`);
  process.exit(1);
}
// The documented refusals: the "message" column of the refusals table, each a prefix of an
// error line after "error: ".
const refusals = [...doc.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "capsim-exports-")), "capsim.db");
const env = { ...process.env, CAPSIM_DB: db };
const examples = fs.readdirSync(examplesDir).filter((f) => f.endsWith(".yaml")).sort();
const targets = ["gke", "karpenter", "terraform", "eks", "k8s"];
const problems = [];
const rows = [];
let validated = 0;
let refused = 0;
for (const example of examples) {
  const cells = [];
  for (const target of targets) {
    const where = `${example} ${target}`;
    const r = spawnSync(capsim, ["export", target, path.join(examplesDir, example)], { encoding: "utf8", env });
    if (r.status === 0) {
      const before = problems.length;
      validators[target](r.stdout, where, problems);
      cells.push(problems.length === before ? "validated" : "INVALID");
      if (problems.length === before) ++validated;
      continue;
    }
    const lines = r.stderr.split("\n").filter((l) => l.includes("error: "));
    const messages = lines.map((l) => l.slice(l.indexOf("error: ") + 7));
    const matched = messages.map((m) => refusals.find((pattern) => matches(m, pattern)));
    if (r.status !== 2 || lines.length === 0 || matched.some((m) => m === undefined)) {
      problems.push(`${where}: exit ${r.status}, not a documented refusal:\n${r.stderr}`);
      cells.push(`exit ${r.status}`);
    } else {
      ++refused;
      cells.push("refused: " + [...new Set(matched)].map((m) => "`" + m + "`").join(", "));
    }
  }
  rows.push(`| ${example} | ${cells.join(" | ")} |`);
}
// The sweep manifest too: the objects `capsim sweep` writes for a shipped example.
{
  const r = spawnSync(capsim, ["sweep", path.join(examplesDir, "lora-7b-one-node.yaml"), "--sweep", "hardware.max_gpus=1,8",
                               "--shards", "2"], { encoding: "utf8", env });
  if (r.status !== 0) problems.push(`sweep: exit ${r.status}: ${r.stderr}`);
  else {
    validateYamlStream(r.stdout, "sweep", problems, ["ConfigMap", "PersistentVolumeClaim", "Job"]);
    // Negative control (issue 53): the Job as it was, runAsNonRoot without a runAsUser, is refused.
    const control = [];
    validateYamlStream(r.stdout.replace(/^ *runAsUser: .*\n/m, ""), "sweep without runAsUser", control,
                       ["ConfigMap", "PersistentVolumeClaim", "Job"]);
    if (!control.some((p) => p.includes("runAsNonRoot without a numeric runAsUser")))
      problems.push(`sweep: a Job without runAsUser was not refused: ${control.join("; ") || "no problem found"}`);
  }
}
fs.rmSync(path.dirname(db), { recursive: true, force: true });

// A pattern is a message with <placeholders>: "GKE export needs gcp node types; pool '<pool>' is <node type>".
function matches(message, pattern) {
  const parts = pattern.split(/<[^>]+>/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp("^" + parts.join(".+?") + "( \\(.*\\))?$").test(message);
}

const table = [
  "| example | " + targets.join(" | ") + " |",
  "|---|" + targets.map(() => "---").join("|") + "|",
  ...rows,
].join("\n");
const expected = doc.slice(doc.indexOf(begin) + begin.length, doc.indexOf(end)).trim();
if (process.env.CAPSIM_UPDATE_GOLDEN) {
  fs.writeFileSync(docPath, doc.replace(doc.slice(doc.indexOf(begin), doc.indexOf(end)), begin + "\n" + table + "\n"));
} else if (expected !== table) {
  problems.push(`${docPath}: the export matrix differs from this run (CAPSIM_UPDATE_GOLDEN=1 rewrites it):\n${table}`);
}
for (const p of problems) console.log("FAIL: " + p);
console.log(`${validated} exports validated, ${refused} refused as documented, ${problems.length} problems`);
process.exit(problems.length === 0 ? 0 : 1);
