// The catalogue of bad inputs (issue 10): every input a user could get wrong, run through
// the real capsim binary under a time and memory limit. Each must fail with exit code 2 and
// a message that says where (file:line:column, or the flag), quickly. The test writes the
// table of inputs, commands, exit codes and messages to docs/bad-inputs.md and checks it
// equals the committed file; CAPSIM_UPDATE_GOLDEN=1 rewrites it.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "capsim/core/des/pipeline.hpp"
#include "reliability/run_capsim.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using capsim::testing::run_capsim;

namespace {

struct File {
  std::string path;     // relative to the case directory
  std::string content;
};

struct BadInput {
  std::string input;          // what is wrong, as the table shows it
  std::vector<File> files;    // written into the case directory
  std::string args;           // capsim's arguments
  bool copy_catalog = false;  // copy data/catalog to catalog/ first (cases that add entries)
  std::string location;       // what the first error line must start with: "bad.yaml:3:" or "error: --params"
  int exit_code = 2;          // 2: bad input; 3: the environment (a corrupt database, a full disk)
  // Exit 0 (an output that keeps what it is given as text): the message is the line of this
  // file of the case directory ("-": standard output) that holds `needle`.
  std::string output = {};
  std::string needle = {};
  std::string never_shown = {};  // text of the input that no output or message may show
};

// ---- Inputs the cases start from ----

const std::string kTraining = R"(name: t
workload:
  type: training
  model: llama-2-7b
  tokens: 100M
hardware:
  gpus: [h100-sxm-80gb]
  max_gpus: 8
)";

std::string training_with(const std::string& extra) { return kTraining + extra; }

std::string simulation_with(const std::string& host_extra, const std::string& sim_extra = {},
                            const std::string& storage = "500 MB/s", const std::string& decode = "25 ms") {
  return R"(name: s
workload: {type: training, model: resnet-50, samples: 1.28M, precision: fp32}
hardware: {gpus: [gtx-1080-ti], max_gpus: 1}
simulate:
  node: supermicro-sys-4028gr-tr2-10x-gtx-1080-ti
  host:
    cpu_cores: 16
    decode_time: )" + decode + R"(
    sample_size: 108 kB
    storage_bandwidth: )" + storage + "\n" + host_extra + sim_extra;
}

std::string inference_with(const std::string& slo, const std::string& arrivals = "{kind: poisson, rate: 50}",
                           const std::string& sim = "") {
  return R"(name: i
workload:
  type: inference
  precision: fp16
  graph:
    - {name: detector, model: horizontal-text-detection-0001}
arrivals: )" + arrivals + R"(
slo: )" + slo + R"(
deployment:
  node: aws-g4dn-xlarge
  stages:
    - {replicas: 1, max_batch: 16, max_queue_delay: 2 ms}
)" + sim;
}

std::string llm_with(const std::string& slo, const std::string& arrivals, const std::string& sim) {
  return R"(name: l
workload: {type: llm-serving, model: llama-2-70b, precision: bf16, prompt_tokens: 1024, output_tokens: 256}
arrivals: )" + arrivals + R"(
slo: )" + slo + R"(
deployment: {node: aws-p5-48xlarge, tensor_parallel: 8, replicas: 1}
)" + sim;
}

std::string cost_with(const std::string& options, const std::string& utilization = "{profile: 24/7}") {
  return R"(name: c
workload: {type: service, gpus: 16}
cost:
  horizon: 24 months
  utilization: )" + utilization + R"(
  options:
)" + options;
}

const std::string kGoodGpu = R"(    name: Test GPU
    vendor: nvidia
    architecture: hopper
    form_factor: sxm
    segment: datacenter
    source: "test"
    as_of: 2024-01
)";

std::string gpu_entry(const std::string& id, const std::string& memory, const std::string& bandwidth,
                      const std::string& extra = {}) {
  return "gpus:\n  - id: " + id + "\n" + kGoodGpu + "    memory: " + memory + "\n    memory_bandwidth: " + bandwidth +
         "\n    peak_dense: {bf16: 989 TFLOPS, fp32: 67 TFLOPS}\n" + extra;
}

std::string instance_entry(const std::string& id, const std::string& gpu, const std::string& price) {
  return "instances:\n  - id: " + id + "\n    provider: aws\n    name: test\n    region: us-east-1\n    gpu: " + gpu +
         "\n    gpu_count: 8\n    price: {on_demand: " + price + "}\n    source: \"test\"\n    as_of: 2024-01\n";
}

// A YAML "billion laughs": 9 levels of 9 aliases each, 9^9 (387 million) leaves if expanded.
std::string yaml_bomb(const std::string& indent_key) {
  std::string s = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string p = "*a" + std::to_string(i - 1);
    s += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p + ", " + p + ", " + p + ", " + p + ", " + p +
         ", " + p + ", " + p + ", " + p + ", " + p + "]\n";
  }
  return s + indent_key + ": *a9\n";
}

std::string deep_lists(int depth) { return "name: [" + std::string(depth, '[') + std::string(depth, ']') + "]\n"; }

std::string deep_maps(int depth) {
  std::string s = "name: ";
  for (int i = 0; i < depth; ++i) s += "{a: ";
  s += "1";
  s += std::string(depth, '}');
  return s + "\n";
}

std::string binary_garbage() {
  std::string s;
  unsigned x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245u + 12345u;
    s.push_back(static_cast<char>((x >> 16) & 0xff));
  }
  return s;
}

