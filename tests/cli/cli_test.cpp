// Runs the capsim binary as a user would and checks output, errors and exit codes.
// Golden files live in tests/cli/golden; CAPSIM_UPDATE_GOLDEN=1 rewrites them.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <yaml-cpp/yaml.h>

#include "cli/capsim_process.hpp"
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using cli_testing::capsim;
using cli_testing::read;
using cli_testing::Run;
using cli_testing::scratch;

const std::string kFixture = "--catalog '" CAPSIM_TEST_SOURCE_DIR "/cli/fixtures/catalog'";

void check_golden(const std::string& name, const std::string& actual) {
  const fs::path path = fs::path(CAPSIM_TEST_SOURCE_DIR) / "cli" / "golden" / name;
  if (std::getenv("CAPSIM_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  REQUIRE_MESSAGE(fs::exists(path), "missing golden file " << path);
  CHECK(read(path) == actual);
}

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("--version and --help work everywhere and exit 0") {
  auto v = capsim("--version");
  CHECK(v.exit_code == 0);
  CHECK(v.out.starts_with("capsim "));
  for (const char* cmd : {"--help", "catalog --help", "catalog list --help", "catalog show --help",
                          "catalog validate --help"}) {
    CAPTURE(cmd);
    auto r = capsim(cmd);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Usage:") != std::string::npos);
  }
}

TEST_CASE("golden outputs of catalog list and show on a fixed catalog") {
  const struct {
    const char* args;
    const char* golden;
  } cases[] = {
      {"catalog list gpus", "list-gpus.txt"},
      {"catalog list gpus --format csv", "list-gpus.csv"},
      {"catalog list gpus --format json", "list-gpus.json"},
      {"catalog list gpus --format md --sort memory --desc", "list-gpus-sorted.md"},
      {"catalog list facilities", "list-facilities.txt"},
      {"catalog list", "list-summary.txt"},
      {"catalog show test-gpu-80gb", "show-test-gpu.txt"},
      {"catalog show test-gpu-80gb --format json", "show-test-gpu.json"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    auto r = capsim(kFixture + " " + c.args, "golden.db");
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    // Paths differ between checkouts; the golden files hold them relative.
    std::string out = r.out;
    const std::string prefix = CAPSIM_TEST_SOURCE_DIR "/";
    for (auto at = out.find(prefix); at != std::string::npos; at = out.find(prefix)) out.erase(at, prefix.size());
    check_golden(c.golden, out);
  }
}

TEST_CASE("filters take units and bad filters or ids exit 2 with a suggestion") {
  auto big = capsim(kFixture + " catalog list gpus --where 'memory>=40 GB' --format csv");
  CHECK(big.exit_code == 0);
  CHECK(count_lines(big.out) == 2);  // header + one GPU
  auto typo = capsim(kFixture + " catalog list gpus --where 'memroy>=40 GB'");
  CHECK(typo.exit_code == 2);
  CHECK(typo.err == "error: --where: unknown gpu field 'memroy' (did you mean 'memory'?)\n");
  auto id = capsim(kFixture + " catalog show test-gpu-80");
  CHECK(id.exit_code == 2);
  CHECK(id.err == "error: no catalog entry with id 'test-gpu-80' (did you mean 'test-gpu-80gb'?)\n");
  auto section = capsim(kFixture + " catalog list gpu");
  CHECK(section.exit_code == 0);  // singular is accepted
  auto bad_section = capsim(kFixture + " catalog list gpsu");
  CHECK(bad_section.exit_code == 2);
  CHECK(bad_section.err == "error: unknown catalog section 'gpsu' (did you mean 'gpus'?)\n");
  auto format = capsim(kFixture + " catalog list gpus --format yaml");
  CHECK(format.exit_code == 2);
  auto unknown_flag = capsim("catalog list --bogus");
  CHECK(unknown_flag.exit_code == 2);
}

TEST_CASE("the shipped catalog lists at least 25 GPUs and the H100 SXM figures with sources") {
  auto list = capsim("catalog list gpus --format json", "shipped.db");
  REQUIRE(list.exit_code == 0);
  auto gpus = nlohmann::json::parse(list.out);
  CHECK(gpus.size() >= 25);
  auto show = capsim("catalog show h100-sxm-80gb --format json", "shipped.db");
  REQUIRE(show.exit_code == 0);
  auto h100 = nlohmann::json::parse(show.out)["fields"];
  CHECK(h100["memory"]["display"] == "80 GB");
  CHECK(h100["memory_bandwidth"]["display"] == "3.35 TB/s");
  CHECK(h100["peak_dense.bf16"]["display"] == "989 TFLOPS");
  for (const char* f : {"memory", "memory_bandwidth", "peak_dense.bf16"}) {
    CAPTURE(f);
    CHECK(h100[f]["source"].get<std::string>().find("NVIDIA") != std::string::npos);
    CHECK(h100[f]["as_of"].get<std::string>().size() >= 7);
  }
}

TEST_CASE("validate on a copy with a misspelled key and a wrong unit and a duplicate id gives three errors and exit 2") {
  const fs::path copy = scratch() / "catalog-copy";
  fs::remove_all(copy);
  fs::copy(CAPSIM_TEST_DATA_DIR "/catalog", copy);
  std::string gpus = read(copy / "gpus.yaml");
  auto replace_first = [&](const std::string& from, const std::string& to) {
    const auto at = gpus.find(from);
    REQUIRE(at != std::string::npos);
    gpus.replace(at, from.size(), to);
  };
  replace_first("    memory_type:", "    memroy_type:");             // misspelled key
  {  // wrong unit: the first GPU's bandwidth written as a size ("240 GB/s" -> "240 GB")
    const auto line = gpus.find("    memory_bandwidth: ");
    REQUIRE(line != std::string::npos);
    const auto unit = gpus.find("/s", line);
    REQUIRE(unit < gpus.find('\n', line));
    gpus.erase(unit, 2);
  }
  replace_first("id: p4\n", "id: k80\n");                           // duplicate id
  std::ofstream(copy / "gpus.yaml", std::ios::binary) << gpus;
  {  // instances that rent a P4 would now name a missing GPU (a fourth error): point them at the T4
    std::string instances = read(copy / "instances.yaml");
    for (auto at = instances.find("gpu: p4\n"); at != std::string::npos; at = instances.find("gpu: p4\n", at))
      instances.replace(at, 8, "gpu: t4\n");
    std::ofstream(copy / "instances.yaml", std::ios::binary) << instances;
  }

  auto r = capsim("catalog validate '" + copy.string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  // "<dir>/gpus.yaml:LINE:COLUMN: error: ..."
  auto located = [](const std::string& l) {
    const auto at = l.find("/gpus.yaml:");
    if (at == std::string::npos) return false;
    std::istringstream rest(l.substr(at + 11));
    int line = 0, column = 0;
    char colon1 = 0, colon2 = 0;
    rest >> line >> colon1 >> column >> colon2;
    return line > 0 && column > 0 && colon1 == ':' && colon2 == ':' && l.find(": error: ") != std::string::npos;
  };
  std::istringstream in(r.err);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() == 4);  // three errors and the count
  for (int i = 0; i < 3; ++i) CHECK(located(lines[i]));
  CHECK(lines[0].find("unknown key 'memroy_type' in gpu entry (did you mean 'memory_type'?)") != std::string::npos);
  CHECK(lines[1].find("memory_bandwidth: expected a bandwidth") != std::string::npos);
  CHECK(lines[2].find("duplicate id 'k80' (first defined at") != std::string::npos);
  CHECK(lines[3] == "3 errors");
}

TEST_CASE("the database follows the YAML: an edit shows up on the next run") {
  const fs::path copy = scratch() / "catalog-edit";
  fs::remove_all(copy);
  fs::copy(CAPSIM_TEST_SOURCE_DIR "/cli/fixtures/catalog", copy);
  const std::string catalog = "--catalog '" + copy.string() + "' ";
  auto before = capsim(catalog + "catalog show small-gpu --format json", "edit.db");
  REQUIRE(before.exit_code == 0);
  CHECK(nlohmann::json::parse(before.out)["fields"]["memory"]["value"] == 16e9);
  std::string text = read(copy / "gpus.yaml");
  text.replace(text.find("memory: 16 GB"), 13, "memory: 32 GB");
  std::ofstream(copy / "gpus.yaml", std::ios::binary) << text;
  auto after = capsim(catalog + "catalog show small-gpu --format json", "edit.db");
  REQUIRE(after.exit_code == 0);
  CHECK(nlohmann::json::parse(after.out)["fields"]["memory"]["value"] == 32e9);
}

TEST_CASE("run --check exits 1 on a failed expectation and writes it to JUnit") {
  const fs::path scenario = scratch() / "tight.yaml";
  std::string text = read(CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml");
  const std::string loose = "  - training_time < 2 d";
  text.replace(text.find(loose), loose.size(), "  - training_time < 1 min");
  std::ofstream(scenario, std::ios::binary) << text;
  const fs::path junit = scratch() / "tight.xml";
  auto r = capsim("run --check --no-history --junit '" + junit.string() + "' '" + scenario.string() + "'", "run.db");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("FAIL  training_time = ") != std::string::npos);
  CHECK(r.out.find(", fails < 1 min") != std::string::npos);  // in the unit the user wrote (issue 21)
  const std::string xml = read(junit);
  CHECK(xml.find("<testsuite name=\"lora-7b-one-node\" tests=\"3\" failures=\"1\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"training_time = ") != std::string::npos);
  // The failure text starts with where the expectation is: file:line:column (the Jenkins
  // xUnit schema allows no file or line attribute on a test case).
  CHECK(xml.find("type=\"expectation\">" + scenario.string() + ":") != std::string::npos);
  CHECK(xml.find(": training_time = ") != std::string::npos);
  // Without --check the same run exits 0; bad input still exits 2.
  CHECK(capsim("run --no-history '" + scenario.string() + "'", "run.db").exit_code == 0);
  CHECK(capsim("run --check '" + (scratch() / "missing.yaml").string() + "'", "run.db").exit_code == 2);
}

TEST_CASE("a sweep splits into shards whose databases merge into one table") {
  const std::string scenario = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml";
  const std::string spec = "workload.tokens=50M,100M,200M,400M";
  // The whole sweep on this machine.
  auto all = capsim("run '" + scenario + "' --sweep '" + spec + "' --jobs 2", "sweep-all.db");
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.find("4 points") != std::string::npos);
  // Two shards, as two Indexed Job pods would run them, each into its own database.
  std::vector<std::string> shard_dbs;
  for (int i = 0; i < 2; ++i) {
    const auto db = (scratch() / ("shard-" + std::to_string(i) + ".db")).string();
    std::filesystem::remove(db);
    shard_dbs.push_back(db);
    auto shard = capsim("--db '" + db + "' run '" + scenario + "' --sweep '" + spec + "' --shard " + std::to_string(i) + "/2",
                        "sweep-shards.db");
    REQUIRE(shard.exit_code == 0);
    CHECK(shard.out.find("(shard " + std::to_string(i) + "/2): 2 points") != std::string::npos);
  }
  std::filesystem::remove(scratch() / "sweep-merged.db");
  auto merged = capsim("history merge '" + shard_dbs[0] + "' '" + shard_dbs[1] + "' --sweep '" + spec + "'", "sweep-merged.db");
  REQUIRE(merged.exit_code == 0);
  CHECK(merged.out.starts_with("Merged 4 runs from 2 shard databases."));
  // The merged table lists every point once, in the sweep's order, as the one-machine run does.
  const auto rows_of = [](const std::string& out) {
    std::vector<std::string> points;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);)
      if (l.starts_with("workload.tokens=")) points.push_back(l.substr(0, l.find(' ')));
    return points;
  };
  CHECK(rows_of(merged.out) == std::vector<std::string>{"workload.tokens=50M", "workload.tokens=100M",
                                                         "workload.tokens=200M", "workload.tokens=400M"});
  CHECK(rows_of(merged.out) == rows_of(all.out));
  // The same merge as JSON: every point once, in order, with its run's own JSON.
  auto merged_json = capsim("history merge '" + shard_dbs[0] + "' '" + shard_dbs[1] + "' --sweep '" + spec + "' --format json",
                            "sweep-merged-json.db");
  REQUIRE(merged_json.exit_code == 0);
  const auto mj = nlohmann::json::parse(merged_json.out);
  CHECK(mj["schema"] == "capsim-sweep/1");
  CHECK(mj["merged_runs"] == 4);
  REQUIRE(mj["points"].size() == 4);
  CHECK(mj["points"][0]["point"] == "workload.tokens=50M");
  CHECK(mj["points"][3]["point"] == "workload.tokens=400M");
  CHECK(mj["points"][3]["run"]["schema"] == "capsim-run/1");
  CHECK(capsim("run '" + scenario + "' --sweep '" + spec + "' --shard 2/2", "sweep-all.db").exit_code == 2);
}

TEST_CASE("capsim sweep writes an Indexed Job whose pods each run one shard") {
  const std::string scenario = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml";
  auto r = capsim("sweep '" + scenario + "' --sweep 'hardware.max_gpus=8,64' --shards 4");
  REQUIRE(r.exit_code == 0);
  const auto docs = YAML::LoadAll(r.out);
  REQUIRE(docs.size() == 3);
  // Issue 21: the scenario travels in a ConfigMap and the results in a volume the manifest
  // creates; the Job mounts both.
  CHECK(docs[0]["kind"].as<std::string>() == "ConfigMap");
  CHECK(docs[0]["data"]["scenario.yaml"].as<std::string>() == read(scenario));
  CHECK(docs[1]["kind"].as<std::string>() == "PersistentVolumeClaim");
  CHECK(docs[1]["metadata"]["name"].as<std::string>() == "capsim-sweep-results");
  CHECK(docs[1]["spec"]["accessModes"][0].as<std::string>() == "ReadWriteMany");
  const YAML::Node job = docs[2];
  const YAML::Node pod = job["spec"]["template"]["spec"];
  CHECK(pod["volumes"][0]["configMap"]["name"].as<std::string>() == "capsim-sweep-scenario");
  CHECK(pod["volumes"][0]["configMap"]["items"][0]["path"].as<std::string>() == "lora-7b-one-node.yaml");
  CHECK(pod["volumes"][1]["persistentVolumeClaim"]["claimName"].as<std::string>() == "capsim-sweep-results");
  CHECK(pod["containers"][0]["args"][3].as<std::string>() == "/scenario/lora-7b-one-node.yaml");
  // The image the repository's Dockerfile builds, by default.
  CHECK(pod["containers"][0]["image"].as<std::string>().starts_with("capsim:"));
  // A scenario that does not load is refused here, with its location, not in every pod.
  std::ofstream(scratch() / "bad-sweep.yaml") << "name: x\nworkload: {type: training, modle: llama-2-7b}\n";
  auto bad = capsim("sweep '" + (scratch() / "bad-sweep.yaml").string() + "' --sweep 'hardware.max_gpus=8' --shards 1");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("bad-sweep.yaml:2:") != std::string::npos);
  CHECK(bad.out.empty());
  // So is one whose request lengths file the ConfigMap would leave behind.
  std::ofstream(scratch() / "lengths-sweep.csv") << "prompt_tokens,output_tokens\n467,256\n";
  std::ofstream(scratch() / "lengths-sweep.yaml")
      << "name: x\nworkload: {type: llm-serving, model: llama-2-7b, request_lengths: lengths-sweep.csv}\n"
         "arrivals: {rate: 3}\nslo: {ttft_p99: 2 s, tpot_p99: 100 ms}\nhardware: {gpus: [h100-sxm-80gb]}\n";
  auto lengths = capsim("sweep '" + (scratch() / "lengths-sweep.yaml").string() + "' --sweep 'arrivals.rate=3,6' --shards 2");
  CHECK(lengths.exit_code == 2);
  CHECK(lengths.err.find("not its request lengths file") != std::string::npos);
  CHECK(lengths.out.empty());
  // And one whose served model's latency table is a file beside it.
  std::ofstream(scratch() / "perf-sweep.csv") << "gpu,batch,latency_ms\nt4,1,4.1\nt4,8,11.8\n";
  std::ofstream(scratch() / "latency-sweep.yaml")
      << "name: x\nworkload:\n  type: inference\n  graph:\n    - {name: c, model: {latency_file: perf-sweep.csv}}\n"
         "arrivals: {rate: 50}\nslo: {p99: 1 s}\nhardware: {gpus: [t4]}\n";
  auto latency = capsim("sweep '" + (scratch() / "latency-sweep.yaml").string() + "' --sweep 'arrivals.rate=50,100' --shards 2");
  CHECK(latency.exit_code == 2);
  CHECK(latency.err.find("not its latency file perf-sweep.csv") != std::string::npos);
  CHECK(latency.out.empty());
  CHECK(job["apiVersion"].as<std::string>() == "batch/v1");
  CHECK(job["kind"].as<std::string>() == "Job");
  CHECK(job["spec"]["completionMode"].as<std::string>() == "Indexed");
  CHECK(job["spec"]["completions"].as<int>() == 4);
  // An argv list, no shell: Kubernetes expands $(JOB_COMPLETION_INDEX) in args itself.
  const YAML::Node args = job["spec"]["template"]["spec"]["containers"][0]["args"];
  REQUIRE(args.IsSequence());
  bool shard = false;
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i].as<std::string>() == "--shard") shard = args[i + 1].as<std::string>() == "$(JOB_COMPLETION_INDEX)/4";
  CHECK(shard);
}

