#include <doctest/doctest.h>

#include <cmath>

#include "capsim/hardware/loader.hpp"
#include "capsim/hardware/precision_fallback.hpp"
#include "capsim/hardware/query.hpp"

#include <map>
#include <set>

using namespace capsim;
using namespace capsim::hardware;

namespace {

// A small valid catalog; tests append broken entries to it.
const char* kGpus = R"(gpus:
  - id: test-gpu-80gb
    name: Test GPU 80 GB
    vendor: nvidia
    architecture: hopper
    form_factor: sxm
    segment: datacenter
    memory: 80 GB
    memory_bandwidth: 3.35 TB/s
    peak_dense: {fp32: 67 TFLOPS, bf16: 989 TFLOPS, int8: 1979 TOPS}
    tdp: 700 W
    mig_profiles: ["1g.10gb x7", "7g.80gb x1"]
    list_price: {value: 30000 USD, source: "a price list", as_of: 2024-05}
    source: "a datasheet"
    as_of: 2023-09
  - id: small-gpu
    name: Small GPU
    vendor: nvidia
    architecture: turing
    form_factor: pcie
    segment: datacenter
    memory: 16 GB
    memory_bandwidth: 300 GB/s
    peak_dense: {fp32: 8.1 TFLOPS}
    source: "a datasheet"
    as_of: 2019-01
)";

const char* kNetworks = R"(networks:
  - {id: ib-test, name: Test IB, kind: infiniband, port_bandwidth: 400 Gb/s, source: "spec", as_of: 2023-01}
)";

// All diagnostics, one per line, so a failing check prints them readably.
std::string messages(const Result<Catalog>& r) { return format_diagnostics(r.errors()); }

std::string lines(const std::vector<std::string>& expected) {
  std::string out;
  for (const auto& l : expected) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE("a valid catalog loads with typed values and provenance") {
  auto c = load_catalog({{"gpus.yaml", kGpus}, {"networks.yaml", kNetworks}});
  REQUIRE(c.ok());
  CHECK(c->size() == 3);
  auto gpu = c->gpu("test-gpu-80gb");
  REQUIRE(gpu.ok());
  CHECK(gpu->memory.value() == 80e9);
  CHECK(gpu->memory_bandwidth.value() == 3.35e12);
  CHECK(gpu->peak("bf16")->value() == 989e12);
  CHECK(gpu->peak("tf32")->value() == 67e12);  // no tf32 figure: falls back to fp32
  CHECK_FALSE(gpu->peak("fp8").has_value());
  REQUIRE(gpu->mig_profiles.size() == 2);
  CHECK(gpu->mig_profiles[0].compute_slices == 1);
  CHECK(gpu->mig_profiles[0].memory_gb == 10);
  CHECK(gpu->mig_profiles[0].max_instances == 7);
  const Entity* e = c->find_gpu("test-gpu-80gb");
  REQUIRE(e != nullptr);
  CHECK(e->find("memory")->provenance->source == "a datasheet");
  CHECK(e->find("list_price")->provenance->source == "a price list");
  CHECK(e->find("list_price")->provenance->as_of == "2024-05");
  CHECK(e->find("memory")->where.line == 8);
  CHECK(e->find("memory")->where.column == 13);
}

TEST_CASE("lookups suggest the closest id") {
  auto c = load_catalog({{"gpus.yaml", kGpus}});
  REQUIRE(c.ok());
  auto missing = c->gpu("test-gpu-80");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.errors()[0].message == "unknown gpu 'test-gpu-80'");
  CHECK(missing.errors()[0].hint == "did you mean 'test-gpu-80gb'?");
  CHECK(c->find_gpu("nope") == nullptr);
}