std::string deep_json(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string calibration_with(const std::string& replace_from, const std::string& replace_to) {
  std::string text = capsim::testing::read_file(CAPSIM_TEST_DATA_DIR "/calibration/synthetic/h100-sxm-80gb-synthetic.json");
  const auto at = text.find(replace_from);
  if (at != std::string::npos) text.replace(at, replace_from.size(), replace_to);
  return text;
}

// Issue 22: trace paths, input size caps, YAML documents, control characters, names.
template <class AddScenario>
void issue22_cases(std::vector<BadInput>& c, AddScenario scenario) {
  const std::string trace_at = "{kind: trace, rate: 1, trace: ";
  scenario("22.7: absolute arrivals.trace path (/etc/passwd)", inference_with("{p99: 100 ms}", trace_at + "/etc/passwd}"));
  scenario("22.7: arrivals.trace escaping the scenario's directory (../)",
           inference_with("{p99: 100 ms}", trace_at + "../../../../../../etc/passwd}"));
  scenario("22.7: arrivals.trace: /dev/zero", inference_with("{p99: 100 ms}", trace_at + "/dev/zero}"));
  c.push_back({"22.7: a bad trace line is reported by number; its text (a secret?) is not echoed",
               {{"bad.yaml", inference_with("{p99: 100 ms}", trace_at + "trace.txt}")},
                {"trace.txt", "0.5\nroot:x:0:0:root:/root:/bin/bash\n"}},
               "validate bad.yaml", false, "trace.txt:2:"});
  c.push_back({"22.8: validate /dev/zero (grew to 4.2 GB)", {}, "validate /dev/zero", false, "/dev/zero:"});
  c.push_back({"22.8: a 5 MiB scenario file", {{"big.yaml", "name: t\n# " + std::string(5 << 20, 'x') + "\n"}},
               "validate big.yaml", false, "big.yaml:"});
  scenario("22.10: a second YAML document", training_with("---\nname: other\n"));
  scenario("22.10: a broken second YAML document", training_with("---\nname: [unclosed\n"));
  scenario("22.10: ESC in the scenario name", training_with("").replace(0, 8, "name: \"a\\e[31mred\"\n"));
  scenario("22.10: CR in the scenario name", training_with("").replace(0, 8, "name: \"a\\rb\"\n"));
  scenario("22.10: NUL in the description", training_with("description: \"a\\0b\"\n"));
  scenario("22.10: newline in the scenario name", training_with("").replace(0, 8, "name: \"a\\nb\"\n"));
  scenario("22.10: empty name (name: '')", training_with("").replace(0, 8, "name: ''\n"));
  // -- 22.8: budgets for the steps whose work grows faster than their input.
  std::string options;
  for (int i = 0; i < 101; ++i) options += "    - {name: o" + std::to_string(i) + ", instance: aws-p4d-24xlarge}\n";
  scenario("22.8: 101 cost options (the break-even table is quadratic)", cost_with(options), "cost");
  std::string graph = "  graph:\n";
  for (int i = 0; i < 9; ++i) graph += "    - {name: s" + std::to_string(i) + ", model: horizontal-text-detection-0001}\n";
  {
    std::string text = inference_with("{p99: 100 ms}");
    const auto from = text.find("  graph:\n"), to = text.find("arrivals:");
    scenario("22.8: 9 graph stages (serving size took 288 s with 30)", text.replace(from, to - from, graph), "size");
  }
  {
    std::string text = inference_with("{p99: 100 ms}");
    const auto at = text.find("{replicas: 1,");
    scenario("22.8: 10^6 servers to simulate (ran past 300 s at 6.6 GB)",
             text.replace(at, 13, "{replicas: 1000000,"), "simulate");
  }
  std::string key = "a";
  for (int i = 0; i < 32; ++i) key += ".a";
  scenario("22.8: a --set key of 33 parts (60,000 overflowed the stack)", training_with(""), "run --set " + key + "=1",
           "error: --set");
  std::string many;
  for (int i = 0; i < 101; ++i) many += (i ? "," : "") + std::to_string(i + 1) + "B";
  std::string hundred;
  for (int i = 0; i < 100; ++i) hundred += (i ? "," : "") + std::to_string(i);
  scenario("22.8: a sweep of 10,100 points (started without an estimate)", training_with(""),
           "run --sweep 'workload.tokens=" + many + ";description=" + hundred + "'", "error: --sweep");
  // -- 22.9: degenerate values that printed as results.
  scenario("22.9: simulate.duration 1e-300 s", simulation_with("", "  duration: 1e-300 s\n"), "simulate");
  scenario("22.9: decode_time 1e300 s", simulation_with("", "", "500 MB/s", "1e300 s"), "simulate");
  scenario("22.9: cost.horizon 1e-300 months",
           cost_with("    - {name: aws, instance: aws-p4d-24xlarge}\n").replace(cost_with("").find("24 months"), 9,
                                                                            "1e-300 months"),
           "cost");
  scenario("22.9: tokens 1e-300", training_with("").replace(training_with("").find("100M"), 4, "1e-300"));
  scenario("22.9: tokens 1e308", training_with("").replace(training_with("").find("100M"), 4, "1e308"));
  {
    std::string text = capsim::testing::read_file(capsim::testing::example_scenario("llama2-70b-chat-h100"));
    text.replace(text.find("rate: 3}"), 8, "rate: 1000000000}");
    scenario("22.9: serving at 1e9 requests/s recommended 472 M GPUs (max_gpus applies to serving)", text, "size");
  }
  {
    std::string text = capsim::testing::read_file(capsim::testing::example_scenario("road-sign-ocr"));
    text.replace(text.find("fan_out: 3}"), 11, "fan_out: 1000000}");
    scenario("22.9: fan_out 1e6 (showed +2.8 % headroom beside 1.6e7 % utilization: items past the batch were free)",
             text, "size");
  }
}

// issue 47: injection and file leaks. A cluster file with the given workloads (and name).
std::string cluster_with(const std::string& workloads, const std::string& name = "estate",
                         const std::string& node_types = "[gcp-a2-highgpu-1g]") {
  return "name: " + name + "\ncluster:\n  node_types: " + node_types +
         "\n  system_reserve: {cpu: 0.5, memory: 2 GiB}\nworkloads:\n" + workloads;
}

const std::string kNotebooks = "  - name: notebooks\n    service: {gpu: a100-sxm-40gb, replicas: 2}\n    hours: always\n";

std::string scenario_workload(const std::string& path) {
  return "  - name: w\n    scenario: " + path + "\n    hours: always\n";
}

void issue47_injection_cases(std::vector<BadInput>& c) {
  auto cluster = [&](std::string input, std::string text, std::string args, std::string where,
                     std::vector<File> more = {}) {
    more.insert(more.begin(), File{"c.yaml", std::move(text)});
    c.push_back({std::move(input), std::move(more), std::move(args), false, std::move(where)});
  };
  cluster("47.1: newline in a cluster's name (became a line of the plan --export gke script)",
          cluster_with(kNotebooks, "\"estate\\ntouch pwned\""), "plan --export gke c.yaml", "c.yaml:1:7:");
  cluster("47.1: newline in a workload's name (added a Kubernetes object to plan --export k8s)",
          cluster_with("  - name: \"nb\\n---\\nkind: Secret\"\n    service: {gpu: a100-sxm-40gb, replicas: 1}\n"
                       "    hours: always\n"),
          "plan --export k8s c.yaml", "c.yaml:6:11:");
  const std::string gcp_scenario = capsim::testing::read_file(capsim::testing::example_scenario("resnet101-small-gpus"));
  auto flag = [&](std::string input, std::string args, std::string where) {
    c.push_back({std::move(input), {{"gcp.yaml", gcp_scenario}}, std::move(args), false, std::move(where)});
  };
  flag("47.1: --cluster 'x; touch pwned' (a second command in the gke script)",
       "export gke gcp.yaml --cluster 'x; touch pwned'", "error: --cluster");
  flag("47.1: --cluster 'Bad Cluster'", "export gke gcp.yaml --cluster 'Bad Cluster'", "error: --cluster");
  flag("47.1: --image ' x'", "export k8s gcp.yaml --image ' x'", "error: --image");
  flag("47.1: --location nowhere", "export gke gcp.yaml --location nowhere", "error: --location");
  flag("47.1: --location us-centrl1 (a typo)", "export terraform gcp.yaml --location us-centrl1", "error: --location");
  cluster("47.1: plan --export gke --location nowhere",
          cluster_with(kNotebooks), "plan --export gke --location nowhere c.yaml", "error: --location");
  cluster("47.2: absolute scenario: path in a cluster file (/etc/passwd)", cluster_with(scenario_workload("/etc/passwd")),
          "plan c.yaml", "c.yaml:7:15:");
  cluster("47.2: scenario: path escaping the cluster file's folder (../)",
          cluster_with(scenario_workload("../../../../../../etc/passwd")), "plan c.yaml", "c.yaml:7:15:");
  c.push_back({"47.2: a cluster workload's scenario: that is no scenario (a .env of secrets; its content is not shown)",
               {{"c.yaml", cluster_with(scenario_workload("secrets.env"))},
                {"secrets.env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"}},
               "plan c.yaml", false, "secrets.env:1:1:", 2, "", "", "wJalrXUtnFEMI"});
  c.push_back({"47.2: a scenario file that is a mapping of secrets (none of its keys is shown)",
               {{"bad.yaml", "{\"type\": \"service_account\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\"}\n"}},
               "validate bad.yaml", false, "bad.yaml:1:1:", 2, "", "", "private_key"});
  cluster("47.2: a right-to-left override (U+202E) in a cluster's name and a workload's",
          cluster_with("  - name: \"nb\\u202Eexe.txt\"\n    service: {gpu: a100-sxm-40gb, replicas: 1}\n    hours: always\n",
                       "\"estate\\u202E\""),
          "plan c.yaml", "c.yaml:1:7:");
  c.push_back({"47.2: a right-to-left override (U+202E) in a scenario's description",
               {{"bad.yaml", training_with("description: \"abc\\u202Efdp.exe\"\n")}}, "validate bad.yaml", false,
               "bad.yaml:"});
  c.push_back({"47.1: a workload named =HYPERLINK(...) in the CSV report (written as text, not a formula)",
               {{"c.yaml", cluster_with("  - name: '=HYPERLINK(\"http://example.com\",\"x\")'\n"
                                        "    service: {gpu: a100-sxm-40gb, replicas: 1}\n    hours: always\n")}},
               "plan c.yaml --report r.csv", false, "", 0, "r-workloads.csv", "HYPERLINK"});
  c.push_back({"47.1: a cost option named =cmd|' /C calc'!A0 in the CSV report",
               {{"bad.yaml", cost_with("    - {name: \"=cmd|' /C calc'!A0\", instance: aws-p4d-24xlarge}\n")}},
               "report bad.yaml -o r.csv --table cost", false, "", 0, "r.csv", "cmd"});
  c.push_back({"47.1: raw HTML in a cluster's name, Markdown report (written as &amp;lt; entities)",
               {{"c.yaml", cluster_with(kNotebooks, "'<img src=x onerror=alert(1)>'")}},
               "plan c.yaml --report r.md", false, "", 0, "r.md", "# Cluster plan"});
}

std::string replaced(std::string text, const std::string& from, const std::string& to);

std::vector<BadInput> catalogue() {
  std::vector<BadInput> c;
  auto scenario = [&](std::string input, std::string text, std::string command = "validate", std::string where = "") {
    c.push_back({std::move(input), {{"bad.yaml", std::move(text)}}, command + " bad.yaml", false,
                 where.empty() ? "bad.yaml:" : where});
  };
  // -- Files that are not scenarios at all
  scenario("empty file", "");
  scenario("only a comment", "# nothing here\n");
  scenario("binary garbage (4 KiB of random bytes)", binary_garbage());
  scenario("NUL bytes inside the YAML", std::string("name: a\0b\nworkload: {type: training}\n", 37));
  scenario("YAML syntax error (unclosed bracket)", "name: t\nhardware: {gpus: [h100-sxm-80gb\n");
  scenario("a list instead of a mapping", "- name: t\n- workload: training\n");
  scenario("a single scalar", "just some text\n");
  scenario("tab indentation", "name: t\nworkload:\n\ttype: training\n");
  c.push_back({"scenario file that does not exist", {}, "validate missing.yaml", false, "missing.yaml:"});
  c.push_back({"scenario path is a directory", {{"dir/.keep", ""}}, "validate dir", false, "dir:"});
  // -- Resource attacks on the parser
  scenario("YAML bomb: 9 levels of 9 aliases (billion laughs) under a known key",
           "name: t\n" + yaml_bomb("description"));
  scenario("YAML bomb at the top level (aliases as the hardware section)",
           yaml_bomb("hardware") + "name: t\nworkload: {type: training, model: llama-2-7b, tokens: 1B}\n");
  scenario("deep nesting: 10,000 levels of lists", deep_lists(10000));
  scenario("deep nesting: 10,000 levels of mappings", deep_maps(10000));
  scenario("a 1 MB key", "name: t\n" + std::string(1 << 20, 'k') + ": 1\n");
  // -- Numbers
  scenario("huge quantity: sample_size 1e308 GB (overflows a double)",
           simulation_with("").replace(simulation_with("").find("108 kB"), 6, "1e308 GB"));
  scenario("number out of double range: tokens 1e400", training_with("").replace(training_with("").find("100M"), 4, "1e400"));
  scenario("negative quantity: deadline -2 d", training_with("deadline: -2 d\n"));
  scenario("zero quantity: deadline 0 s", training_with("deadline: 0 s\n"));
  scenario("negative count: tokens -5B", training_with("").replace(training_with("").find("100M"), 4, "-5B"));
  scenario("zero count: tokens 0", training_with("").replace(training_with("").find("100M"), 4, "0"));
  scenario("NaN literal: epochs .nan", training_with("").replace(training_with("").find("  tokens"), 0, "  epochs: .nan\n"));
  scenario("infinity literal: simulate duration .inf s", simulation_with("", "  duration: .inf s\n"));
  scenario("infinity literal: deadline .inf", training_with("deadline: .inf\n"));
  scenario("NaN in a quantity: deadline nan d", training_with("deadline: nan d\n"));
  scenario("integer overflow: max_gpus 99999999999999999999", training_with("").replace(training_with("").find("max_gpus: 8"), 11, "max_gpus: 99999999999999999999"));
  scenario("fractional integer: global_batch 1.5", training_with("").replace(training_with("").find("  tokens"), 0, "  global_batch: 1.5\n"));
  scenario("zero global_batch", training_with("").replace(training_with("").find("  tokens"), 0, "  global_batch: 0\n"));
  // -- Units
  scenario("wrong unit: deadline 2 GB", training_with("deadline: 2 GB\n"));
  scenario("unknown unit: deadline 2 fortnights", training_with("deadline: 2 fortnights\n"));
  scenario("missing unit: deadline 90", training_with("deadline: 90\n"));
  scenario("bandwidth in bits where bytes expected is fine, but a latency as a bandwidth is not",
           simulation_with("", "", "5 ms"));
  // -- Keys
  scenario("unknown top-level key (typo: hardwear)", "name: t\nworkload: {type: training, model: llama-2-7b, tokens: 1B}\nhardwear: {gpus: [h100-sxm-80gb]}\n");
  scenario("unknown nested key (typo: max_gpu)", training_with("").replace(training_with("").find("max_gpus"), 8, "max_gpu"));
  scenario("duplicate top-level key", training_with("name: again\n"));
  scenario("duplicate nested key", training_with("").replace(training_with("").find("  max_gpus"), 0, "  gpus: [a100-sxm-80gb]\n"));
  scenario("missing required key: name", training_with("").substr(8));
  scenario("wrong type: max_gpus is a list", training_with("").replace(training_with("").find("max_gpus: 8"), 11, "max_gpus: [1, 2]"));
  // -- Dangling ids
  scenario("dangling GPU id", training_with("").replace(training_with("").find("h100-sxm-80gb"), 13, "h100-sxm-90gb"));
  scenario("dangling simulate.node", simulation_with("").replace(simulation_with("").find("supermicro-sys"), 14, "supermicro-xyz"));
  scenario("dangling deployment.node", inference_with("{p99: 100 ms}").replace(inference_with("{p99: 100 ms}").find("aws-g4dn-xlarge"), 15, "aws-g9-xlarge"));
  scenario("dangling cost facility", cost_with("    - {name: own, server: dgx-a100, facility: moon-base, idle_power: 30 %}\n"), "cost");
  scenario("unknown model preset", training_with("").replace(training_with("").find("llama-2-7b"), 10, "llama-9-7b"));
  scenario("missing trace file", inference_with("{p99: 100 ms}", "{kind: trace, rate: 1, trace: nowhere.txt}"));
  c.push_back({"trace file with times going backwards",
               {{"bad.yaml", inference_with("{p99: 100 ms}", "{kind: trace, rate: 1, trace: trace.txt}")},
                {"trace.txt", "0.1\n0.2\n0.15\n"}},
               "validate bad.yaml", false, "trace.txt:3:"});
  scenario("malformed expectation", training_with("expect:\n  - training_time << 2 d\n"));
  scenario("expectation on an unknown metric", training_with("expect:\n  - happiness > 3\n"));
  // -- Limits and impossible requests
  scenario("10^7 GPUs: max_gpus 10000000", training_with("").replace(training_with("").find("max_gpus: 8"), 11, "max_gpus: 10000000"), "size");
  scenario("min_gpus larger than max_gpus", training_with("  min_gpus: 64\n"));
  scenario("min_gpus larger than max_gpus, and a typo (deadlin) elsewhere: both reported",
           training_with("  min_gpus: 64\ndeadlin: 2 d\n"));
  scenario("custom model: hidden not a multiple of heads",
           "name: t\nworkload:\n  type: training\n  model: {layers: 2, hidden: 100, heads: 3, vocab: 1000, seq_len: 128}\n"
           "  tokens: 1B\nhardware: {gpus: [h100-sxm-80gb]}\n");
  scenario("seq_len beyond the schema range (1e9)", training_with("").replace(training_with("").find("  tokens"), 0, "  seq_len: 1000000000\n"));
  // (An impossible SLO on a stated deployment is not bad input: the plan misses it, says so and
  // fails run --check; runner_test.cpp, "a serving plan that misses its SLO".)
  scenario("impossible SLO: p99 of 1 ns (size)", inference_with("{p99: 1 ns}").replace(inference_with("{p99: 1 ns}").find("deployment:"), 0, "hardware: {gpus: [t4]}\n"), "size");
  scenario("10^12 events: training pipeline simulated for 1e9 s", simulation_with("", "  duration: 1e9 s\n"), "simulate");
  scenario("10^12 events: serving at 1e6 requests/s for 1e6 s",
           inference_with("{p99: 100 ms}", "{kind: poisson, rate: 1000000}", "simulate: {duration: 1e6 s}\n"), "simulate");
  scenario("10^12 events: LLM serving at 1e6 requests/s for 1e6 s",
           llm_with("{ttft_p99: 2 s, tpot_p99: 100 ms}", "{kind: poisson, rate: 1000000}", "simulate: {duration: 1e6 s}\n"),
           "simulate");
  scenario("arrival rate of zero", inference_with("{p99: 100 ms}", "{kind: poisson, rate: 0}"));
  // Your own served model: described, or measured per GPU (inline or a CSV beside the scenario).
  auto own_model = [](const std::string& model) {
    std::string s = inference_with("{p99: 100 ms}");
    return s.replace(s.find("model: horizontal-text-detection-0001"), 37, "model: " + model);
  };
  scenario("served model: latency without a unit",
           own_model("{latency: [{gpu: t4, batch: 1, latency: 4.6}]}"));
  scenario("served model: negative latency",
           own_model("{latency: [{gpu: t4, batch: 1, latency: -4.6 ms}]}"));
  scenario("served model: batches not increasing",
           own_model("{latency: [{gpu: t4, batch: 8, latency: 20 ms}, {gpu: t4, batch: 4, latency: 12 ms}]}"));
  scenario("served model: latency falling as the batch grows",
           own_model("{latency: [{gpu: t4, batch: 1, latency: 20 ms}, {gpu: t4, batch: 8, latency: 12 ms}]}"));
  scenario("served model: FLOPs without a unit", own_model("{flops_per_sample: 8.2e9, params: 25.6 M}"));
  scenario("served model: neither FLOPs nor a measured table", own_model("{params: 25.6 M}"));
  scenario("served model: unknown preset", own_model("resnet-5O"));
  scenario("engine_speedup of zero",
           own_model("resnet-50").replace(own_model("resnet-50").find("  graph:"), 0, "  engine_speedup: 0\n"));
  c.push_back({"served model: CSV latency table without units in its header",
               {{"bad.yaml", own_model("{latency_file: t4.csv}")}, {"t4.csv", "gpu,batch,latency\nt4,1,4.6\n"}},
               "validate bad.yaml", false, "t4.csv:1:"});
  c.push_back({"served model: CSV row with a negative latency",
               {{"bad.yaml", own_model("{latency_file: t4.csv}")}, {"t4.csv", "gpu,batch,latency_ms\nt4,1,4.6\nt4,8,-20\n"}},
               "validate bad.yaml", false, "t4.csv:3:"});
  scenario("zero storage bandwidth (division by zero)", simulation_with("", "", "0 MB/s"), "simulate");
  scenario("zero decode time", simulation_with("", "", "500 MB/s", "0 s"), "simulate");
  scenario("zero utilization (busy 0 %)", cost_with("    - {name: aws, instance: aws-p4d-24xlarge}\n", "{profile: measured, busy: 0 %}"), "cost");
  scenario("cost option naming neither instance nor server", cost_with("    - {name: nothing}\n"), "cost");
  // -- Catalog files
  auto catalog_file = [&](std::string input, std::string text, std::string where = "bad.yaml:") {
    c.push_back({std::move(input), {{"bad.yaml", std::move(text)}}, "catalog validate bad.yaml", false, "./" + where});
  };
  catalog_file("catalog: binary garbage", binary_garbage());
  catalog_file("catalog: YAML bomb (billion laughs)", yaml_bomb("gpus"));
  catalog_file("catalog: deep nesting, 10,000 levels", "gpus: " + std::string(10000, '[') + std::string(10000, ']') + "\n");
  catalog_file("catalog: GPU memory 1e308 GB", gpu_entry("test-gpu", "1e308 GB", "3 TB/s"));
  catalog_file("catalog: GPU memory 1e400 GB", gpu_entry("test-gpu", "1e400 GB", "3 TB/s"));
  catalog_file("catalog: negative GPU memory", gpu_entry("test-gpu", "-80 GB", "3 TB/s"));
  catalog_file("catalog: zero memory bandwidth", gpu_entry("test-gpu", "80 GB", "0 TB/s"));
  catalog_file("catalog: .nan memory bandwidth", gpu_entry("test-gpu", "80 GB", ".nan"));
  catalog_file("catalog: wrong unit (memory in TB/s)", gpu_entry("test-gpu", "80 TB/s", "3 TB/s"));
  catalog_file("catalog: unknown key", gpu_entry("test-gpu", "80 GB", "3 TB/s", "    memroy_clock: 1 GHz\n"));
  catalog_file("catalog: duplicate key", gpu_entry("test-gpu", "80 GB", "3 TB/s", "    memory: 81 GB\n"));
  catalog_file("catalog: duplicate id", gpu_entry("test-gpu", "80 GB", "3 TB/s") +
                                            gpu_entry("test-gpu", "80 GB", "3 TB/s").substr(6));
  catalog_file("catalog: invalid id", gpu_entry("Test_GPU", "80 GB", "3 TB/s"));
  catalog_file("catalog: instance naming a GPU that does not exist", instance_entry("test-inst", "no-such-gpu", "1 USD/h"));
  catalog_file("catalog: zero instance price", gpu_entry("test-gpu", "80 GB", "3 TB/s") + instance_entry("test-inst", "test-gpu", "0 USD/h"));
  catalog_file("catalog: negative instance price", gpu_entry("test-gpu", "80 GB", "3 TB/s") + instance_entry("test-inst", "test-gpu", "-1 USD/h"));
  catalog_file("catalog: missing source and as_of",
               "gpus:\n  - id: test-gpu\n    name: T\n    vendor: nvidia\n    architecture: x\n    form_factor: sxm\n"
               "    segment: datacenter\n    memory: 80 GB\n    memory_bandwidth: 3 TB/s\n");
  c.push_back({"catalog directory with no YAML files", {{"empty/.keep", ""}}, "catalog validate empty", false, "empty:"});
  // -- Calibration profiles
  auto profile = [&](std::string input, std::string text, std::string where = "bad.json:") {
    c.push_back({std::move(input), {{"bad.json", std::move(text)}}, "catalog import-calibration bad.json", false, std::move(where)});
  };
  profile("calibration: empty file", "");
  profile("calibration: not JSON", "schema = capsim\n");
  profile("calibration: binary garbage", binary_garbage());
  profile("calibration: deep nesting, 10,000 levels", deep_json(10000));
  profile("calibration: wrong schema", calibration_with("capsim-calibration/1", "capsim-calibration/9"));
  profile("calibration: NaN literal", calibration_with("\"median\": ", "\"median\": NaN, \"x\": "));
  profile("calibration: number out of range (1e400)", calibration_with("\"median\": ", "\"median\": 1e400, \"x\": "));
  profile("calibration: negative median", calibration_with("\"median\": ", "\"median\": -1, \"x\": "));
  profile("calibration: unknown key", calibration_with("\"synthetic\"", "\"synthetik\": true, \"synthetic\""));
  profile("calibration: duplicate key", calibration_with("\"synthetic\"", "\"synthetic\": true, \"synthetic\""));
  // -- Quantities and counts on the command line
  auto flag = [&](std::string input, std::string args, std::string where) {
    c.push_back({std::move(input), {}, std::move(args), false, std::move(where)});
  };
  flag("--params 1e400", "memory --params 1e400", "error: --params");
  flag("--params -7B", "memory --params=-7B", "error: --params");
  flag("--params nan", "memory --params nan", "error: --params");
  flag("--params 0", "memory --params 0", "error: --params");
  flag("--overhead 'inf %'", "memory --params 7B --overhead 'inf %'", "error: --overhead");
  flag("--where with a huge quantity (1e308 TB)", "catalog list gpus --where 'memory>=1e308 TB'", "error: --where");
  flag("--where with a wrong unit", "catalog list gpus --where 'memory>=80 parsecs'", "error: --where");
  // -- Files that need a catalog of their own: division-by-zero probes
  c.push_back({"zero-bandwidth GPU in the catalog, sized by a scenario",
               {{"catalog/zz-test.yaml", gpu_entry("test-gpu", "80 GB", "0 TB/s") + instance_entry("test-inst", "test-gpu", "10 USD/h")},
                {"bad.yaml", training_with("").replace(training_with("").find("h100-sxm-80gb"), 13, "test-gpu")}},
               "--catalog catalog size bad.yaml", true, "catalog/zz-test.yaml:"});
  c.push_back({"zero-price instance in the catalog, costed by a scenario",
               {{"catalog/zz-test.yaml", instance_entry("test-inst", "h100-sxm-80gb", "0 USD/h")},
                {"bad.yaml", cost_with("    - {name: free, instance: test-inst}\n")}},
               "--catalog catalog cost bad.yaml", true, "catalog/zz-test.yaml:"});
  issue22_cases(c, scenario);
  // issue 47: injection and file leaks
  issue47_injection_cases(c);
  // -- issue 47: budgets, not measured, degenerate data
  {
    const std::string ocr = capsim::testing::read_file(capsim::testing::example_scenario("road-sign-ocr"));
    scenario("47: fan_out 0.000001, the schema's old minimum (grew to 24 GB until killed)",
             replaced(ocr, "fan_out: 3}", "fan_out: 0.000001}"), "size");
    scenario("47: fan_out 0.0005: a deployed batch of 64 inputs is 128,000 requests",
             replaced(ocr, "fan_out: 3}", "fan_out: 0.0005}"), "simulate");
    std::string sized = replaced(ocr, "fan_out: 3}", "fan_out: 0.0001}");
    sized.erase(sized.find("deployment:"), sized.find("simulate:") - sized.find("deployment:"));
    scenario("47: fan_out 0.0001 sized with the default batches (up to 32 inputs: 320,000 requests)", sized, "size");
  }
  auto cluster_with = [](const std::string& node_types, const std::string& workloads) {
    return "name: c\ncluster:\n  node_types: [" + node_types + "]\n  system_reserve: {cpu: 0.5, memory: 2 GiB}\nworkloads:\n" +
           workloads;
  };
  {
    std::string many, big;
    for (int i = 0; i < 1001; ++i)
      many += "  - {name: w" + std::to_string(i) + ", service: {gpu: l4, replicas: 1, gpu_memory: 18 GiB}, hours: business}\n";
    for (int i = 0; i < 4; ++i)
      big += "  - {name: s" + std::to_string(i) + ", service: {gpu: l4, replicas: 10000, gpu_memory: 18 GiB}, hours: business}\n";
    scenario("47: a cluster of 1,001 workloads (10,000 took 237 s to pack)", cluster_with("aws-g6-xlarge", many), "plan");
    scenario("47: a cluster of 4 services x 10,000 replicas (21 s to pack)", cluster_with("aws-g6-xlarge", big), "plan");
    scenario("47: a cluster job of 2,000 GPUs on one-GPU nodes (2,000 pods, counted before they are made)",
             cluster_with("aws-g6-xlarge", "  - {name: big, job: {gpu: l4, gpus: 2000, run_time: 3 h}, hours: always}\n"),
             "plan");
  }
  {
    const std::string llm = capsim::testing::read_file(capsim::testing::example_scenario("llama2-70b-chat-h100"));
    scenario("47: a stated deployment of 10^6 LLM replicas (planned 8,000,000 GPUs past max_gpus)",
             replaced(llm, "replicas: 1}", "replicas: 1000000}"), "simulate");
    scenario("47: stated stages of 5,000 exclusive replicas, past the default max_gpus of 4096",
             replaced(inference_with("{p99: 100 ms}"), "{replicas: 1,", "{replicas: 5000,"), "simulate");
    scenario("47: stated MIG replicas that pack onto 5 GPUs beside max_gpus: 2",
             replaced(inference_with("{p99: 100 ms}"), "deployment:\n  node: aws-g4dn-xlarge\n  stages:\n    - {replicas: 1,",
                      "hardware: {max_gpus: 2}\ndeployment:\n  node: aws-p4d-24xlarge\n  sharing: mig\n  stages:\n"
                      "    - {replicas: 30, mig_profile: 1g.5gb,"),
             "simulate");
  }
  {
    const std::string l31 = "name: l\nworkload: {type: llm-serving, model: llama-3.1-8b, precision: bf16, prompt_tokens: 1000000, "
                            "output_tokens: 256}\narrivals: {kind: poisson, rate: 1}\nslo: {ttft_p99: 2 s, tpot_p99: 100 ms}\n"
                            "deployment: {node: aws-p5-48xlarge, tensor_parallel: 8, replicas: 1}\n";
    scenario("47: a 1,000,000-token prompt on llama-3.1-8b (context 131,072)", l31);
    c.push_back({"47: a request_lengths line longer than llama-3.1-8b's context",
                 {{"bad.yaml", replaced(l31, "prompt_tokens: 1000000, output_tokens: 256", "request_lengths: l.csv")},
                  {"l.csv", "prompt_tokens,output_tokens\n100,20\n131000,200\n"}},
                 "validate bad.yaml", false, "l.csv:3:"});
  }
  scenario("47: a measured vision latency of 1e-300 s (printed p99 0 s and passed)",
           own_model("{latency: [{gpu: t4, batch: 1, latency: 1e-300 s}]}"));
  scenario("47: a measured vision latency of 1e300 s", own_model("{latency: [{gpu: t4, batch: 1, latency: 1e300 s}]}"));
  c.push_back({"47: a latency_file row of 1e-300 ms",
               {{"bad.yaml", own_model("{latency_file: t4.csv}")}, {"t4.csv", "gpu,batch,latency_ms\nt4,1,1e-300\n"}},
               "validate bad.yaml", false, "t4.csv:2:"});
  auto rates = [](const std::string& list) {
    return "name: c\nworkload: {type: service, gpus: 1}\ncost:\n  horizon: 24 months\n  exchange_rates:\n" + list +
           "  options:\n    - {name: y, instance: yandex-standard-v3-t4-4vcpu-16gb}\n";
  };
  scenario("47: a scenario exchange rate of 1e-300 USD per RUB", rates("    - {currency: RUB, usd: 1e-300, source: x}\n"), "cost");
  scenario("47: a scenario exchange rate of 1e300 USD per RUB", rates("    - {currency: RUB, usd: 1e300, source: x}\n"), "cost");
  scenario("47: two scenario rates for RUB (the first won silently)",
           rates("    - {currency: RUB, usd: 0.011833, source: x}\n    - {currency: RUB, usd: 0.02, source: y}\n"), "cost");
  auto rate_entry = [](const std::string& id, const std::string& usd) {
    return "  - id: " + id + "\n    currency: RUB\n    usd: " + usd + "\n    source: \"test\"\n    as_of: 2026-09-18\n";
  };
  catalog_file("47: catalog exchange rate of 1e-300 USD per RUB (printed '1 RUB = 0 USD')",
               "exchange_rates:\n" + rate_entry("rub-tiny", "1e-300"));
  catalog_file("47: catalog exchange rate of 1e300 USD per RUB", "exchange_rates:\n" + rate_entry("rub-huge", "1e300"));
  catalog_file("47: two catalog RUB rates as of the same day",
               "exchange_rates:\n" + rate_entry("rub-a", "0.011833") + rate_entry("rub-b", "0.02"));
  {
    std::string row = capsim::testing::read_file(CAPSIM_TEST_DATA_DIR "/validation/vision_inference.yaml");
    row = row.substr(0, row.find("\n  - id:", row.find("rows:\n") + 6));  // the header and the first row
    c.push_back({"47: a validation row with batch: 1e9 (predicted at +8.7e9 %)",
                 {{"val/v.yaml", replaced(row, "batch: 1\n", "batch: 1e9\n") + "\n"}}, "accuracy --dir val", false,
                 "val/v.yaml:"});
  }
  return c;
}

// ---- The table ----

std::string cell(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += "\\|";
    else if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else if (ch == '\n') out += "<br>";
    else if (static_cast<unsigned char>(ch) < 0x20) out += ' ';
    else out += ch;
  }
  return out;
}