namespace {

// The kubelet's check before it starts a container (pkg/kubelet/kuberuntime,
// verifyRunAsNonRoot): with runAsNonRoot true in the effective security context (the
// container's over the pod's), a runAsUser must not be 0; without one, the image's USER must
// be a number other than 0, because a name cannot be resolved there. "" when the container may
// start, else the kubelet's reason.
std::string kubelet_run_as_non_root_error(const YAML::Node& pod, const YAML::Node& container,
                                          const std::string& image_user) {
  auto effective = [&](const char* key) {
    for (const YAML::Node& level : {container, pod})
      if (const YAML::Node context = level["securityContext"]; context && context[key]) return context[key];
    return YAML::Node(YAML::NodeType::Undefined);  // absent (YAML::Node() would be a defined null)
  };
  const YAML::Node non_root = effective("runAsNonRoot");
  if (!non_root || !non_root.as<bool>()) return "";
  if (const YAML::Node uid = effective("runAsUser"); uid) {
    long long value = -1;
    if (!YAML::convert<long long>::decode(uid, value)) return "runAsUser is not a number";
    return value == 0 ? "container's runAsUser breaks non-root policy" : "";
  }
  const std::string user = image_user.substr(0, image_user.find(':'));
  if (user.empty()) return "image will run as root";
  if (user.find_first_not_of("0123456789") != std::string::npos)
    return "image has non-numeric user (" + user + "), cannot verify user is non-root";
  return std::stoll(user) == 0 ? "image will run as root" : "";
}

// The last USER instruction of the Dockerfile at the repository's root ("" when none).
std::string dockerfile_user() {
  std::istringstream in(read(fs::path(CAPSIM_TEST_SOURCE_DIR) / ".." / "Dockerfile"));
  std::string user;
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("USER ")) user = line.substr(5);
  return user;
}

}  // namespace