// Negative tests: the exact text users see.
TEST_CASE("loader errors name file line column and key path and suggest a fix") {
  struct Case {
    const char* name;
    const char* yaml;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {"misspelled key",
       "gpus:\n  - {id: g, name: G, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,\n"
       "     memroy: 8 GB, memory: 8 GB, memory_bandwidth: 1 TB/s, source: s, as_of: 2020-01}\n",
       {"t.yaml:3:6: error: gpus[0].memroy: unknown key 'memroy' in gpu entry (did you mean 'memory'?)"}},
      {"wrong unit",
       "gpus:\n  - {id: g, name: G, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,\n"
       "     memory: 8 GB/s, memory_bandwidth: 1 TB/s, source: s, as_of: 2020-01}\n",
       {"t.yaml:3:14: error: gpus[0].memory: expected a data size (e.g. '80 GB'), got a bandwidth (e.g. "
        "'3.35 TB/s' or '400 Gb/s') ('8 GB/s')"}},
      {"unknown unit",
       "gpus:\n  - {id: g, name: G, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,\n"
       "     memory: 8 GBs, memory_bandwidth: 1 TB/s, source: s, as_of: 2020-01}\n",
       {"t.yaml:3:14: error: gpus[0].memory: unknown unit 'GBs' in '8 GBs' (did you mean 'GB'?)"}},
      {"no source",
       "gpus:\n  - {id: g, name: G, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,\n"
       "     memory: 8 GB, memory_bandwidth: 1 TB/s}\n",
       {"t.yaml:3:14: error: gpus[0].memory: a number without a source (give the entry 'source' and 'as_of', or "
        "write {value: ..., source: ..., as_of: ...})",
        "t.yaml:3:38: error: gpus[0].memory_bandwidth: a number without a source (give the entry 'source' and "
        "'as_of', or write {value: ..., source: ..., as_of: ...})"}},
      {"missing required fields and bad choice",
       "gpus:\n  - {id: g, name: G, vendor: nvidai, form_factor: pcie, segment: consumer, memory: 8 GB,\n"
       "     source: s, as_of: 2020-13}\n",
       {"t.yaml:3:24: error: gpus[0].as_of: invalid date '2020-13' (write the date the source gave the figure as "
        "YYYY-MM or YYYY-MM-DD)",
        "t.yaml:2:30: error: gpus[0].vendor: expected one of nvidia, amd, intel or google, got 'nvidai' (did you mean "
        "'nvidia'?)",
        "t.yaml:2:84: error: gpus[0].memory: a number without a source (give the entry 'source' and 'as_of', or "
        "write {value: ..., source: ..., as_of: ...})",
        "t.yaml:2:5: error: gpus[0]: missing required field 'architecture'",
        "t.yaml:2:5: error: gpus[0]: missing required field 'memory_bandwidth'"}},
      {"negative and zero quantities",
       "gpus:\n  - {id: g, name: G, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,\n"
       "     memory: -8 GB, memory_bandwidth: 0 TB/s, source: s, as_of: 2020-01}\n",
       {"t.yaml:3:14: error: gpus[0].memory: must be greater than zero, got '-8 GB'",
        "t.yaml:3:39: error: gpus[0].memory_bandwidth: must be greater than zero, got '0 TB/s'"}},
      {"unknown section",
       "gpu:\n  - {id: g}\n", {"t.yaml:1:1: error: gpu: unknown section 'gpu' (did you mean 'gpus'?)"}},
      {"duplicate key",
       "networks:\n  - {id: n, name: N, kind: ethernet, port_bandwidth: 1 Gb/s, port_bandwidth: 2 Gb/s, source: s, "
       "as_of: 2020-01}\n",
       {"t.yaml:2:62: error: networks[0].port_bandwidth: duplicate key 'port_bandwidth'"}},
      {"invalid id",
       "networks:\n  - {id: Bad_Id, name: N, kind: ethernet, port_bandwidth: 1 Gb/s, source: s, as_of: 2020-01}\n",
       {"t.yaml:2:10: error: networks[0].id: invalid id 'Bad_Id' (ids are lowercase letters, digits and single "
        "hyphens, e.g. 'h100-sxm-80gb')"}},
      {"invalid YAML", "gpus: [\n", {"t.yaml:2:1: error: invalid YAML: end of sequence flow not found"}},
      {"not a list", "gpus: 3\n", {"t.yaml:1:7: error: gpus: expected a list of entries, got '3'"}},
      {"an SM count without its clock",
       "gpus:\n  - {id: g, name: G, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,\n"
       "     memory: 8 GB, memory_bandwidth: 1 TB/s, sm_count: 40, source: s, as_of: 2020-01}\n",
       {"t.yaml:3:56: error: gpus[0].sm_count: an SM count needs 'boost_clock' beside it (the models divide the "
        "peaks by SMs x clock: give both or neither)"}},
      {"bad MIG profile",
       "gpus:\n  - {id: g, name: G, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,\n"
       "     memory: 8 GB, memory_bandwidth: 1 TB/s, mig_profiles: [1g.10gb], source: s, as_of: 2020-01}\n",
       {"t.yaml:3:61: error: gpus[0].mig_profiles[0]: expected a MIG profile 'NAME xMAX', got '1g.10gb' (e.g. "
        "'1g.10gb x7')"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto r = load_catalog({{"t.yaml", c.yaml}});
    REQUIRE_FALSE(r.ok());
    CHECK(messages(r) == lines(c.expected));
  }
}

TEST_CASE("duplicate ids and dangling references are rejected across files") {
  const char* servers = R"(servers:
  - id: test-gpu-80gb
    name: clash
    vendor: x
    gpu: small-gpu
    gpu_count: 4
    source: s
    as_of: 2024-01
  - id: box
    name: Box
    vendor: x
    gpu: test-gpu-80
    gpu_count: 8
    nics: ["8 x ib-tset"]
    source: s
    as_of: 2024-01
)";
  auto r = load_catalog({{"gpus.yaml", kGpus}, {"networks.yaml", kNetworks}, {"servers.yaml", servers}});
  REQUIRE_FALSE(r.ok());
  CHECK(messages(r) == lines({
                           "servers.yaml:2:9: error: servers[0].id: duplicate id 'test-gpu-80gb' (first defined at "
                           "gpus.yaml:2:5)",
                           "servers.yaml:12:10: error: servers[box].gpu: unknown gpu 'test-gpu-80' (did you mean "
                           "'test-gpu-80gb'?)",
                           "servers.yaml:14:11: error: servers[box].nics: unknown network 'ib-tset' (did you mean "
                           "'ib-test'?)",
                       }));
}

TEST_CASE("exchange rates outside [1e-6, 1e6] USD and two of one currency on one date are refused (issue 47)") {
  // 1e-300 printed "1 RUB = 0 USD"; a second rate of the same day was taken or not by file order.
  const char* rates = R"(exchange_rates:
  - id: rub-a
    currency: RUB
    usd: 0.011833
    source: s
    as_of: 2026-09-18
  - id: rub-tiny
    currency: RUB
    usd: 1e-300
    source: s
    as_of: 2026-09-19
  - id: gbp-huge
    currency: GBP
    usd: 1e300
    source: s
    as_of: 2026-09-19
)";
  const char* again = R"(exchange_rates:
  - id: rub-b
    currency: RUB
    usd: 0.0119
    source: s
    as_of: 2026-09-18
  - id: rub-c
    currency: RUB
    usd: 0.0120
    source: s
    as_of: 2026-09-20
)";
  auto r = load_catalog({{"rates.yaml", rates}, {"more.yaml", again}});
  REQUIRE_FALSE(r.ok());
  CHECK(messages(r) ==
        lines({
            "rates.yaml:9:10: error: exchange_rates[1].usd: must be between 0.000001 and 1000000 US dollars per unit, got "
            "'1e-300' (US dollars per one unit of the currency, e.g. 0.011833 for RUB)",
            "rates.yaml:14:10: error: exchange_rates[2].usd: must be between 0.000001 and 1000000 US dollars per unit, got "
            "'1e300' (US dollars per one unit of the currency, e.g. 0.011833 for RUB)",
            "more.yaml:2:5: error: exchange_rates[rub-b]: a second RUB rate as of 2026-09-18 ('rub-a' gives one): which "
            "converts would be ambiguous (keep one of them, or date each by the day it was published (first at "
            "rates.yaml:4))",
        }));
}