// The first lines of stderr with the case directory removed, long lines shortened.
std::string message_of(const std::string& err, const fs::path& dir) {
  std::istringstream in(err);
  std::string out;
  int lines = 0, total = 0;
  for (std::string line; std::getline(in, line);) {
    ++total;
    if (lines == 3) continue;
    for (auto at = line.find(dir.string() + "/"); at != std::string::npos; at = line.find(dir.string() + "/"))
      line.erase(at, dir.string().size() + 1);
    if (line.size() > 300) line = line.substr(0, 300) + "...";
    out += (lines ? "\n" : "") + line;
    ++lines;
  }
  if (total > lines) out += "\n(" + std::to_string(total - lines) + " more lines)";
  return out;
}

void copy_shipped_catalog(const fs::path& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(CAPSIM_TEST_DATA_DIR "/catalog"))
    fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
}

// Cyclic pipelines have no file format (the DES pipeline is built in code), so the table
// shows what des::Pipeline::validate says about one.
std::string cyclic_pipeline_message() {
  using namespace capsim::des;
  Pipeline p;
  const auto src = p.add_source(SourceSpec::closed("jobs", 100));
  StationSpec a;
  a.name = "a";
  a.service = ServiceTime::exponential(capsim::Seconds(0.01));
  a.queue_capacity = 1;
  StationSpec b = a;
  b.name = "b";
  const auto na = p.add_station(a), nb = p.add_station(b);
  const auto sink = p.add_sink({"done"});
  p.connect(src, na);
  p.connect(na, nb);
  p.connect(nb, na, std::nullopt, 0.5);
  p.connect(nb, sink, std::nullopt, 0.5);
  return capsim::format_diagnostics(p.validate());
}

