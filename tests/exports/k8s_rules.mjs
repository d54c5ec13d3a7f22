// The API server's rules that the OpenAPI schemas do not encode (k8s.io/apimachinery
// validation: IsDNS1123Label, IsDNS1123Subdomain, IsQualifiedName, IsValidLabelValue; core
// validation of containers, resources and tolerations), shared by validate_exports.mjs and
// validate_cluster_exports.mjs.
export const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
export const quantity = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$/;

export function qualifiedName(key) {
  const parts = key.split("/");
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1];
  if (name.length > 63 || !qualifiedNamePart.test(name)) return false;
  if (parts.length === 2) return parts[0].length > 0 && parts[0].length <= 253 && dns1123Subdomain.test(parts[0]);
  return true;
}

export const labelValue = (v) => typeof v === "string" && v.length <= 63 && (v === "" || qualifiedNamePart.test(v));

// A pod spec's containers (name, image, resources) and tolerations; `p` is the spec's path
// ("spec.template.spec"), `bad(path, why)` records a problem.
export function containerRules(pod, p, bad) {
  if (!Array.isArray(pod.containers) || pod.containers.length === 0) bad(`${p}.containers`, "required");
  for (const [i, c] of (pod.containers ?? []).entries()) {
    const cp = `${p}.containers[${i}]`;
    if (!c.name || !dns1123Label.test(c.name)) bad(`${cp}.name`, "required, a DNS-1123 label");
    if (typeof c.image !== "string" || c.image.trim() === "") bad(`${cp}.image`, "required");
    for (const kind of ["limits", "requests"])
      for (const [r, q] of Object.entries(c.resources?.[kind] ?? {})) {
        if (!qualifiedName(r)) bad(`${cp}.resources.${kind}.${r}`, "not a resource name");
        if (!quantity.test(String(q))) bad(`${cp}.resources.${kind}.${r}`, `'${q}' is not a quantity`);
        // Extended resources (outside kubernetes.io) are whole numbers and cannot be overcommitted.
        if (r.includes("/") && !r.includes("kubernetes.io/") && !/^[0-9]+$/.test(String(q)))
          bad(`${cp}.resources.${kind}.${r}`, "an extended resource must be a whole number");
      }
  }
  for (const [i, t] of (pod.tolerations ?? []).entries())
    if (t.operator === "Exists" && t.value) bad(`${p}.tolerations[${i}]`, "Exists takes no value");
  runAsNonRootRule(pod, p, bad);
}

// The kubelet's runAsNonRoot check (kuberuntime verifyRunAsNonRoot) where the image is not
// known: a container whose effective runAsNonRoot is true starts only with a runAsUser other
// than 0, or with an image whose USER is a number other than 0; a USER name is refused
// (CreateContainerConfigError). capsim writes its pods' user and group by number (issue 53).
export function runAsNonRootRule(pod, p, bad) {
  const sc = pod.securityContext ?? {};
  for (const key of ["runAsUser", "runAsGroup"])
    if (!Number.isInteger(sc[key]) || sc[key] < 0) bad(`${p}.securityContext.${key}`, "a numeric id is required");
  for (const [i, c] of (pod.containers ?? []).entries()) {
    const nonRoot = c.securityContext?.runAsNonRoot ?? sc.runAsNonRoot;
    const user = c.securityContext?.runAsUser ?? sc.runAsUser;
    if (nonRoot === true && (user === undefined || user === 0))
      bad(`${p}.containers[${i}]`, user === 0 ? "runAsUser 0 breaks runAsNonRoot" :
          "runAsNonRoot without a numeric runAsUser: the kubelet cannot verify an image's named USER");
  }
}

// Strict field validation (kubectl's default): an object schema that lists its properties
// and does not preserve unknown fields refuses others (for the published CRD schemas, ajv).
export function strict(schema) {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== "object") return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === "properties" ? mapValues(v, strict) : strict(v)]));
  if (out.properties && out.additionalProperties === undefined && !out["x-kubernetes-preserve-unknown-fields"])
    out.additionalProperties = false;
  return out;
}
const mapValues = (o, f) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