TEST_CASE("every problem is reported at once") {
  const char* bad = R"(gpus:
  - {id: a, name: A, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer, memroy: 8 GB,
     memory: 8 GB, memory_bandwidth: 1 TB/s, source: s, as_of: 2020-01}
  - {id: b, name: B, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,
     memory: 8 GB/s, memory_bandwidth: 1 TB/s, source: s, as_of: 2020-01}
  - {id: a, name: A2, vendor: nvidia, architecture: x, form_factor: pcie, segment: consumer,
     memory: 8 GB, memory_bandwidth: 1 TB/s, source: s, as_of: 2020-01}
)";
  auto r = load_catalog({{"t.yaml", bad}});
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors().size() == 3);
}

TEST_CASE("queries filter with units and sort numerically") {
  auto c = load_catalog({{"gpus.yaml", kGpus}});
  REQUIRE(c.ok());
  auto f = parse_filter(EntityKind::gpu, "memory>=40 GB");
  REQUIRE(f.ok());
  auto rows = run_query(*c, EntityKind::gpu, {{*f}, "", false});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0]->id == "test-gpu-80gb");
  auto sorted = run_query(*c, EntityKind::gpu, {{}, "memory_bandwidth", false});
  REQUIRE(sorted.ok());
  CHECK((*sorted)[0]->id == "small-gpu");
  auto vendor = parse_filter(EntityKind::gpu, "vendor=NVIDIA");
  REQUIRE(vendor.ok());
  CHECK(run_query(*c, EntityKind::gpu, {{*vendor}, "", false})->size() == 2);
  auto typo = parse_filter(EntityKind::gpu, "memroy>1 GB");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.errors()[0].message == "unknown gpu field 'memroy'");
  CHECK(typo.errors()[0].hint == "did you mean 'memory'?");
  auto unit = parse_filter(EntityKind::gpu, "memory>1 TB/s");
  REQUIRE_FALSE(unit.ok());
  CHECK(unit.errors()[0].message == "'memory' is a data size (e.g. '80 GB'), got '1 TB/s'");
}

