// Issue 17: a whole cluster plan exported as objects real tools accept. For every cluster
// scenario (scenarios/clusters/*.yaml), `capsim plan --export k8s|pytorchjob|karpenter|eks|gke|terraform`
// either writes what validates, or (karpenter, eks, gke, terraform) is refused with the documented
// text for another provider's pools (pytorchjob: for a gang of unlike pods). gke, terraform and
// eks: node_pool_validators.mjs.
//
//   node validate_cluster_exports.mjs CAPSIM CLUSTERS_DIR DOCS_EXPORTS_MD NPM_DIR
//
// Validation, per document kind:
//   apps/v1 Deployment, autoscaling/v2 HorizontalPodAutoscaler, policy/v1 PodDisruptionBudget:
//     Kubernetes' OpenAPI schemas (npm kubernetes-models);
//   karpenter.sh/v1 NodePool, karpenter.k8s.aws/v1 EC2NodeClass: Karpenter's CRD schemas (npm
//     @kubernetes-models/karpenter);
//   kubeflow.org/v1 PyTorchJob (pytorchjob): the Kubeflow training operator's CRD schema;
//   jobset.x-k8s.io/v1alpha2 JobSet, kueue.x-k8s.io/v1beta2 ResourceFlavor, ClusterQueue,
//     LocalQueue: the published CRDs' openAPIV3Schemas in schemas/ (ajv; README.md there says
//     where they come from), with unknown fields refused as strict field validation does;
// then the API server's and the controllers' rules the schemas leave out (names, labels,
// quantities, selectors, JobSet's DNS-1035 pod names, Kueue's covered resources), the
// references between documents, and agreement with `capsim plan --format json` (one JobSet
// per training workload, one Deployment per service with the plan's replicas, node
// selectors naming the plan's pools). Exit 0: all hold; 1: not; 77: the npm packages are
// not installed (ctest reports the test as skipped). Issue 53: the k8s and gke exports of one
// plan agree on its MIG strategy (GKE-partitioned pools <-> nvidia.com/gpu requests on nodes
// of that partition size; mixed <-> nvidia.com/mig-*) and both state it; negative controls show
// the PyTorchJob and EKS checks refuse a broken document.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { containerRules, dns1123Label, dns1123Subdomain, labelValue, qualifiedName, quantity, strict } from "./k8s_rules.mjs";
import { nodePoolValidators, npmLoader } from "./node_pool_validators.mjs";

const [capsim, clustersDir, docPath, npmDir] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const load = npmLoader(npmDir);
const models = {
  "apps/v1 Deployment": (await load("kubernetes-models/apps/v1/Deployment.js")).Deployment,
  "autoscaling/v2 HorizontalPodAutoscaler": (await load("kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler.js"))
    .HorizontalPodAutoscaler,
  "policy/v1 PodDisruptionBudget": (await load("kubernetes-models/policy/v1/PodDisruptionBudget.js")).PodDisruptionBudget,
  "karpenter.sh/v1 NodePool": (await load("@kubernetes-models/karpenter/karpenter.sh/v1/NodePool.js")).NodePool,
  "karpenter.k8s.aws/v1 EC2NodeClass": (await load("@kubernetes-models/karpenter/karpenter.k8s.aws/v1/EC2NodeClass.js"))
    .EC2NodeClass,
};
const YAML = (await load("yaml/dist/index.js")).default;
const Ajv = (await load("ajv/dist/ajv.js")).default;

// Formats (int32, int64, date-time, ...) are not checked; CEL rules (x-kubernetes-validations)
// neither: the ones that matter to capsim's output are checked by hand below.
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const crd = (file) => {
  const schema = JSON.parse(fs.readFileSync(path.join(here, "schemas", file)));
  delete schema.$comment;
  return ajv.compile(strict(schema));
};
const crds = {
  "jobset.x-k8s.io/v1alpha2 JobSet": crd("jobset.x-k8s.io_v1alpha2_jobset.schema.json"),
  "kubeflow.org/v1 PyTorchJob": crd("kubeflow.org_v1_pytorchjob.schema.json"),
  "kueue.x-k8s.io/v1beta2 ResourceFlavor": crd("kueue.x-k8s.io_v1beta2_resourceflavor.schema.json"),
  "kueue.x-k8s.io/v1beta2 ClusterQueue": crd("kueue.x-k8s.io_v1beta2_clusterqueue.schema.json"),
  "kueue.x-k8s.io/v1beta2 LocalQueue": crd("kueue.x-k8s.io_v1beta2_localqueue.schema.json"),
};

