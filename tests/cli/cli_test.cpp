// Runs the capsim binary as a user would and checks output, errors and exit codes.
// Golden files live in tests/cli/golden; CAPSIM_UPDATE_GOLDEN=1 rewrites them.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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
  CHECK(r.out.find(", fails < 60 s") != std::string::npos);  // 1 min, as capsim prints it
  const std::string xml = read(junit);
  CHECK(xml.find("<testsuite name=\"lora-7b-one-node\" tests=\"3\" failures=\"1\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"training_time = ") != std::string::npos);
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
  CHECK(capsim("run '" + scenario + "' --sweep '" + spec + "' --shard 2/2", "sweep-all.db").exit_code == 2);
}

TEST_CASE("capsim sweep writes an Indexed Job whose pods each run one shard") {
  auto r = capsim("sweep scenarios/x.yaml --sweep 'hardware.max_gpus=8,64' --shards 4");
  REQUIRE(r.exit_code == 0);
  const YAML::Node job = YAML::Load(r.out);
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