TEST_CASE("issue 53: the sweep Job's pods pass the kubelet's runAsNonRoot rule, as the image's numeric user") {
  const std::string scenario = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml";
  auto r = capsim("sweep '" + scenario + "' --sweep 'hardware.max_gpus=8,64' --shards 2");
  REQUIRE(r.exit_code == 0);
  const YAML::Node pod = YAML::LoadAll(r.out).at(2)["spec"]["template"]["spec"];
  const std::string image_user = dockerfile_user();
  // The image's USER is uid:gid by number, and the pod runs as exactly those.
  REQUIRE(image_user.find_first_not_of("0123456789:") == std::string::npos);
  REQUIRE(image_user.find(':') != std::string::npos);
  CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
  CHECK(pod["securityContext"]["runAsUser"].as<std::string>() == image_user.substr(0, image_user.find(':')));
  CHECK(pod["securityContext"]["runAsGroup"].as<std::string>() == image_user.substr(image_user.find(':') + 1));
  CHECK(pod["securityContext"]["fsGroup"].as<std::string>() == image_user.substr(image_user.find(':') + 1));
  for (const auto& container : pod["containers"]) {
    CHECK(kubelet_run_as_non_root_error(pod, container, image_user) == "");
    // Either alone would do: the pod's numeric user whatever the image says, and the image's
    // numeric USER where a pod names none.
    CHECK(kubelet_run_as_non_root_error(pod, container, "capsim") == "");
    YAML::Node without_user = YAML::Clone(pod);
    without_user["securityContext"].remove("runAsUser");
    CHECK(kubelet_run_as_non_root_error(without_user, container, image_user) == "");
    // The bug: runAsNonRoot with no runAsUser, in an image whose USER was a name.
    CHECK(kubelet_run_as_non_root_error(without_user, container, "capsim") ==
          "image has non-numeric user (capsim), cannot verify user is non-root");
    YAML::Node root = YAML::Clone(pod);
    root["securityContext"]["runAsUser"] = 0;
    CHECK(kubelet_run_as_non_root_error(root, container, image_user) == "container's runAsUser breaks non-root policy");
  }
}