// ---- The API server's rules (k8s.io/apimachinery validation) the schemas do not encode
// (k8s_rules.mjs, and below).
const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const { validateTerraformText, validateGke, validateEksText } = nodePoolValidators({ Ajv, here, qualifiedName });

function metaRules(doc, bad) {
  const meta = doc.metadata ?? {};
  if (!(typeof meta.name === "string" && meta.name.length <= 63 && dns1123Label.test(meta.name)))
    bad("metadata.name", `'${meta.name}' is not a DNS-1123 label`);
  for (const [k, v] of Object.entries(meta.labels ?? {})) {
    if (!qualifiedName(k)) bad(`metadata.labels.${k}`, "not a qualified name");
    if (!labelValue(v)) bad(`metadata.labels.${k}`, `'${v}' is not a label value`);
  }
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    if (!qualifiedName(k)) bad(`metadata.annotations.${k}`, "not a qualified name");
    if (typeof v !== "string") bad(`metadata.annotations.${k}`, "annotation values are strings");
  }
}

// A pod template: labels, node selection, containers and their resources.
function podRules(template, p, bad) {
  for (const [k, v] of Object.entries(template?.metadata?.labels ?? {}))
    if (!qualifiedName(k) || !labelValue(v)) bad(`${p}.metadata.labels.${k}`, `'${v}' is not a label`);
  const pod = template?.spec;
  if (!pod) return bad(`${p}.spec`, "missing");
  for (const [k, v] of Object.entries(pod.nodeSelector ?? {}))
    if (!qualifiedName(k) || !labelValue(v)) bad(`${p}.spec.nodeSelector.${k}`, `'${v}' is not a label`);
  containerRules(pod, `${p}.spec`, bad);
}

// Where a pod template may run: its instance-type node selector or required node affinity.
function instanceTypes(template) {
  const pod = template?.spec ?? {};
  const types = [];
  if (pod.nodeSelector?.["node.kubernetes.io/instance-type"]) types.push(pod.nodeSelector["node.kubernetes.io/instance-type"]);
  for (const term of pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [])
    for (const e of term.matchExpressions ?? [])
      if (e.key === "node.kubernetes.io/instance-type" && e.operator === "In") types.push(...e.values);
  return types;
}
const gpuResources = (template) =>
  Object.entries(template?.spec?.containers?.[0]?.resources?.limits ?? {}).filter(
    ([r]) => r.startsWith("nvidia.com/") || r === "amd.com/gpu" || r === "google.com/tpu");