TEST_CASE("the shipped catalog is valid and complete") {
  auto c = load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  if (!c.ok()) FAIL(format_diagnostics(c.errors()));
  CHECK(c->all(EntityKind::gpu).size() >= 25);
  CHECK(c->all(EntityKind::cpu).size() >= 8);
  for (const char* id : {"k80", "p4", "p100-pcie-16gb", "v100-sxm2-16gb", "v100-sxm2-32gb", "t4", "a2", "a10", "a10g",
                         "a30", "a40", "a100-pcie-40gb", "a100-sxm-40gb", "a100-pcie-80gb", "a100-sxm-80gb",
                         "rtx-a2000", "rtx-a5000", "rtx-a6000", "gtx-1080-ti", "rtx-3090", "rtx-4090", "l4", "l40s",
                         "h100-pcie-80gb", "h100-sxm-80gb", "h200-sxm-141gb", "b200", "mi300x"}) {
    CAPTURE(id);
    CHECK(c->find_gpu(id) != nullptr);
  }
  auto h100 = c->gpu("h100-sxm-80gb");
  REQUIRE(h100.ok());
  CHECK(h100->memory.value() == 80e9);
  CHECK(h100->memory_bandwidth.value() == 3.35e12);
  CHECK(h100->peak("bf16")->value() == 989e12);
  // Every number in the catalog has a source and a date.
  for (auto kind : kAllKinds)
    for (const auto& e : c->all(kind))
      for (const auto& [name, v] : e.fields)
        if (v.type == FieldType::quantity || v.type == FieldType::integer) {
          CAPTURE(e.id + "." + name);
          REQUIRE(v.provenance.has_value());
          CHECK_FALSE(v.provenance->source.empty());
          CHECK_FALSE(v.provenance->as_of.empty());
        }
  for (const char* provider : {"aws", "gcp", "azure"}) {
    auto p = parse_filter(EntityKind::instance, std::string("provider=") + provider);
    CAPTURE(provider);
    CHECK(run_query(*c, EntityKind::instance, {{*p}, "", false})->size() >= 1);
  }
}