TEST_CASE("memory: flags the rule cannot honour are refused, not ignored") {
  auto r = capsim("memory --params 7.5B --dp 64 --zero 3");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("error: --dp: cannot be honoured: the simple rule counts bytes per parameter only") !=
        std::string::npos);
  CHECK(r.err.find("error: --zero: cannot be honoured") != std::string::npos);
  auto both = capsim("memory --model llama-2-7b --layers 32");
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--layers: cannot be honoured: --model gives the shape") != std::string::npos);
  auto infer = capsim("memory --model llama-2-7b --mode infer --dp 8");
  CHECK(infer.exit_code == 2);
  CHECK(infer.err.find("--dp: cannot be honoured: inference memory is weights and KV cache") != std::string::npos);
}

TEST_CASE("memory: Llama 3 405B at t=8 p=16 d=64, seq 8192, flash, no recompute fits in 80 GB") {
  auto r = capsim("memory --model llama-3.1-405b --tp 8 --pp 16 --dp 64 --sp --zero 1 --seq-len 8192 --format json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["total_bytes"].get<double>() < 80e9);
  // Eager attention keeps the scores: Korthikanti's 5as/h term comes back.
  auto eager = capsim("memory --model llama-3.1-405b --tp 8 --pp 16 --dp 64 --sp --zero 1 --seq-len 8192 "
                      "--attention eager --format json");
  REQUIRE(eager.exit_code == 0);
  CHECK(nlohmann::json::parse(eager.out)["total_bytes"].get<double>() > 200e9);
}

TEST_CASE("memory: eager attention reproduces Korthikanti et al.'s 5as/h term on a shape") {
  // GPT-style shape (GeLU MLP, dropout), s = 4096, b = 1, a = 32, one stage, no parallelism.
  const std::string shape = "memory --layers 32 --hidden 4096 --heads 32 --vocab 32000 --seq-len 4096 --format json";
  auto flash = capsim(shape);
  auto eager = capsim(shape + " --attention eager");
  REQUIRE(flash.exit_code == 0);
  REQUIRE(eager.exit_code == 0);
  const double f = nlohmann::json::parse(flash.out)["components"]["activations"].get<double>();
  const double e = nlohmann::json::parse(eager.out)["components"]["activations"].get<double>();
  // Per layer eager adds 5as^2b (scores 2, softmax output... Table 2) where flash keeps
  // 4asb of softmax statistics: 32 x (5 x 32 x 4096^2 - 4 x 32 x 4096) bytes.
  CHECK(e - f == doctest::Approx(32.0 * (5.0 * 32 * 4096.0 * 4096 - 4.0 * 32 * 4096)));
}

TEST_CASE("memory: QLoRA on a 7B model with the defaults fits a 16 GB GPU") {
  auto r = capsim("memory --model llama-2-7b --mode train --fine-tuning qlora --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["total_bytes"].get<double>() < 16e9);
}

// ---- Issue 21: shipping and CLI habits.

TEST_CASE("issue 21: --version names the version, the git commit, the data directory and the catalog's newest date") {
  auto v = capsim("--version");
  REQUIRE(v.exit_code == 0);
  CHECK(v.out.starts_with("capsim "));
  CHECK(v.out.find("\ncommit   ") != std::string::npos);
  CHECK(v.out.find("(beside the executable)") != std::string::npos);
  CHECK(v.out.find("newest figure as of 20") != std::string::npos);
  // --data and $CAPSIM_DATA override; one without a catalog is an environment error (3).
  auto data = capsim("--version --data '" CAPSIM_TEST_DATA_DIR "'");
  CHECK(data.exit_code == 0);
  CHECK(data.out.find("data     " CAPSIM_TEST_DATA_DIR " (--data)") != std::string::npos);
  auto none = capsim("--data /nonexistent size x.yaml");
  CHECK(none.exit_code == 3);
  CHECK(none.err.find("error: --data: no capsim data directory at '/nonexistent'") != std::string::npos);
}

TEST_CASE("issue 21: mistyped commands and options get a suggestion, in capsim's words, exit 2") {
  auto typo = capsim("sise x.yaml");
  CHECK(typo.exit_code == 2);
  CHECK(typo.err == "error: unknown command 'sise' (did you mean 'size'?)\n");
  auto option = capsim("size x.yaml --formt json");
  CHECK(option.exit_code == 2);
  CHECK(option.err == "error: size: unknown option '--formt' (did you mean '--format'?)\n");
  auto missing = capsim("size");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "error: size: missing scenario (see 'capsim size --help')\n");
  auto sub = capsim("history lst");
  CHECK(sub.exit_code == 2);
  CHECK(sub.err == "error: history: unknown command 'lst' (did you mean 'list'?)\n");
  auto format = capsim("size x.yaml --format md");
  CHECK(format.exit_code == 2);
  CHECK(format.err == "error: size: --format: 'md' is not a format of this command (expected table|json) (see 'capsim "
                      "size --help')\n");
  CHECK(capsim("history list --format JSON").exit_code == 0);  // formats ignore case
  for (const auto* r : {&typo, &option, &missing, &sub, &format})
    CHECK(r->err.find("Run with --help") == std::string::npos);
}

TEST_CASE("issue 21: every command's --help has an Examples section") {
  for (const char* cmd : {"", "catalog", "catalog list", "catalog show", "catalog validate", "catalog import-calibration",
                          "memory", "size", "estimate", "simulate", "cost", "export", "run", "report", "history",
                          "history list", "history show", "history merge", "history diff", "sweep", "validate", "schema",
                          "models", "accuracy", "completion"}) {
    CAPTURE(cmd);
    auto r = capsim(std::string(cmd) + " --help");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Examples:\n  capsim ") != std::string::npos);
  }
}

TEST_CASE("issue 21: capsim completion for bash, zsh and fish knows the commands and their options") {
  auto bash = capsim("completion bash");
  REQUIRE(bash.exit_code == 0);
  const auto script = scratch() / "capsim.bash";
  std::ofstream(script) << bash.out;
  // Sourced into bash, the function completes "capsim si" and "capsim size --fo".
  const std::string probe = "bash -c 'source \"" + script.string() +
                            "\"; COMP_WORDS=(capsim si); COMP_CWORD=1; _capsim; echo \"${COMPREPLY[*]}\"; "
                            "COMP_WORDS=(capsim size x.yaml --fo); COMP_CWORD=3; _capsim; echo \"${COMPREPLY[*]}\"; "
                            "COMP_WORDS=(capsim catalog li); COMP_CWORD=2; _capsim; echo \"${COMPREPLY[*]}\"'";
  const auto out = scratch() / "completion.out";
  REQUIRE(std::system((probe + " > '" + out.string() + "'").c_str()) == 0);
  CHECK(read(out) == "size simulate\n--format\nlist\n");
  auto zsh = capsim("completion zsh");
  CHECK(zsh.exit_code == 0);
  CHECK(zsh.out.find("bashcompinit") != std::string::npos);
  auto fish = capsim("completion fish");
  CHECK(fish.exit_code == 0);
  CHECK(fish.out.find("complete -c capsim -n '__fish_use_subcommand' -a size") != std::string::npos);
  CHECK(fish.out.find("complete -c capsim -n '__fish_seen_subcommand_from export' -l image") != std::string::npos);
  CHECK(capsim("completion tcsh").exit_code == 2);
}

TEST_CASE("issue 21: JSON outputs name their schema and version, and history list has JSON") {
  const std::string ex = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/";
  const struct {
    std::string args;
    const char* schema;
  } cases[] = {{"size " + ex + "lora-7b-one-node.yaml", "capsim-size/1"},
               {"cost " + ex + "ml-services-24x7.yaml", "capsim-cost/1"},
               {"simulate " + ex + "resnet50-1080ti-4vcpu.yaml", "capsim-simulate/1"},
               {"estimate " + ex + "lora-7b-one-node.yaml", "capsim.estimate"},
               {"memory --params 7B", "capsim-memory/1"}};
  for (const auto& c : cases) {
    CAPTURE(c.args);
    auto r = capsim(c.args + " --format json", "schema.db");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["schema"] == c.schema);
  }
  REQUIRE(capsim("run --no-history " + ex + "lora-7b-one-node.yaml", "history-json.db").exit_code == 0);
  REQUIRE(capsim("run " + ex + "lora-7b-one-node.yaml", "history-json.db").exit_code == 0);
  auto list = capsim("history list --format json", "history-json.db");
  REQUIRE(list.exit_code == 0);
  const auto j = nlohmann::json::parse(list.out);
  CHECK(j["schema"] == "capsim-history/1");
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["scenario"] == "lora-7b-one-node");
  CHECK(j["runs"][0]["status"] == "passed");
  // history diff as JSON: the scenario line changed and the result values that followed.
  const auto changed = scratch() / "lora-50M.yaml";
  {
    std::string text = read(fs::path(ex) / "lora-7b-one-node.yaml");
    const auto at = text.find("tokens: ");
    REQUIRE(at != std::string::npos);
    text.replace(at, text.find('\n', at) - at, "tokens: 50M");
    std::ofstream(changed) << text;
  }
  REQUIRE(capsim("run '" + changed.string() + "'", "history-json.db").exit_code == 0);
  auto diff = capsim("history diff 1 2 --format json", "history-json.db");
  REQUIRE(diff.exit_code == 0);
  const auto d = nlohmann::json::parse(diff.out);
  CHECK(d["schema"] == "capsim-history-diff/1");
  CHECK(d["a"]["id"] == 1);
  CHECK(d["b"]["id"] == 2);
  CHECK(std::find(d["inputs"].begin(), d["inputs"].end(), "+   tokens: 50M") != d["inputs"].end());
  bool time_changed = false;
  for (const auto& c : d["outputs"]) time_changed = time_changed || (c["path"].get<std::string>().find("training_time") != std::string::npos && c["before"] != c["after"]);
  CHECK(time_changed);
}

