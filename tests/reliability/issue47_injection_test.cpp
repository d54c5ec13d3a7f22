// Issue 47, items 1 and 2: what capsim writes keeps what it is given as text, and a cluster
// file reads no file outside its folder. The rules (scenarios/escape.hpp, export.hpp's
// checks, the loaders' input rules) one by one, then the artefacts they protect: the gke
// script through `sh -n`, the k8s stream through yaml-cpp, with names no loader would let
// through set on a plan directly. docs/bad-inputs.md has the same cases through the binary.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "capsim/core/text.hpp"
#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/cluster_export.hpp"
#include "capsim/scenarios/escape.hpp"
#include "capsim/scenarios/export.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace capsim;
using namespace capsim::scenarios;

namespace {

// What `sh -c SCRIPT` prints, and its exit status.
std::pair<std::string, int> run_sh(const fs::path& dir, const std::string& script) {
  const fs::path file = dir / "script.sh";
  std::ofstream(file, std::ios::binary) << script;
  const std::string cmd = "cd '" + dir.string() + "' && sh script.sh 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// `sh -n` on a script: 0 when it parses.
int sh_n(const fs::path& dir, const std::string& script) {
  const fs::path file = dir / "export.sh";
  std::ofstream(file, std::ios::binary) << script;
  return std::system(("sh -n '" + file.string() + "' 2>/dev/null").c_str());
}

// Every line of a gke script is the shebang, a comment, `set -e`, a pool's
// `gcloud container node-pools create` or one of its continued flags: no other command.
void check_gke_lines(const std::string& script, std::size_t pools) {
  std::istringstream in(script);
  std::size_t creates = 0;
  bool continued = false;
  for (std::string line; std::getline(in, line);) {
    CAPTURE(line);
    if (continued) CHECK(line.starts_with("  --"));
    else if (line.starts_with("gcloud container node-pools create ")) ++creates;
    else CHECK((line.starts_with("#") || line == "set -e"));
    continued = line.ends_with(" \\");
  }
  CHECK(creates == pools);
}

NodePool gcp_pool() {
  NodePool p;
  p.name = "serve-t4";
  p.provider = "gcp";
  p.instance_type = "n1-standard-8 + 1 x nvidia-tesla-t4";
  p.gpu_id = "t4";
  p.max_nodes = 2;
  return p;
}

ExportSettings gcp_settings() {
  ExportSettings s;
  s.location = "us-central1";
  return s;
}

fs::path write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string cluster_text(const std::string& workloads, const std::string& name = "estate") {
  return "name: " + name +
         "\ncluster:\n  node_types: [gcp-a2-highgpu-1g]\n  system_reserve: {cpu: 0.5, memory: 2 GiB}\nworkloads:\n" +
         workloads;
}

std::string scenario_workload(const std::string& path) {
  return "  - name: w\n    scenario: " + path + "\n    hours: always\n";
}

std::string messages(const std::vector<Diagnostic>& ds) { return format_diagnostics(ds); }

const hardware::Catalog& catalog() { return testing::shipped_catalog(); }

}  // namespace

TEST_CASE("47: printable shows bidirectional overrides and C1 controls, first_control_character finds them") {
  const std::string rtl = "nb\xE2\x80\xAE" "exe.txt";  // U+202E RIGHT-TO-LEFT OVERRIDE
  CHECK(printable(rtl) == "nb\\u202eexe.txt");
  CHECK(printable("a\xC2\x85z") == "a\\u0085z");                 // U+0085, a C1 control
  CHECK(printable("caf\xC3\xA9 \xF0\x9F\x9A\x80") == "caf\xC3\xA9 \xF0\x9F\x9A\x80");  // letters and emoji stay
  CHECK(printable("a\x1b[31mb\n") == "a\\x1b[31mb\\n");
  CHECK(xml_escape("<b>" + rtl + "</b>") == "&lt;b&gt;nb\\u202eexe.txt&lt;/b&gt;");  // HTML reports, JUnit
  const auto found = first_control_character(rtl, true);
  REQUIRE(found);
  CHECK(found->offset == 2);
  CHECK(code_point_name(found->code) == "U+202E");
  CHECK(first_control_character("two\nlines\tand a tab", true) == std::nullopt);
  CHECK(first_control_character("two\nlines", false)->code == U'\n');
  CHECK(first_control_character("isolate \xE2\x81\xA7", true)->code == 0x2067);
  CHECK(first_control_character("bad utf-8 \xE2\x80", true) == std::nullopt);
}

TEST_CASE("47: shell_word keeps any value one word: sh gets it back unchanged") {
  const auto dir = testing::scratch_dir("issue47-sh");
  CHECK(shell_word("us-central1-a") == "us-central1-a");
  CHECK(shell_word("type=nvidia-l4,count=1") == "type=nvidia-l4,count=1");
  CHECK(shell_word("x; touch pwned") == "'x; touch pwned'");
  CHECK(shell_word("it's") == "'it'\\''s'");
  CHECK(shell_word("") == "''");
  for (const std::string value : {"x; touch pwned", "$(touch pwned)", "`touch pwned`", "a'b\"c", "line\ntouch pwned",
                                  "back\\slash", "  spaces  ", "*", "", "-n", "caf\xC3\xA9", "a&b|c>d<e", "#not a comment"}) {
    CAPTURE(value);
    const auto [out, status] = run_sh(dir, "printf '%s' " + shell_word(value) + "\n");
    CHECK(status == 0);
    CHECK(out == value);
  }
  CHECK_FALSE(fs::exists(dir / "pwned"));
  CHECK(shell_comment("estate\ntouch pwned") == "estate\\ntouch pwned");
}

TEST_CASE("47: csv_cell writes a formula as text (OWASP) and a number as a number") {
  CHECK(csv_cell("=cmd|' /C calc'!A0") == "\"'=cmd|' /C calc'!A0\"");
  CHECK(csv_cell("=HYPERLINK(\"http://x\",\"y\")") == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  CHECK(csv_cell("+1+cmd") == "\"'+1+cmd\"");
  CHECK(csv_cell("-2+3") == "\"'-2+3\"");
  CHECK(csv_cell("@SUM(A1:A9)") == "\"'@SUM(A1:A9)\"");
  CHECK(csv_cell("\t=1") == "\"'\t=1\"");
  CHECK(csv_cell("-3.5") == "-3.5");
  CHECK(csv_cell("+2") == "+2");
  CHECK(csv_cell("1e-3") == "1e-3");
  CHECK(csv_cell("-1.5E+3") == "-1.5E+3");
  CHECK(csv_cell("-") == "-");
  CHECK(csv_cell("a, b") == "\"a, b\"");
  CHECK(csv_cell("plain") == "plain");
  CHECK(csv_cell("nb\xE2\x80\xAE") == "nb\\u202e");
  CHECK(is_plain_number(".5"));
  CHECK_FALSE(is_plain_number("1e"));
  CHECK_FALSE(is_plain_number("-"));
  CHECK_FALSE(is_plain_number("1-1"));
}

TEST_CASE("47: Markdown gets text, never markup: no raw HTML, link, image, code span or block") {
  CHECK(markdown_inline("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;");
  CHECK(markdown_inline("[x](javascript:alert(1))") == "\\[x\\](javascript:alert(1))");
  CHECK(markdown_inline("![t](http://tracker/p.png)") == "!\\[t\\](http://tracker/p.png)");
  CHECK(markdown_inline("a | b") == "a \\| b");
  CHECK(markdown_inline("`code` *em* \\") == "\\`code\\` \\*em\\* \\\\");
  CHECK(markdown_inline("&#x202e;") == "&amp;#x202e;");
  CHECK(markdown_inline("memory_bandwidth") == "memory_bandwidth");  // GFM never emphasises inside a word
  CHECK(markdown_inline("_em_") == "\\_em\\_");
  CHECK(markdown_inline("two\nlines") == "two lines");
  CHECK(markdown_block("# heading\n- item\n1. first\n  > quote\nplain") == "\\# heading\n\\- item\n1\\. first\n&gt; quote\nplain");
  CHECK(markdown_fence("no ticks") == "```");
  CHECK(markdown_fence("a ```` b") == "`````");
}

TEST_CASE("47: flag values are checked as scenario keys are: --cluster, --image, --location") {
  for (const char* good : {"capsim", "ml-prod", "a", "abcdefghij-abcdefghij-abcdefghij-abcdefg"}) CHECK(is_gke_cluster_name(good));
  for (const char* bad : {"Bad Cluster", "x; touch pwned", "1abc", "a-", "", "abcdefghij-abcdefghij-abcdefghij-abcdefghi",
                          "ml_prod", "ml.prod"})
    CHECK_FALSE(is_gke_cluster_name(bad));
  for (const char* good : {"ubuntu", "ubuntu:22.04", "nvcr.io/nvidia/pytorch:24.05-py3", "localhost:5000/a/b:c",
                           "registry.example.com/your-team/your-workload:latest", "a__b/c-d.e",
                           "ghcr.io/x/y@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                           "[::1]:5000/x", kPlaceholderImage})
    CHECK_MESSAGE(is_image_reference(good), good);
  for (const char* bad : {" x", "x ", "", "Ubuntu", "x:", "x:-bad", "a//b", "x; rm -rf /", "$(touch pwned)", "a/b@sha256:12",
                          "-x", "x\ny"})
    CHECK_MESSAGE(!is_image_reference(bad), bad);
  CHECK(is_dns1123_label("a-1"));
  CHECK_FALSE(is_dns1123_label("a.b"));
  CHECK(is_dns1123_subdomain("a.b-c"));
  CHECK_FALSE(is_dns1123_subdomain("a..b"));

  ExportSettings s = gcp_settings();
  s.cluster = "x; touch pwned";
  s.image = " x";
  const auto errors = check_export_settings(s, ExportFormat::k8s);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].key_path == "--cluster");
  CHECK(errors[1].key_path == "--image");
  CHECK(errors[1].message.starts_with("' x' is no image reference"));
  s.location = "us central1";
  CHECK(check_export_settings(s, ExportFormat::gke).back().key_path == "--location");

  CHECK(check_gcp_location("us-central1", catalog()).empty());
  CHECK(check_gcp_location("us-central1-a", catalog()).empty());
  const auto nowhere = check_gcp_location("nowhere", catalog());
  REQUIRE(nowhere.size() == 1);
  CHECK(nowhere[0].key_path == "--location");
  CHECK(nowhere[0].message.find("us-central1") != std::string::npos);  // lists the catalog's regions
  CHECK(check_gcp_location("us-centrl1", catalog())[0].hint == "did you mean 'us-central1'?");
  CHECK_FALSE(check_gcp_location("europe-west9", catalog()).empty());  // not a region the catalog prices
}

TEST_CASE("47: export_node_pools refuses hostile settings, and its script keeps a hostile note in a comment") {
  const auto dir = testing::scratch_dir("issue47-gke");
  ExportSettings s = gcp_settings();
  s.cluster = "x; touch pwned";
  auto refused = export_node_pools({gcp_pool()}, ExportFormat::gke, s);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.errors()[0].key_path == "--cluster");
  // A pool of another cloud is refused for that first: its catalog region, the default
  // location, need not be a GCP name ("all-regions").
  NodePool aws = gcp_pool();
  aws.provider = "aws";
  s = gcp_settings();
  s.location = "all regions";
  auto other_cloud = export_node_pools({aws}, ExportFormat::gke, s);
  REQUIRE_FALSE(other_cloud.ok());
  CHECK(other_cloud.errors()[0].message.starts_with("GKE export needs gcp node types"));
  s = gcp_settings();
  s.notes = {{"capsim.dev/cluster-plan", "estate\ntouch pwned\r\n$(touch pwned)"}};
  auto script = export_node_pools({gcp_pool(), gcp_pool()}, ExportFormat::gke, s);
  REQUIRE(script.ok());
  CHECK(sh_n(dir, *script) == 0);
  check_gke_lines(*script, 2);
  CHECK(script->find("estate\\ntouch pwned\\r\\n$(touch pwned)") != std::string::npos);  // shown, in the comment
}

TEST_CASE("47: a cluster plan whose names no loader lets through still exports one object per workload") {
  const auto dir = testing::scratch_dir("issue47-plan");
  auto loaded = load_cluster_file(testing::cluster_scenario("gcp-inference-estate"), catalog());
  REQUIRE_MESSAGE(loaded.ok(), messages(loaded.errors()));
  auto planned = plan_cluster(*loaded, catalog());
  REQUIRE_MESSAGE(planned.ok(), messages(planned.errors()));
  ClusterPlan plan = *planned;
  plan.name = "e\n---\nkind: Secret\n# \r\ntouch pwned";

  auto k8s = cluster_export(plan, "k8s");
  REQUIRE_MESSAGE(k8s.ok(), messages(k8s.errors()));
  // The header stays comments, and the stream holds the flavors, the queues and one
  // object (or, for a service, its Deployment, HPA and maybe PDB) per workload.
  const std::string head = k8s->substr(0, k8s->find("\n---"));
  std::istringstream lines(head);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(line.starts_with("#"), line);
  std::size_t jobsets = 0, deployments = 0, secrets = 0;
  for (const auto& doc : YAML::LoadAll(*k8s)) {
    if (!doc.IsMap()) continue;
    const std::string kind = doc["kind"].as<std::string>();
    jobsets += kind == "JobSet";
    deployments += kind == "Deployment";
    secrets += kind == "Secret";
  }
  std::size_t training = 0;
  for (const auto& w : plan.problem.workloads) training += w.is_training;
  CHECK(secrets == 0);
  CHECK(jobsets == training);
  CHECK(deployments == plan.problem.workloads.size() - training);

  for (const char* target : {"gke", "terraform"}) {
    auto out = cluster_export(plan, target);
    REQUIRE_MESSAGE(out.ok(), messages(out.errors()));
    if (std::string(target) == "gke") {
      CHECK(sh_n(dir, *out) == 0);
      check_gke_lines(*out, plan.packing.pools.size());
    } else {
      const auto json = nlohmann::json::parse(*out);
      CHECK(json["resource"]["google_container_node_pool"].size() == plan.packing.pools.size());
      CHECK(json["//"].get<std::string>().find(plan.name) != std::string::npos);  // a JSON string holds it as it is
    }
  }
}

TEST_CASE("47: a derived object name that does not survive is an error at the name: key") {
  const auto dir = testing::scratch_dir("issue47-names");
  const auto file = write(dir / "c.yaml", cluster_text("  - name: '!!!'\n    service: {gpu: a100-sxm-40gb, replicas: 1}\n"
                                                       "    hours: always\n",
                                                       "'2024 estate'"));
  auto loaded = load_cluster_file(file, catalog());
  REQUIRE_MESSAGE(loaded.ok(), messages(loaded.errors()));
  auto plan = plan_cluster(*loaded, catalog());
  REQUIRE_MESSAGE(plan.ok(), messages(plan.errors()));
  auto k8s = cluster_export(*plan, "k8s");
  REQUIRE_FALSE(k8s.ok());
  CHECK(messages(k8s.errors()) == file.string() + ":6:11: error: export: workload '!!!': its name has no letter or digit\n");
  // gke joins a cluster named after the plan: GKE's rule, a letter first.
  auto gke = cluster_export(*plan, "gke");
  REQUIRE_FALSE(gke.ok());
  CHECK(messages(gke.errors()).starts_with(file.string() + ":1:7: error: export: cluster '2024 estate': its name becomes "
                                                            "'2024-estate', which is no cluster name"));
}

TEST_CASE("47: a cluster file reads scenarios from its own folder only, and never shows another file's content") {
  const auto dir = testing::scratch_dir("issue47-paths");
  const auto outside = write(dir / "secret.yaml", "name: leaked\n");
  write(dir / "team" / "secrets.env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI\n");
  write(dir / "team" / "config.json", "{\"private_key\": \"-----BEGIN\", \"auths\": {\"r\": \"c2VjcmV0\"}}\n");
  fs::create_symlink(outside, dir / "team" / "link.yaml");
  struct Case {
    std::string written;
    std::string error;
  };
  const std::string c = (dir / "team" / "c.yaml").string();
  const std::vector<Case> cases = {
      {"/etc/passwd", c + ":7:15: error: workloads[0].scenario: the scenario '/etc/passwd' is outside the cluster file's directory "
                          "(put it beside the cluster file or in a folder below it, or set CAPSIM_ALLOW_TRACE_OUTSIDE=1 for a "
                          "cluster file you trust)\n"},
      {"../secret.yaml", c + ":7:15: error: workloads[0].scenario: the scenario '../secret.yaml' is outside the cluster "
                             "file's directory (put it beside the cluster file or in a folder below it, or set "
                             "CAPSIM_ALLOW_TRACE_OUTSIDE=1 for a cluster file you trust)\n"},
      {"link.yaml", c + ":7:15: error: workloads[0].scenario: the scenario 'link.yaml' is outside the cluster file's "
                        "directory (put it beside the cluster file or in a folder below it, or set "
                        "CAPSIM_ALLOW_TRACE_OUTSIDE=1 for a cluster file you trust)\n"},
  };
  for (const auto& k : cases) {
    CAPTURE(k.written);
    write(c, cluster_text(scenario_workload(k.written)));
    auto loaded = load_cluster_file(c, catalog());
    REQUIRE_FALSE(loaded.ok());
    CHECK(messages(loaded.errors()) == k.error);
  }
  // Inside the folder, a file that is no scenario: what it is, not what it holds.
  for (const char* name : {"secrets.env", "config.json"}) {
    write(c, cluster_text(scenario_workload(name)));
    auto loaded = load_cluster_file(c, catalog());
    REQUIRE(loaded.ok());
    auto plan = plan_cluster(*loaded, catalog());
    REQUIRE_FALSE(plan.ok());
    const std::string text = messages(plan.errors());
    CAPTURE(text);
    CHECK(text.find("(the file's content is not shown)") != std::string::npos);
    for (const char* secret : {"wJalrXUtnFEMI", "private_key", "BEGIN", "auths", "c2VjcmV0"})
      CHECK(text.find(secret) == std::string::npos);
  }
  // CAPSIM_ALLOW_TRACE_OUTSIDE=1, the single scenario's escape hatch, lifts it for a trusted file.
  write(c, cluster_text(scenario_workload("../secret.yaml")));
  ::setenv("CAPSIM_ALLOW_TRACE_OUTSIDE", "1", 1);
  auto trusted = load_cluster_file(c, catalog());
  ::unsetenv("CAPSIM_ALLOW_TRACE_OUTSIDE");
  CHECK(trusted.ok());
}

TEST_CASE("47: the control-character rule holds in cluster files: every one at its line and column") {
  const auto dir = testing::scratch_dir("issue47-controls");
  const auto file = write(dir / "c.yaml", cluster_text("  - name: \"nb\\u202Eexe.txt\"\n    service: {gpu: a100-sxm-40gb, "
                                                       "replicas: 1}\n    hours: always\n"
                                                       "# a comment may say anything\n",
                                                       "\"estate\\e[2J\""));
  auto loaded = load_cluster_file(file, catalog());
  REQUIRE_FALSE(loaded.ok());
  const std::string f = file.string();
  CHECK(messages(loaded.errors()) ==
        f + ":1:7: error: contains the control character U+001B (remove it; text from this file is printed to terminals "
            "and written to reports and exports)\n" +
            f + ":6:11: error: contains the control character U+202E (remove it; text from this file is printed to "
                "terminals and written to reports and exports)\n");
  // A newline in a name would be a line of a script or a YAML stream: one line only.
  write(file, cluster_text("  - name: \"nb\\n---\\nkind: Secret\"\n    service: {gpu: a100-sxm-40gb, replicas: 1}\n"
                           "    hours: always\n",
                           "\"estate\\ntouch pwned\""));
  loaded = load_cluster_file(file, catalog());
  REQUIRE_FALSE(loaded.ok());
  CHECK(messages(loaded.errors()) == f + ":1:7: error: name: must be one line (no newline or tab)\n" + f +
                                         ":6:11: error: workloads[0].name: must be one line (no newline or tab)\n");
}