namespace {

const Catalog& shipped() {
  static const Catalog c = [] {
    auto loaded = load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
    REQUIRE_MESSAGE(loaded.ok(), format_diagnostics(loaded.errors()));
    return *loaded;
  }();
  return c;
}

}  // namespace

// Issue 18: the catalog answers "can I rent or buy this GPU, and from whom?" for every GPU.
TEST_CASE("every GPU in the shipped catalog is carried by an instance or a server") {
  const Catalog& c = shipped();
  std::set<std::string> carried;
  for (auto kind : {EntityKind::instance, EntityKind::server})
    for (const auto& e : c.all(kind)) carried.insert(e.text("gpu"));
  // GPUs for which no published rental price or server was found (see the GPU entries'
  // notes and the issue-18 report), and five older or workstation GPUs that are in the
  // catalog for their published benchmark rows (data/validation/cnn_training.yaml). A GPU
  // that gains a carrier must be taken off the list, so the gap stays visible.
  const std::set<std::string> known_gaps = {"a2",        "rtx-a2000",       "v100-sxm3-32gb", "rtx-2080-ti",
                                            "titan-rtx", "quadro-rtx-8000", "rtx-6000-ada"};
  for (const auto& gpu : c.all(EntityKind::gpu)) {
    CAPTURE(gpu.id);
    if (known_gaps.contains(gpu.id)) CHECK_FALSE(carried.contains(gpu.id));
    else CHECK(carried.contains(gpu.id));
  }
}

// SM counts and boost clocks are typed in by hand from datasheets; the peaks are too. A
// tensor core or an SM lane does a power-of-two number of FLOPs per clock, so the dense
// fp16 peak over SMs x clock lands on one (256 on P100's CUDA cores, 512 on GeForce GA102
// with fp32 accumulate, 1,024 on Volta/Turing/GA10x, 2,048 on GA100 and MI300X, 4,096 on
// Hopper) unless a count, a clock or a peak was mistyped.
TEST_CASE("every GPU's SM count and boost clock agree with its fp16 peak") {
  int checked = 0;
  for (const auto& e : shipped().all(EntityKind::gpu)) {
    CAPTURE(e.id);
    auto gpu = shipped().gpu(e.id);
    REQUIRE(gpu.ok());
    const auto rate = gpu->flops_per_clock_per_sm("fp16");
    if (!rate) continue;
    const double nearest = std::exp2(std::round(std::log2(*rate)));
    CHECK(*rate == doctest::Approx(nearest).epsilon(0.02));
    ++checked;
  }
  CHECK(checked >= 20);
  auto rtx3090 = shipped().gpu("rtx-3090");
  REQUIRE(rtx3090.ok());
  CHECK(*rtx3090->flops_per_clock_per_sm("fp16") == doctest::Approx(512).epsilon(0.01));
  auto b200 = shipped().gpu("b200");  // NVIDIA publishes no B200 clock: no rate
  REQUIRE(b200.ok());
  CHECK_FALSE(b200->flops_per_clock_per_sm("fp16").has_value());
}

TEST_CASE("the shipped catalog rents from many providers and prices owned servers") {
  const Catalog& c = shipped();
  std::map<std::string, int> per_provider;
  for (const auto& e : c.all(EntityKind::instance)) ++per_provider[e.text("provider")];
  CHECK(c.all(EntityKind::instance).size() >= 80);
  CHECK(per_provider.size() >= 10);
  // Providers are data: every instance's provider is an entry of providers.yaml (the loader
  // checks the reference), with a currency.
  for (const auto& [id, n] : per_provider) {
    CAPTURE(id);
    const Entity* p = c.find(EntityKind::provider, id);
    REQUIRE(p != nullptr);
    CHECK_FALSE(p->text("currency").empty());
  }
  int priced = 0;
  for (const auto& e : c.all(EntityKind::server)) priced += e.has("purchase_price");
  CHECK(priced >= 5);
  // Euro prices can be converted with a dated rate.
  bool eur = false;
  for (const auto& e : c.all(EntityKind::exchange_rate)) eur |= e.text("currency") == "EUR";
  CHECK(eur);
}