TEST_CASE("issue 21: JUnit has time attributes, and bad input leaves a JUnit file with an <error> test case") {
  const std::string ex = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml";
  const auto good = scratch() / "good.xml";
  REQUIRE(capsim("run --no-history --junit '" + good.string() + "' " + ex).exit_code == 0);
  const std::string xml = read(good);
  CHECK(xml.find("<testsuite name=\"lora-7b-one-node\" tests=\"3\" failures=\"0\" errors=\"0\" time=\"") != std::string::npos);
  CHECK(xml.find("<testcase classname=\"lora-7b-one-node\" name=\"training_time &lt; 2 d\"") != std::string::npos);
  CHECK(std::count(xml.begin(), xml.end(), '\n') > 3);
  // Read as XML (an attribute value may hold a '>', which XML leaves unescaped there).
  pugi::xml_document parsed;
  REQUIRE(parsed.load_string(xml.c_str()));
  const pugi::xpath_node_set cases = parsed.select_nodes("/testsuites/testsuite/testcase");
  CHECK(cases.size() == 3);
  for (const pugi::xpath_node& test : cases) {
    CHECK(test.node().attribute("time"));
    // The Jenkins xUnit schema (xunit-plugin 2.x, 3.x) refuses file and line on a test case.
    CHECK_FALSE(test.node().attribute("file"));
    CHECK_FALSE(test.node().attribute("line"));
  }
  // The scenario file is on the test suite, and each test case's output starts with file:line:column.
  CHECK(xml.find(" file=\"" + ex + "\">") != std::string::npos);
  CHECK(xml.find("<system-out>" + ex + ":") != std::string::npos);
  const auto bad_yaml = scratch() / "bad-junit.yaml";
  std::ofstream(bad_yaml) << "name: bad\nworkload: {type: training, modle: llama-2-7b}\n";
  const auto bad = scratch() / "bad.xml";
  auto r = capsim("run --check --junit '" + bad.string() + "' '" + bad_yaml.string() + "'");
  CHECK(r.exit_code == 2);
  const std::string err = read(bad);
  CHECK(err.find("errors=\"1\"") != std::string::npos);
  CHECK(err.find("<testcase classname=\"" + bad_yaml.string() + "\" name=\"load and run the scenario\" time=\"") !=
        std::string::npos);
  CHECK(err.find(" errors=\"1\" time=\"") != std::string::npos);
  CHECK(err.find(" file=\"" + bad_yaml.string() + "\">") != std::string::npos);  // on the test suite
  CHECK(err.find("<error message=\"" + bad_yaml.string() + ":2:") != std::string::npos);
  CHECK(err.find("unknown key 'modle'") != std::string::npos);
}