function kindRules(doc, bad) {
  switch (doc.kind) {
    case "JobSet":
      for (const [i, rj] of (doc.spec?.replicatedJobs ?? []).entries()) {
        const p = `spec.replicatedJobs[${i}]`;
        const job = rj.template?.spec ?? {};
        if (!dns1123Label.test(rj.name ?? "")) bad(`${p}.name`, "not a DNS-1123 label");
        if (!["Never", "OnFailure"].includes(job.template?.spec?.restartPolicy))
          bad(`${p}.template.spec.template.spec.restartPolicy`, "Never or OnFailure");
        if (!["Indexed", "NonIndexed", undefined].includes(job.completionMode))
          bad(`${p}.template.spec.completionMode`, "Indexed or NonIndexed");
        if (job.completionMode === "Indexed" && !(Number.isInteger(job.completions) && job.completions > 0))
          bad(`${p}.template.spec.completions`, "an Indexed Job needs completions");
        if (job.parallelism > job.completions) bad(`${p}.template.spec.parallelism`, "more than completions");
        // jobset's webhook: <jobset>-<replicatedJob>-<job index>-<pod index>-<5 characters> is a DNS-1035 label.
        const podName = `${doc.metadata.name}-${rj.name}-${rj.replicas - 1}-${(job.completions ?? 1) - 1}-abcde`;
        if (!(podName.length <= 63 && dns1035Label.test(podName))) bad(`${p}.name`, `pod name '${podName}' is no DNS-1035 label`);
        podRules(job.template, `${p}.template.spec.template`, bad);
      }
      break;
    case "PyTorchJob": {
      // The training operator's webhook (pkg/webhooks/pytorch): replica types Master and Worker
      // only, one Master, each template with a container named "pytorch"; restart policies it knows.
      const specs = doc.spec?.pytorchReplicaSpecs ?? {};
      if (!specs.Master) bad("spec.pytorchReplicaSpecs", "no Master");
      for (const [type, rs] of Object.entries(specs)) {
        const p = `spec.pytorchReplicaSpecs.${type}`;
        if (!["Master", "Worker"].includes(type)) bad(p, "replica types are Master and Worker");
        if (type === "Master" && rs.replicas !== 1) bad(`${p}.replicas`, "one Master");
        if (!(Number.isInteger(rs.replicas) && rs.replicas >= 1)) bad(`${p}.replicas`, "at least 1");
        if (!["Always", "OnFailure", "Never", "ExitCode"].includes(rs.restartPolicy)) bad(`${p}.restartPolicy`, "not a restart policy");
        if (!(rs.template?.spec?.containers ?? []).some((c) => c.name === "pytorch")) bad(`${p}.template`, "no container named pytorch");
        podRules(rs.template, `${p}.template`, bad);
      }
      break;
    }
    case "Deployment": {
      podRules(doc.spec?.template, "spec.template", bad);
      const want = doc.spec?.selector?.matchLabels ?? {};
      const have = doc.spec?.template?.metadata?.labels ?? {};
      if (Object.keys(want).length === 0) bad("spec.selector", "required");
      for (const [k, v] of Object.entries(want)) if (have[k] !== v) bad("spec.selector", `the template's labels lack ${k}=${v}`);
      break;
    }
    case "HorizontalPodAutoscaler":
      if (!(doc.spec.minReplicas >= 1 && doc.spec.minReplicas <= doc.spec.maxReplicas))
        bad("spec.minReplicas", "1 to maxReplicas");
      break;
    case "ClusterQueue":
      // Kueue's CEL rule: every flavor of a resource group lists the covered resources, in order.
      for (const [i, g] of (doc.spec?.resourceGroups ?? []).entries())
        for (const [j, f] of (g.flavors ?? []).entries()) {
          const names = (f.resources ?? []).map((r) => r.name);
          if (JSON.stringify(names) !== JSON.stringify(g.coveredResources))
            bad(`spec.resourceGroups[${i}].flavors[${j}]`, `resources ${names} are not the covered ${g.coveredResources}`);
          for (const r of f.resources ?? [])
            if (!quantity.test(String(r.nominalQuota))) bad(`spec.resourceGroups[${i}].flavors[${j}].${r.name}`, "no quantity");
        }
      break;
    case "NodePool":
      for (const [r, q] of Object.entries(doc.spec?.limits ?? {}))
        if (!quantity.test(String(q))) bad(`spec.limits.${r}`, `'${q}' is not a quantity`);
      for (const [i, r] of (doc.spec?.template?.spec?.requirements ?? []).entries())
        for (const v of r.values ?? []) if (!labelValue(v)) bad(`spec.template.spec.requirements[${i}]`, `'${v}' is no label value`);
      break;
  }
}

function validateDocument(doc, where, problems) {
  const key = `${doc.apiVersion} ${doc.kind}`;
  const at = `${where} ${doc.kind}/${doc.metadata?.name}`;
  const bad = (p, why) => problems.push(`${at}: ${p}: ${why}`);
  if (models[key]) {
    try {
      new models[key](doc).validate();
    } catch (e) {
      problems.push(`${at}: ${key}: ${e.message}`);
    }
  } else if (crds[key]) {
    if (!crds[key](doc)) for (const e of crds[key].errors) bad(e.instancePath || "/", `${e.message} ${JSON.stringify(e.params)}`);
  } else {
    return problems.push(`${at}: no schema for ${key}`);
  }
  metaRules(doc, bad);
  kindRules(doc, bad);
}