TEST_CASE("a provider that is not in providers.yaml is an error with a suggestion") {
  auto c = load_catalog({{"p.yaml", "providers:\n  - id: aws\n    name: AWS\n    kind: hyperscaler\n    currency: USD\n"},
                         {"i.yaml", "gpus:\n  - id: g\n    name: G\n    vendor: nvidia\n    architecture: x\n"
                                    "    form_factor: pcie\n    segment: datacenter\n    memory: 16 GB\n"
                                    "    memory_bandwidth: 300 GB/s\n    source: t\n    as_of: 2024-01\n"
                                    "instances:\n  - id: i\n    provider: awz\n    name: x\n    region: r\n"
                                    "    gpu: g\n    gpu_count: 1\n    source: t\n    as_of: 2024-01\n"}});
  REQUIRE_FALSE(c.ok());
  const std::string text = format_diagnostics(c.errors());
  CHECK(text.find("unknown provider 'awz'") != std::string::npos);
  CHECK(text.find("aws") != std::string::npos);
}

TEST_CASE("a training precision the GPU lacks falls back as frameworks do") {
  const Catalog& c = shipped();
  auto choose = [&](const char* gpu, const char* precision) {
    const GpuSpec spec = *c.gpu(gpu);
    return training_precision(spec, precision, c.find_gpu(gpu)->text("architecture"));
  };
  // Turing: tensor cores without bf16 -> fp16 mixed precision (T4: 65 TFLOPS fp16).
  CHECK(choose("t4", "bf16").precision == "fp16");
  CHECK(choose("t4", "bf16").fell_back());
  // Volta too.
  CHECK(choose("v100-sxm2-16gb", "bf16").precision == "fp16");
  // Pascal and Kepler: no tensor cores -> fp32.
  CHECK(choose("gtx-1080-ti", "bf16").precision == "fp32");
  CHECK(choose("k80", "bf16").precision == "fp32");
  CHECK(choose("p100-pcie-16gb", "bf16").precision == "fp32");
  // Ampere and later keep bf16, and the RTX A2000/A5000 and RTX PRO 4000 now have a bf16 peak.
  for (const char* gpu : {"a100-sxm-80gb", "rtx-a2000", "rtx-a5000", "rtx-pro-4000-blackwell-sff"}) {
    CAPTURE(gpu);
    CHECK(choose(gpu, "bf16").precision == "bf16");
    CHECK_FALSE(choose(gpu, "bf16").fell_back());
  }
  // tf32 without tensor float -> fp32.
  CHECK(choose("t4", "tf32").precision == "fp32");
}

// A measured maximum achievable GEMM rate sits below its datasheet peak, and its fraction is
// what the models cap their GEMM ceiling at.
TEST_CASE("max_achievable: MI300X's measured MAF, below the peak it is a fraction of") {
  auto mi300x = shipped().gpu("mi300x");
  REQUIRE(mi300x.ok());
  REQUIRE(mi300x->max_achievable_fraction("bf16").has_value());
  CHECK(*mi300x->max_achievable_fraction("bf16") == doctest::Approx(708.0 / 1307.4));
  CHECK(*mi300x->max_achievable_fraction("fp8") == doctest::Approx(1273.0 / 2614.9));
  CHECK_FALSE(mi300x->max_achievable_fraction("fp32").has_value());
  // The L40S's FP8 GEMMs reach about its FP16 peak, half the FP8 datasheet figure.
  auto l40s = shipped().gpu("l40s");
  REQUIRE(l40s.ok());
  CHECK(*l40s->max_achievable_fraction("fp8") == doctest::Approx(378.0 / 733.0));
  CHECK_FALSE(l40s->max_achievable_fraction("bf16").has_value());
  for (const auto& e : shipped().all(EntityKind::gpu)) {
    auto gpu = shipped().gpu(e.id);
    REQUIRE(gpu.ok());
    for (const auto& [precision, rate] : gpu->max_achievable) {
      CAPTURE(e.id);
      CAPTURE(precision);
      REQUIRE(gpu->peak(precision).has_value());
      CHECK(rate.value() < gpu->peak(precision)->value());
    }
  }
}