TEST_CASE("issue 21: - reads the scenario from standard input and writes to standard output") {
  const std::string ex = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml";
  // The helper reads /dev/null as standard input; here the scenario is piped in.
  auto piped_run = [](const std::string& args, const std::string& input) {
    const auto out = scratch() / "piped.out";
    const auto err = scratch() / "piped.err";
    const std::string cmd = "cat '" + input + "' | CAPSIM_DB='" + (scratch() / "piped.db").string() + "' '" CAPSIM_BINARY "' " +
                            args + " > '" + out.string() + "' 2> '" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    return Run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out), read(err)};
  };
  auto file = capsim("size --format json '" + ex + "'");
  auto piped = piped_run("size --format json -", ex);
  REQUIRE(file.exit_code == 0);
  REQUIRE(piped.exit_code == 0);
  CHECK(nlohmann::json::parse(piped.out)["plan"] == nlohmann::json::parse(file.out)["plan"]);
  auto exported = piped_run("export k8s - -o -", ex);
  CHECK(exported.exit_code == 0);
  CHECK(YAML::LoadAll(exported.out).size() == 1);
  auto bad = capsim("validate -");  // empty standard input
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.starts_with("<stdin>"));
}

TEST_CASE("issue 21: expectation messages use the unit the user wrote, and capsim's own printed units are accepted") {
  const std::string ex = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/food-photo-classifier.yaml";
  auto r = capsim("run --no-history --format json '" + ex + "'");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const std::string message = j["expectations"][0]["message"];
  CHECK(message.find(" USD/month, meets < 5000 USD/month") != std::string::npos);
  CHECK(message.find("USD/h") == std::string::npos);
  // "M USD" as size prints it.
  const std::string lora = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml";
  std::string text = read(lora);
  text = text.substr(0, text.find("\nexpect:")) + "\nexpect:\n  - cost_per_run < 0.001 M USD\n  - training_time < 48 h\n";
  const auto written = scratch() / "lora-units.yaml";
  std::ofstream(written) << text;
  auto m = capsim("run --no-history --format json '" + written.string() + "'");
  REQUIRE(m.exit_code == 0);
  const auto e = nlohmann::json::parse(m.out)["expectations"];
  REQUIRE(e.size() == 2);
  CHECK(e[0]["message"].get<std::string>().find(" M USD, meets < 0.001 M USD") != std::string::npos);
  CHECK(e[1]["message"].get<std::string>().find(" h, meets < 48 h") != std::string::npos);
}