// Issue 22's failures that are not bad input: an expectation on what a run did not measure
// (exit 1) and a broken environment (exit 3: a full disk, a corrupt or newer database, a bad
// TMPDIR). Each is set up by a shell line, then capsim runs with `env` before it.
struct EnvironmentCase {
  std::string input;
  std::string setup;  // shell, in the case directory, before capsim runs ("" for none)
  std::string env;    // VAR=value ... for capsim's run
  std::string args;
  int exit_code = 3;
  std::string needle;  // exit 1: the output line holding this is the message
};

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

std::vector<EnvironmentCase> environment_cases() {
  const std::string lora = "lora.yaml";  // the shipped lora-7b-one-node example, copied beside
  const std::string capsim_bin = CAPSIM_BINARY;
  return {
      {"22.1: LLM serving whose 1 ms window completes no request; run --check", "", "",
       "run --check --no-history short-llm.yaml", 1, "was not measured"},
      {"22.1: training simulation whose 2 ms window completes no sample; run --check", "", "",
       "run --check --no-history short-training.yaml", 1, "was not measured"},
      {"22.2: report -o r.pdf over a valid r.pdf on a full disk (writes past 50 KB fail: ulimit -f 100)",
       "'" + capsim_bin + "' report '" + lora + "' -o r.pdf && trap '' XFSZ && ulimit -f 100", "",
       "report '" + lora + "' -o r.pdf", 3, ""},
      {"22.3: a zeroed page of the run history",
       "'" + capsim_bin + "' run '" + lora + "' > /dev/null && '" + capsim_bin + "' run '" + lora +
           "' > /dev/null && sqlite3 capsim.db 'PRAGMA wal_checkpoint(TRUNCATE);' > /dev/null && "
           "p=$(sqlite3 capsim.db \"SELECT rootpage FROM sqlite_master WHERE name = 'runs'\") && "
           "dd if=/dev/zero of=capsim.db bs=4096 seek=$((p - 1)) count=1 conv=notrunc 2> /dev/null",
       "", "history list", 3, ""},
      {"22.4: a database whose schema_version is newer (99)",
       "'" + capsim_bin + "' catalog list > /dev/null && sqlite3 capsim.db \"UPDATE meta SET value = '99' WHERE key = "
       "'schema_version'\"",
       "", "size '" + lora + "'", 3, ""},
      {"22.5: the database is not a database (a text file)", "yes 'not a database' | head -n 200 > capsim.db", "",
       "size '" + lora + "'", 3, ""},
      {"22.6: a TMPDIR that does not exist, for a sweep", "", "TMPDIR=/nonexistent/capsim",
       "run '" + lora + "' --sweep 'description=a,b'", 3, ""},
      // issue 47: writes and storage (the devices, read-only folders and full disks are in
      // tests/reliability/issue47_io_test.cpp: they need a user switch or a mount namespace).
      {"47: an output path that is a symbolic link to a file (refused, exit 2: the link and its file stay)",
       "echo old > real.md && ln -s real.md link.md", "", "report '" + lora + "' -o link.md", 2, ""},
      {"47: an output path that is a symbolic link to nothing (refused, exit 2)", "ln -s missing.xml link.xml", "",
       "run --no-history '" + lora + "' --junit link.xml", 2, ""},
      // -- issue 47: budgets, not measured, degenerate data
      {"47: TensorRT ResNet-50 whose 1 ms window completes no request: the shipped 'throughput < 3380' passed at 0; "
       "run --check",
       "", "", "run --check --no-history short-vision.yaml", 1, "throughput < 3380"},
  };
}