function parseStream(text, where, problems) {
  const objects = [];
  for (const d of YAML.parseAllDocuments(text)) {
    if (d.errors.length) problems.push(`${where}: YAML: ${d.errors[0].message}`);
    const o = d.toJS();
    if (o !== null && o !== undefined) objects.push(o);
  }
  if (objects.length === 0) problems.push(`${where}: no documents`);
  for (const o of objects) validateDocument(o, where, problems);
  return objects;
}

// ---- The documents against each other and against the plan.
function checkK8s(objects, plan, where, problems, pytorch = false) {
  const of = (kind) => objects.filter((o) => o.kind === kind);
  const byName = (kind) => new Map(of(kind).map((o) => [o.metadata.name, o]));
  const flavors = byName("ResourceFlavor");
  const poolTypes = new Set([...flavors.values()].map((f) => f.spec?.nodeLabels?.["node.kubernetes.io/instance-type"]));
  if (flavors.size !== plan.pools.length) problems.push(`${where}: ${flavors.size} ResourceFlavors for ${plan.pools.length} pools`);
  const queues = byName("ClusterQueue");
  const locals = byName("LocalQueue");
  if (queues.size !== 1 || locals.size !== 1) problems.push(`${where}: want one ClusterQueue and one LocalQueue`);
  for (const q of queues.values())
    for (const g of q.spec.resourceGroups)
      for (const f of g.flavors) if (!flavors.has(f.name)) problems.push(`${where}: ClusterQueue names no ResourceFlavor '${f.name}'`);
  for (const l of locals.values())
    if (!queues.has(l.spec.clusterQueue)) problems.push(`${where}: LocalQueue names no ClusterQueue '${l.spec.clusterQueue}'`);
  const workloads = new Map(plan.workloads.map((w) => [w.name, w]));
  const jobsets = byName(pytorch ? "PyTorchJob" : "JobSet");
  if (byName(pytorch ? "JobSet" : "PyTorchJob").size !== 0) problems.push(`${where}: JobSets and PyTorchJobs mixed`);
  const strategy = [...queues.values()][0]?.metadata?.annotations?.["capsim.dev/mig-strategy"];
  const deployments = byName("Deployment");
  const training = plan.workloads.filter((w) => w.kind === "training");
  const services = plan.workloads.filter((w) => w.kind === "service");
  if (jobsets.size !== training.length) problems.push(`${where}: ${jobsets.size} JobSets for ${training.length} training workloads`);
  if (deployments.size !== services.length) problems.push(`${where}: ${deployments.size} Deployments for ${services.length} services`);
  const templates = [];
  for (const j of jobsets.values()) {
    const queue = j.metadata.labels?.["kueue.x-k8s.io/queue-name"];
    if (!locals.has(queue)) problems.push(`${where}: ${j.kind}/${j.metadata.name} names no LocalQueue '${queue}'`);
    if ((pytorch ? j.spec.runPolicy?.suspend : j.spec.suspend) !== true)
      problems.push(`${where}: ${j.kind}/${j.metadata.name} is not created suspended for Kueue`);
    const w = workloads.get(j.metadata.name);
    if (!w || w.kind !== "training") problems.push(`${where}: JobSet/${j.metadata.name} is no training workload of the plan`);
    // The gang's GPUs: the sum over its pods of their nvidia.com/gpu.
    let gpus = 0;
    for (const [type, rs] of Object.entries(pytorch ? j.spec.pytorchReplicaSpecs : {})) {
      templates.push([`PyTorchJob/${j.metadata.name} ${type}`, rs.template]);
      gpus += rs.replicas * Number(gpuResources(rs.template)[0]?.[1] ?? 0);
    }
    for (const rj of pytorch ? [] : j.spec.replicatedJobs) {
      const t = rj.template.spec.template;
      templates.push([`JobSet/${j.metadata.name}`, t]);
      gpus += rj.replicas * rj.template.spec.parallelism * Number(t.spec.containers[0].resources.limits["nvidia.com/gpu"] ?? 0);
    }
    const planned = Number(/gang of (\d+) GPU/.exec(w?.demand ?? "")?.[1]);
    if (gpus !== planned) problems.push(`${where}: JobSet/${j.metadata.name} asks for ${gpus} GPUs, the plan's gang has ${planned}`);
  }
  const hpas = byName("HorizontalPodAutoscaler");
  const pdbs = byName("PodDisruptionBudget");
  for (const d of deployments.values()) {
    const name = d.metadata.name;
    templates.push([`Deployment/${name}`, d.spec.template]);
    const w = workloads.get(name);
    const replicas = Number(/^(\d+) replicas?/.exec(w?.demand ?? "")?.[1]);
    if (!w || w.kind !== "service") problems.push(`${where}: Deployment/${name} is no service of the plan`);
    if (d.spec.replicas !== replicas) problems.push(`${where}: Deployment/${name} has ${d.spec.replicas} replicas, the plan ${replicas}`);
    if (/MIG (\S+)/.test(w?.demand ?? "")) {
      // The plan's one MIG strategy: GKE's partitioned pools advertise a slice as nvidia.com/gpu
      // on nodes labelled with the partition size; the mixed strategy names the slice.
      const profile = /MIG (\S+)/.exec(w.demand)[1].replace(/,$/, "");
      const gke = strategy === "gke";
      if (!["gke", "mixed"].includes(strategy)) problems.push(`${where}: a plan with MIG slices states no MIG strategy`);
      const want = gke ? "nvidia.com/gpu" : `nvidia.com/mig-${profile}`;
      if (!gpuResources(d.spec.template).some(([r]) => r === want)) problems.push(`${where}: Deployment/${name} does not ask for ${want}`);
      if (gke && d.spec.template.spec.nodeSelector?.["cloud.google.com/gke-gpu-partition-size"] !== profile)
        problems.push(`${where}: Deployment/${name} does not select GKE's ${profile} partitions`);
    }
    const hpa = hpas.get(name);
    if (!hpa || hpa.spec.scaleTargetRef.kind !== "Deployment" || hpa.spec.scaleTargetRef.name !== name || hpa.spec.maxReplicas !== d.spec.replicas)
      problems.push(`${where}: Deployment/${name} has no HorizontalPodAutoscaler up to its replicas`);
    const pdb = pdbs.get(name);
    if ((d.spec.replicas > 1) !== (pdb !== undefined))
      problems.push(`${where}: Deployment/${name}: a PodDisruptionBudget when, and only when, replicas > 1`);
    if (pdb && pdb.spec.selector?.matchLabels?.app !== d.spec.template.metadata.labels.app)
      problems.push(`${where}: PodDisruptionBudget/${name} does not select the Deployment's pods`);
  }
  for (const [what, t] of templates) {
    const types = instanceTypes(t);
    if (types.length === 0) problems.push(`${where}: ${what} selects no instance type`);
    for (const type of types) if (!poolTypes.has(type)) problems.push(`${where}: ${what} selects ${type}, no pool of the plan`);
    const key = gpuResources(t).some(([r]) => r === "amd.com/gpu") ? "amd.com/gpu" : "nvidia.com/gpu";
    if (!(t.spec.tolerations ?? []).some((x) => x.key === key && x.effect === "NoSchedule"))
      problems.push(`${where}: ${what} does not tolerate the ${key} taint`);
    if (strategy === "gke" && gpuResources(t).some(([r]) => r.startsWith("nvidia.com/mig-")))
      problems.push(`${where}: ${what} asks for a MIG resource GKE's partitioned nodes do not advertise`);
    if (gpuResources(t).length !== 1) problems.push(`${where}: ${what} asks for no GPU resource`);
  }
}