TEST_CASE("issue 21: a CSV report is one table per file, or the table --table names") {
  const std::string ex = CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml";
  const auto dir = scratch() / "csv-report";
  fs::create_directories(dir);
  auto all = capsim("report '" + ex + "' -o '" + (dir / "r.csv").string() + "'");
  REQUIRE(all.exit_code == 0);
  for (const char* name : {"r-plan.csv", "r-frontier.csv", "r-memory.csv", "r-expectations.csv"}) {
    CAPTURE(name);
    const std::string text = read(dir / name);
    REQUIRE_FALSE(text.empty());
    // One table: no "# section" lines, every row as many fields as the header (no quoted commas here).
    CHECK(text.find("# ") == std::string::npos);
  }
  CHECK_FALSE(fs::exists(dir / "r.csv"));
  auto one = capsim("report '" + ex + "' -o '" + (dir / "frontier.csv").string() + "' --table frontier");
  REQUIRE(one.exit_code == 0);
  CHECK(read(dir / "frontier.csv") == read(dir / "r-frontier.csv"));
  auto bad = capsim("report '" + ex + "' -o '" + (dir / "x.csv").string() + "' --table fronteir");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "error: --table: this report has no table 'fronteir' (did you mean 'frontier'?)\n");
}

TEST_CASE("issue 53: capsim plan --report FILE.csv is one table per file too, --table picks one, JSON stays clean") {
  const std::string example = "'" CAPSIM_TEST_SOURCE_DIR "/../scenarios/clusters/team-ml-estate.yaml'";
  const auto dir = scratch() / "plan-csv-report";
  fs::create_directories(dir);
  auto all = capsim("plan --format json --report '" + (dir / "estate.csv").string() + "' " + example);
  REQUIRE_MESSAGE(all.exit_code == 0, all.err);
  CHECK(nlohmann::json::parse(all.out).at("schema") == "capsim-cluster-plan/1");  // the notices are on stderr
  CHECK_FALSE(fs::exists(dir / "estate.csv"));
  for (const char* name : {"estate-workloads.csv", "estate-pools.csv", "estate-cost.csv", "estate-cost-2.csv"}) {
    CAPTURE(name);
    CHECK(all.err.find("wrote " + (dir / name).string() + "\n") != std::string::npos);
    const std::string text = read(dir / name);
    REQUIRE_FALSE(text.empty());
    CHECK(text.find("# ") == std::string::npos);  // one table, no section lines
  }
  auto one = capsim("plan --report '" + (dir / "cost.csv").string() + "' --table cost-2 " + example);
  REQUIRE(one.exit_code == 0);
  CHECK(read(dir / "cost.csv") == read(dir / "estate-cost-2.csv"));
  auto bad = capsim("plan --report '" + (dir / "x.csv").string() + "' --table costs " + example);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("error: --table: this report has no table 'costs'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "x.csv"));
  auto alone = capsim("plan --table cost " + example);  // no report to pick from
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("error: --table: --table picks one table of a .csv report") != std::string::npos);
}