std::string environment_table() {
  const fs::path root = capsim::testing::scratch_dir("environment-cases");
  std::string llm = capsim::testing::read_file(capsim::testing::example_scenario("llama2-70b-chat-h100"));
  const auto sim = llm.find("simulate: {duration: 300 s, warmup: 60 s, seed: 1}");
  REQUIRE(sim != std::string::npos);
  llm.replace(sim, std::string("simulate: {duration: 300 s, warmup: 60 s, seed: 1}").size(),
              "simulate: {duration: 1 ms, warmup: 1 ms, seed: 1}");
  const std::string lora = capsim::testing::read_file(capsim::testing::example_scenario("lora-7b-one-node"));
  const std::string vision =
      replaced(capsim::testing::read_file(capsim::testing::example_scenario("resnet50-t4-tensorrt-fp16")),
               "simulate: {duration: 30 s, warmup: 5 s, seed: 1}", "simulate: {duration: 1 ms, warmup: 1 ms, seed: 1}");
  const std::string training = replaced(
      replaced(capsim::testing::read_file(capsim::testing::example_scenario("resnet50-1080ti-4vcpu")),
               "duration: 5 min", "duration: 2 ms"),
      "warmup: 30 s", "warmup: 1 ms");
  std::string table =
      "\n## Not bad input: what a run did not measure, and a broken environment\n\n"
      "Generated by the same test. An expectation on a metric the run did not measure fails (exit 1, the line "
      "`run --check` prints); a failure of the machine rather than the input exits 3 and leaves the old file or "
      "database as it was (tests/reliability/issue22_test.cpp pins each in detail).\n\n"
      "| # | case | command | exit | message |\n|---|---|---|---|---|\n";
  int index = 0;
  for (const auto& c : environment_cases()) {
    ++index;
    const fs::path dir = root / ("case-" + std::to_string(index));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "short-llm.yaml") << llm;
    std::ofstream(dir / "short-training.yaml") << training;
    std::ofstream(dir / "lora.yaml") << lora;
    std::ofstream(dir / "short-vision.yaml") << vision;
    const std::string cmd = "cd '" + dir.string() + "' && export CAPSIM_DB=capsim.db && " +
                            (c.setup.empty() ? "" : c.setup + " && ") + c.env + (c.env.empty() ? "" : " ") + "'" +
                            CAPSIM_BINARY + "' " + c.args + " > .stdout 2> .stderr < /dev/null";
    const int status = std::system(cmd.c_str());
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const std::string out = capsim::testing::read_file(dir / ".stdout");
    const std::string err = capsim::testing::read_file(dir / ".stderr");
    CAPTURE(c.input);
    CAPTURE(err);
    CHECK(code == c.exit_code);
    std::string message;
    if (c.exit_code == 1) {
      std::istringstream in(out);
      for (std::string line; std::getline(in, line);)
        if (line.find(c.needle) != std::string::npos) {
          message = line.substr(line.find_first_not_of(' '));
          break;
        }
      CHECK_FALSE(message.empty());
    } else {
      // SQLite's integrity report names pages, which move as the catalog grows.
      message = std::regex_replace(message_of(err, dir), std::regex(R"(\(\*\*\* in database main \*\*\*.*\) \(restore)"),
                                   "(*** in database main *** ...) (restore");
      CHECK_FALSE(message.empty());
    }
    table += "| " + std::to_string(index) + " | " + cell(c.input) + " | `capsim " + cell(c.args) + "` | " +
             std::to_string(code) + " | " + cell(message) + " |\n";
  }
  fs::remove_all(root);
  return table;
}

}  // namespace