function checkKarpenter(objects, plan, where, problems) {
  const pools = objects.filter((o) => o.kind === "NodePool");
  const classes = new Set(objects.filter((o) => o.kind === "EC2NodeClass").map((o) => o.metadata.name));
  if (pools.length !== plan.pools.length) problems.push(`${where}: ${pools.length} NodePools for ${plan.pools.length} pools`);
  for (const p of pools) {
    const ref = p.spec.template.spec.nodeClassRef;
    if (ref.kind !== "EC2NodeClass" || !classes.has(ref.name))
      problems.push(`${where}: NodePool/${p.metadata.name} names EC2NodeClass '${ref.name}', which is not in the export`);
    const pool = plan.pools.find((x) => x.node_type === p.metadata.name);
    if (!pool) problems.push(`${where}: NodePool/${p.metadata.name} is no pool of the plan`);
  }
}

// The gke and k8s exports of one plan carry one MIG strategy: every pool the gke script
// partitions (gpu-partition-size=P) is, in k8s, a flavor labelled with that partition size, no
// pod asks for nvidia.com/mig-*, and both state "gke"; with no partitioned pool, k8s does not
// say "gke".
function agreeOnMig(outputs, file, problems) {
  if (outputs.k8s === undefined) return;
  const objects = YAML.parseAllDocuments(outputs.k8s).map((d) => d.toJS()).filter((o) => o);
  const queue = objects.find((o) => o.kind === "ClusterQueue");
  const strategy = queue?.metadata?.annotations?.["capsim.dev/mig-strategy"];
  const asksMig = /nvidia\.com\/mig-/.test(outputs.k8s.split("\n").filter((l) => !l.startsWith("#")).join("\n"));
  if (asksMig && !["gke", "mixed"].includes(strategy)) problems.push(`${file}: k8s asks for MIG slices but states no MIG strategy`);
  if (outputs.gke === undefined) return;
  const partitioned = [...outputs.gke.replace(/\\\n/g, " ").matchAll(/node-pools create (\S+) .*?gpu-partition-size=([^,\s']+)/g)];
  if (partitioned.length === 0) {
    if (strategy === "gke") problems.push(`${file}: k8s states the gke MIG strategy, the gke export partitions no pool`);
    return;
  }
  if (strategy !== "gke") problems.push(`${file}: gke partitions ${partitioned.map((m) => m[1])}, k8s states MIG strategy '${strategy}'`);
  if (!outputs.gke.includes("capsim.dev/mig-strategy=gke")) problems.push(`${file}: the gke export does not state its MIG strategy`);
  if (asksMig) problems.push(`${file}: gke partitions its MIG pools, k8s asks for nvidia.com/mig-* (those pods would stay Pending)`);
  for (const [, pool, size] of partitioned) {
    const flavor = objects.find((o) => o.kind === "ResourceFlavor" && o.metadata.name === pool);
    if (flavor?.spec?.nodeLabels?.["cloud.google.com/gke-gpu-partition-size"] !== size)
      problems.push(`${file}: k8s flavor ${pool} is not GKE's ${size} partition`);
  }
}

// Negative controls: documents a checker must refuse, so that a check that passes everything
// cannot hide.
function negativeControls(problems) {
  const pod = { containers: [{ name: "pytorch", image: "registry.example.com/x:1", resources: { limits: { "nvidia.com/gpu": 8 } } }],
                tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
                nodeSelector: { "node.kubernetes.io/instance-type": "p5.48xlarge" }, restartPolicy: "Never",
                securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001 } };
  const job = (spec) => ({ apiVersion: "kubeflow.org/v1", kind: "PyTorchJob", metadata: { name: "control" }, spec });
  // The kinds a cluster export writes (suspend under runPolicy, as Kueue's integration reads it).
  const good = job({ runPolicy: { suspend: true }, pytorchReplicaSpecs: { Master: { replicas: 1, restartPolicy: "Never", template: { spec: pod } } } });
  const cases = [
    ["a good PyTorchJob", good, false],
    ["a misspelt field", job({ pytorchReplicaSpec: good.spec.pytorchReplicaSpecs }), true],
    ["replicas as text", job({ pytorchReplicaSpecs: { Master: { replicas: "1", restartPolicy: "Never", template: { spec: pod } } } }), true],
    ["two Masters", job({ pytorchReplicaSpecs: { Master: { replicas: 2, restartPolicy: "Never", template: { spec: pod } } } }), true],
    ["no pytorch container", job({ pytorchReplicaSpecs: { Master: { replicas: 1, restartPolicy: "Never",
      template: { spec: { ...pod, containers: [{ ...pod.containers[0], name: "worker" }] } } } } }), true],
  ];
  for (const [what, doc, refuse] of cases) {
    const found = [];
    validateDocument(doc, "control", found);
    if ((found.length > 0) !== refuse)
      problems.push(`negative control PyTorchJob (${what}): ${refuse ? "not refused" : "refused: " + found.join("; ")}`);
  }
  const group = { cluster_name: "capsim", node_role_arn: "${var.node_role_arn}", subnet_ids: "${var.subnet_ids}",
                  instance_types: ["p5.48xlarge"], scaling_config: { desired_size: 1, min_size: 0, max_size: 2 } };
  const tf = (g, variable = { node_role_arn: { type: "string" }, subnet_ids: { type: "list(string)" } }) =>
    JSON.stringify({ variable, resource: { aws_eks_node_group: { g } } });
  const eksCases = [
    ["a good node group", tf(group), false],
    ["max_size 0", tf({ ...group, scaling_config: { desired_size: 0, min_size: 0, max_size: 0 } }), true],
    ["desired above max", tf({ ...group, scaling_config: { desired_size: 3, min_size: 0, max_size: 2 } }), true],
    ["a misspelt argument", tf({ ...group, instance_type: "p5.48xlarge" }), true],
    ["no subnets", tf(Object.fromEntries(Object.entries(group).filter(([k]) => k !== "subnet_ids"))), true],
    ["a taint effect Kubernetes spells", tf({ ...group, taint: [{ key: "nvidia.com/gpu", effect: "NoSchedule" }] }), true],
    ["an undeclared variable", tf(group, { node_role_arn: { type: "string" } }), true],
  ];
  // EFA: a launch template with one EFA per network card, named by the node group.
  const efa = (interfaces, lt = "g", attribute = "latest_version") => {
    const j = JSON.parse(tf({ ...group, launch_template: { id: `\${aws_launch_template.${lt}.id}`, version: `\${aws_launch_template.${lt}.${attribute}}` } },
                            { node_role_arn: { type: "string" }, subnet_ids: { type: "list(string)" }, sg: { type: "list(string)" } }));
    j.resource.aws_launch_template = { g: { name_prefix: "g-efa-", network_interfaces: interfaces } };
    return JSON.stringify(j);
  };
  const nic = (card, device = card === 0 ? 0 : 1) =>
    ({ network_card_index: card, device_index: device, interface_type: "efa", delete_on_termination: true, security_groups: "${var.sg}" });
  eksCases.push(
    ["a launch template with two EFA interfaces", efa([nic(0), nic(1)]), false],
    ["an undeclared launch template", efa([nic(0), nic(1)], "other"), true],
    ["a launch template attribute Terraform does not export", efa([nic(0), nic(1)], "g", "version"), true],
    ["a second EFA at device index 0", efa([nic(0), nic(1, 0)]), true],
    ["two EFA interfaces on one network card", efa([nic(0), nic(0)]), true],
    ["a misspelt interface argument", efa([nic(0), { ...nic(1), interface: "efa" }]), true],
  );
  for (const [what, text, refuse] of eksCases) {
    const found = [];
    validateEksText(text, "control", found);
    if ((found.length > 0) !== refuse)
      problems.push(`negative control aws_eks_node_group (${what}): ${refuse ? "not refused" : "refused: " + found.join("; ")}`);
  }
}

// ---- Run.
const doc = fs.readFileSync(docPath, "utf8");
const refusals = [...doc.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
const matches = (message, pattern) => {
  const parts = pattern.split(/<[^>]+>/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp("^" + parts.join(".+?") + "( \\(.*\\))?$").test(message);
};
const db = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "capsim-cluster-exports-")), "capsim.db");
const env = { ...process.env, CAPSIM_DB: db };
const problems = [];
let validated = 0;
let refused = 0;
let documents = 0;
let partitionedPair;  // the gke and k8s exports of a plan with a GKE-partitioned pool, for the MIG control
for (const file of fs.readdirSync(clustersDir).filter((f) => f.endsWith(".yaml")).sort()) {
  const scenario = path.join(clustersDir, file);
  const planRun = spawnSync(capsim, ["plan", "--format", "json", scenario], { encoding: "utf8", env });
  if (planRun.status !== 0) {
    problems.push(`${file}: capsim plan exit ${planRun.status}: ${planRun.stderr}`);
    continue;
  }
  const plan = JSON.parse(planRun.stdout);
  const outputs = {};
  for (const target of ["k8s", "pytorchjob", "karpenter", "eks", "gke", "terraform"]) {
    const where = `${file} ${target}`;
    const r = spawnSync(capsim, ["plan", "--export", target, scenario], { encoding: "utf8", env });
    if (r.status === 0) outputs[target] = r.stdout;
    if (r.status === 0 && (target === "gke" || target === "terraform" || target === "eks")) {
      const before = problems.length;
      ({ gke: validateGke, terraform: validateTerraformText, eks: validateEksText })[target](r.stdout, where, problems);
      // One pool per pool of the plan, named after it.
      const named = { gke: (t) => `node-pools create ${t} `, terraform: (t) => `"name": "${t}"`, eks: (t) => `"node_group_name": "${t}"` };
      for (const pool of plan.pools)
        if (!r.stdout.includes(named[target](pool.node_type))) problems.push(`${where}: no node pool for ${pool.node_type}`);
      if (problems.length === before) ++validated;
      console.log(`${where}: ${plan.pools.length} node pools, ${problems.length === before ? "valid" : "INVALID"}`);
      continue;
    }
    if (r.status === 0) {
      const before = problems.length;
      const objects = parseStream(r.stdout, where, problems);
      documents += objects.length;
      if (target === "karpenter") checkKarpenter(objects, plan, where, problems);
      else checkK8s(objects, plan, where, problems, target === "pytorchjob");
      if (problems.length === before) ++validated;
      console.log(`${where}: ${objects.length} documents, ${problems.length === before ? "valid" : "INVALID"}`);
      continue;
    }
    // Refused: exit 2, every error a documented refusal naming a pool of the plan that is not AWS.
    const messages = r.stderr.split("\n").filter((l) => l.includes("error: ")).map((l) => l.slice(l.indexOf("error: ") + 7));
    const provider = target === "karpenter" || target === "eks" ? "aws-" : "gcp-";
    const names = (m) =>
      target === "pytorchjob"
        ? plan.workloads.some((w) => m.includes(`workload '${w.name}'`) && w.kind === "training")
        : plan.pools.some((x) => m.includes(`pool '${x.node_type}'`) && !x.node_type.startsWith(provider));
    const ok = target !== "k8s" && r.status === 2 && messages.length > 0 && messages.every((m) => refusals.some((p) => matches(m, p)) && names(m));
    if (!ok) problems.push(`${where}: exit ${r.status}, not a documented refusal:\n${r.stderr}`);
    else ++refused;
    console.log(`${where}: refused: ${messages.join("; ")}`);
  }
  agreeOnMig(outputs, file, problems);
  if (/gpu-partition-size=/.test(outputs.gke ?? "") && outputs.k8s) partitionedPair = outputs;
}
fs.rmSync(path.dirname(db), { recursive: true, force: true });
negativeControls(problems);
// The MIG agreement check must catch the bug it guards against: k8s asking for the slice by
// name (the mixed strategy) while gke partitions the pool.
if (!partitionedPair) problems.push("no shipped cluster has a GKE-partitioned pool: the MIG agreement check ran on none");
else {
  const found = [];
  const mixed = partitionedPair.k8s
    .replace(/capsim\.dev\/mig-strategy: "gke"/, 'capsim.dev/mig-strategy: "mixed"')
    .replace(/^( +)nvidia\.com\/gpu: 1$/m, "$1nvidia.com/mig-1g.5gb: 1");
  agreeOnMig({ ...partitionedPair, k8s: mixed }, "control", found);
  if (found.length === 0) problems.push("negative control MIG agreement: a k8s export asking for nvidia.com/mig-* beside GKE partitions was not refused");
}
for (const p of problems) console.log("FAIL: " + p);
console.log(`${validated} cluster exports (${documents} documents) validated, ${refused} refused as documented, ${problems.length} problems`);
process.exit(problems.length === 0 && validated > 0 ? 0 : 1);