TEST_CASE("capsim plan packs the shipped cluster, in text and JSON, and bad clusters exit 2 with file:line:column") {
  const std::string example = "'" CAPSIM_TEST_SOURCE_DIR "/../scenarios/clusters/team-ml-estate.yaml'";
  auto text = capsim("plan " + example);
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(text.out.starts_with("Cluster plan: team-ml-estate (5 workloads"));
  CHECK(text.out.find("Timeline (nodes up per hour") != std::string::npos);
  auto json = capsim("plan --format json " + example);
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["schema"] == "capsim-cluster-plan/1");
  CHECK(j["workloads"].size() == 5);

  const fs::path report = scratch() / "estate-report.md";
  auto reported = capsim("plan --report '" + report.string() + "' " + example);
  REQUIRE_MESSAGE(reported.exit_code == 0, reported.err);
  CHECK(read(report).starts_with("# Cluster plan: team-ml-estate"));
  CHECK(reported.out == text.out);  // the plan is printed as well

  const fs::path bad = scratch() / "bad-cluster.yaml";
  std::ofstream(bad) << "name: x\n"
                        "cluster: {node_types: [aws-g5-xlarge], system_reserve: {cpu: 1, memory: 1 GiB}}\n"
                        "workloads:\n"
                        "  - {name: a, hours: always, servce: {gpu: a10g, replicas: 1}}\n";
  auto r = capsim("plan '" + bad.string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(bad.string() + ":4:30: error: workloads[0].servce: unknown key 'servce' (did you mean 'service'?)") !=
        std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("issue 53: report -o - writes text formats to standard output and refuses PDF, exit 2") {
  const std::string example = "'" CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml'";
  // Markdown by default: the report's title and a table, on standard output, nothing else written.
  auto md = capsim("report " + example + " -o -", "report.db");
  CHECK(md.exit_code == 0);
  CHECK(md.out.starts_with("# "));
  CHECK(md.out.find("\n| ") != std::string::npos);
  CHECK_FALSE(fs::exists("-"));
  // JSON is the run result, as a .json report file holds it.
  auto json = capsim("report " + example + " -o - --format json", "report.db");
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out).contains("plan"));
  // CSV: one table per stream, named by --table; without one, the tables are listed.
  auto csv = capsim("report " + example + " -o - --format csv", "report.db");
  CHECK(csv.exit_code == 2);
  CHECK(csv.err.find("a csv report on standard output is one table: name it with --table") != std::string::npos);
  // PDF is binary: a message, exit 2, no bytes on standard output.
  auto pdf = capsim("report " + example + " -o - --format pdf", "report.db");
  CHECK(pdf.exit_code == 2);
  CHECK(pdf.err.find("a PDF report is binary; capsim does not write it to standard output") != std::string::npos);
  CHECK(pdf.out.empty());
  // --format beside a file must agree with its extension.
  auto clash = capsim("report " + example + " -o '" + (scratch() / "r.md").string() + "' --format json", "report.db");
  CHECK(clash.exit_code == 2);
  CHECK(clash.err.find("disagree") != std::string::npos);
}

TEST_CASE("issue 53: expect: takes the units capsim prints (GPUs, requests/s, tokens/s, samples/s)") {
  const fs::path scenario = scratch() / "units.yaml";
  std::string text = read(CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml");
  text += "  - gpus <= 8 GPUs\n  - gpus >= 1 GPU\n";
  std::ofstream(scenario, std::ios::binary) << text;
  auto r = capsim("run --check --no-history '" + scenario.string() + "'", "units.db");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ok    gpus = 8 GPUs, meets <= 8 GPUs") != std::string::npos);
  CHECK(r.out.find("GPUs, meets <= 8 GPUs") != std::string::npos);
  // A unit of another metric is still refused, naming the units this one takes.
  const fs::path wrong = scratch() / "wrong-unit.yaml";
  std::ofstream(wrong, std::ios::binary) << read(CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/lora-7b-one-node.yaml") +
                                                "  - gpus <= 8 requests/s\n";
  auto bad = capsim("run --check --no-history '" + wrong.string() + "'", "units.db");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("'gpus' is a count: write a plain number or one in GPUs") != std::string::npos);
}

// A scenario name that is not UTF-8 (a byte a Latin-1 editor wrote) is stored as given; the
// JSON writers show it with U+FFFD instead of throwing (history list aborted on it).
TEST_CASE("history list --format json takes a scenario name that is not UTF-8") {
  const auto file = scratch() / "latin1.yaml";
  {
    std::ofstream out(file, std::ios::binary);
    out << "name: \"caf\xe9 run\"\nworkload:\n  type: training\n  model: resnet-50\n  samples: 1.28M\n"
           "  epochs: 1\n  precision: fp32\nhardware:\n  gpus: [t4]\n  max_gpus: 1\n";
  }
  REQUIRE(capsim("run '" + file.string() + "'", "latin1.db").exit_code == 0);
  auto list = capsim("history list --format json", "latin1.db");
  REQUIRE(list.exit_code == 0);
  const auto j = nlohmann::json::parse(list.out);
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["scenario"] == "caf\xef\xbf\xbd run");
}