TEST_CASE("bad inputs: each fails with exit 2, a location and a message, in bounded time and memory") {
  const fs::path root = capsim::testing::scratch_dir("bad-inputs");
  const auto cases = catalogue();
  REQUIRE(cases.size() >= 50);
  std::string table =
      "# Bad inputs and what capsim says\n\n"
      "Generated by `tests/reliability/bad_inputs_test.cpp` (do not edit; `CAPSIM_UPDATE_GOLDEN=1` rewrites it). "
      "Every input a user could get wrong, run through the real `capsim` binary in a directory of its own "
      "under `timeout 20` and `ulimit -v 4000000`. Each must exit with code 2 and a message that names the file, "
      "line and column (or the flag) within the limits. The rows of exit 0 are outputs that keep hostile text as text "
      "(issue 47); their message is the line of the output it became.\n\n"
      "| # | input | command | exit | message |\n|---|---|---|---|---|\n";
  int index = 0;
  for (const auto& bad : cases) {
    ++index;
    const fs::path dir = root / ("case-" + std::to_string(index));
    fs::remove_all(dir);
    fs::create_directories(dir);
    if (bad.copy_catalog) copy_shipped_catalog(dir / "catalog");
    for (const auto& f : bad.files) {
      fs::create_directories((dir / f.path).parent_path());
      std::ofstream(dir / f.path, std::ios::binary) << f.content;
    }
    const int limit = capsim::testing::kTimeLimitSeconds;
    const auto run = run_capsim(dir, bad.args, bad.copy_catalog ? "capsim.db" : (root / "shared.db").string(), limit);
    std::string message = message_of(run.err, dir);
    if (!bad.needle.empty()) {  // exit 0: the output line that shows what became of the input
      const std::string text = bad.output == "-" ? run.out : capsim::testing::read_file(dir / bad.output);
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);)
        if (line.find(bad.needle) != std::string::npos) {
          if (!line.empty() && line.back() == '\r') line.pop_back();
          message = bad.output + ": `" + line + "`";
          break;
        }
      CHECK_MESSAGE(message.starts_with(bad.output + ": `"), bad.needle);
    }
    if (!bad.never_shown.empty()) {
      CHECK(run.err.find(bad.never_shown) == std::string::npos);
      CHECK(run.out.find(bad.never_shown) == std::string::npos);
    }
    CAPTURE(index);
    CAPTURE(bad.input);
    CAPTURE(bad.args);
    CAPTURE(run.err);
    CHECK(run.exit_code == bad.exit_code);
    CHECK(run.err.starts_with(bad.location));
    CHECK(run.seconds < 10);
    const std::string exit_text = run.exit_code == 124 ? "killed after " + std::to_string(limit) + " s"
                                                       : std::to_string(run.exit_code);
    table += "| " + std::to_string(index) + " | " + cell(bad.input) + " | `capsim " + cell(bad.args) + "` | " +
             exit_text + " | " + cell(message) + " |\n";
  }
  const std::string cyclic = cyclic_pipeline_message();
  CHECK(cyclic.find("cycle") != std::string::npos);
  table += "\nA cyclic pipeline has no input file (the simulator's pipeline is built in code: "
           "`des::Pipeline`); two stations of queue capacity 1 feeding each other with 100 closed-loop "
           "items give, from `Pipeline::validate()`:\n\n```\n" + cyclic + "```\n";
  table += environment_table();

  const fs::path golden = fs::path(CAPSIM_DOCS_DIR) / "bad-inputs.md";
  if (std::getenv("CAPSIM_UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << table;
  } else {
    REQUIRE_MESSAGE(fs::exists(golden), "missing " << golden << " (CAPSIM_UPDATE_GOLDEN=1 writes it)");
    CHECK(capsim::testing::read_file(golden) == table);
  }
  fs::remove_all(root);
}
