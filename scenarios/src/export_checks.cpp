// The values an export writes that come from the command line (--cluster, --location,
// --image), checked against the rules of the tool that reads them, as a scenario's keys are
// checked (issue 47): a value the receiving API would refuse, or one that could become a
// second shell command, is refused here with the flag's name, never written.
#include <algorithm>
#include <cctype>
#include <set>

#include "capsim/core/suggest.hpp"
#include "capsim/core/text.hpp"
#include "capsim/scenarios/export.hpp"

namespace capsim::scenarios {
namespace {

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A lowercase label: `first` and then lowercase letters, digits and '-', not ending in '-',
// of `min` to `max` characters.
bool lower_label(std::string_view s, std::size_t max, bool letter_first) {
  if (s.empty() || s.size() > max) return false;
  if (letter_first ? !(s.front() >= 'a' && s.front() <= 'z') : !lower_alnum(s.front())) return false;
  if (!lower_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return lower_alnum(c) || c == '-'; });
}

// ---- OCI image references: the grammar of distribution/reference (reference.go), which
// Kubernetes, containerd and Docker parse:
//   reference  := name [ ":" tag ] [ "@" digest ]
//   name       := [domain "/"] path-component ["/" path-component]*     (at most 255 characters)
//   domain     := domain-component ["." domain-component]* [":" port]  (or "[" IPv6 "]" [":" port])
//   domain-component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
//   path-component   := [a-z0-9]+ (("." | "_" | "__" | "-"+) [a-z0-9]+)*
//   tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//   digest     := algorithm ":" [0-9a-fA-F]{32,}, algorithm := [A-Za-z][A-Za-z0-9]* ([+._-] [A-Za-z][A-Za-z0-9]*)*
// The first component is the registry when it holds a '.' or a ':' or is "localhost", as
// Docker reads it.

bool path_component(std::string_view s) {
  std::size_t i = 0;
  auto run = [&] {
    const std::size_t start = i;
    while (i < s.size() && lower_alnum(s[i])) ++i;
    return i > start;
  };
  if (!run()) return false;
  while (i < s.size()) {
    if (s[i] == '.') ++i;
    else if (s[i] == '_') i += (i + 1 < s.size() && s[i + 1] == '_') ? 2 : 1;
    else if (s[i] == '-') while (i < s.size() && s[i] == '-') ++i;
    else return false;
    if (!run()) return false;
  }
  return true;
}

bool domain_component(std::string_view s) {
  return !s.empty() && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return alnum(c) || c == '-'; });
}

bool domain(std::string_view s) {
  std::string_view host = s;
  if (const auto colon = s.rfind(':'); colon != std::string_view::npos && s.find(']', colon) == std::string_view::npos) {
    const std::string_view port = s.substr(colon + 1);
    if (port.empty() || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    host = s.substr(0, colon);
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    return std::all_of(host.begin() + 1, host.end() - 1, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':'; });
  std::size_t start = 0;
  while (true) {
    const auto dot = host.find('.', start);
    if (!domain_component(host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool tag(std::string_view s) {
  auto word = [](char c) { return alnum(c) || c == '_'; };
  return !s.empty() && s.size() <= 128 && word(s.front()) &&
         std::all_of(s.begin(), s.end(), [&](char c) { return word(c) || c == '.' || c == '-'; });
}

bool digest(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view algorithm = s.substr(0, colon), hex = s.substr(colon + 1);
  if (hex.size() < 32 || !std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return false;
  bool component_start = true;
  for (char c : algorithm) {
    if (component_start) {
      if (!std::isalpha(static_cast<unsigned char>(c))) return false;
      component_start = false;
    } else if (c == '+' || c == '.' || c == '_' || c == '-') {
      component_start = true;
    } else if (!alnum(c)) {
      return false;
    }
  }
  return !algorithm.empty() && !component_start;
}

// Why `ref` is no image reference; "" when it is one.
std::string image_reference_problem(std::string_view ref) {
  if (ref.empty()) return "it is empty";
  std::string_view name = ref;
  if (const auto at = ref.find('@'); at != std::string_view::npos) {
    if (!digest(ref.substr(at + 1))) return "the digest after '@' is not <algorithm>:<at least 32 hex digits>";
    name = ref.substr(0, at);
  }
  if (const auto colon = name.rfind(':'); colon != std::string_view::npos && name.find('/', colon) == std::string_view::npos) {
    const std::string_view t = name.substr(colon + 1);
    const std::string_view before = name.substr(0, colon);
    // "host:5000/x" has its port's colon before a '/'; "host:5000" alone is a tag of "host".
    if (!tag(t)) return "the tag after ':' is 1 to 128 letters, digits, '_', '.' and '-' (not starting with '.' or '-')";
    name = before;
  }
  if (name.empty()) return "it names no repository";
  if (name.size() > 255) return "a repository name has at most 255 characters";
  std::size_t start = 0;
  const auto first_slash = name.find('/');
  if (first_slash != std::string_view::npos) {
    const std::string_view first = name.substr(0, first_slash);
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost" ||
        std::any_of(first.begin(), first.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); })) {
      if (!domain(first)) return "the registry '" + std::string(first) + "' is no host name (letters, digits, '-' and '.', and a :port)";
      start = first_slash + 1;
    }
  }
  while (true) {
    const auto slash = name.find('/', start);
    const std::string_view component =
        name.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (!path_component(component))
      return "the repository path is lowercase letters and digits, separated by '.', '_', '__' or '-' within a "
             "component and by '/' between components";
    if (slash == std::string_view::npos) return "";
    start = slash + 1;
  }
}

Diagnostic flag_error(const std::string& flag, const std::string& value, const std::string& message, const std::string& hint) {
  return Diagnostic{{}, flag, "'" + value + "' " + message, hint};
}

}  // namespace

bool is_dns1123_label(std::string_view s) { return lower_label(s, 63, false); }

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    const auto dot = s.find('.', start);
    if (!lower_label(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start), 253, false))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_gke_cluster_name(std::string_view s) { return lower_label(s, 40, true); }

bool is_image_reference(std::string_view s) { return image_reference_problem(s).empty(); }

std::vector<Diagnostic> check_export_settings(const ExportSettings& s, ExportFormat format) {
  std::vector<Diagnostic> errors;
  if (!is_gke_cluster_name(s.cluster))
    errors.push_back(flag_error("--cluster", s.cluster,
                                "is no cluster name: a lowercase letter, then at most 39 lowercase letters, digits and "
                                "'-', not ending in '-' (GKE's rule; Karpenter's EC2NodeClass and IAM role take it too)",
                                "e.g. --cluster ml-prod"));
  if ((format == ExportFormat::gke || format == ExportFormat::terraform) && !s.location.empty() &&
      !lower_label(s.location, 63, true))
    errors.push_back(flag_error("--location", s.location, "is no GCP region or zone name",
                                "e.g. --location us-central1 or us-central1-a"));
  if (format == ExportFormat::k8s)
    if (const std::string why = image_reference_problem(s.image); !why.empty())
      errors.push_back(flag_error("--image", s.image, "is no image reference ([registry/]repository[:tag][@digest]): " + why,
                                  "e.g. --image nvcr.io/nvidia/pytorch:24.05-py3"));
  return errors;
}

std::vector<std::string> gcp_regions(const hardware::Catalog& catalog) {
  std::set<std::string> regions;
  if (const auto* gcp = catalog.find(hardware::EntityKind::provider, "gcp"))
    if (const auto* listed = gcp->find("regions")) regions.insert(listed->items.begin(), listed->items.end());
  for (const auto& e : catalog.all(hardware::EntityKind::instance))
    if (e.text("provider") == "gcp" && lower_label(e.text("region"), 63, true)) regions.insert(e.text("region"));
  return {regions.begin(), regions.end()};
}

Status check_gcp_location(std::string_view location, const hardware::Catalog& catalog) {
  const std::vector<std::string> regions = gcp_regions(catalog);
  const std::string region(is_gke_zone(location) ? location.substr(0, location.size() - 2) : location);
  if (std::find(regions.begin(), regions.end(), region) != regions.end()) return {};
  std::string list;
  for (const auto& r : regions) list += (list.empty() ? "" : ", ") + r;
  std::vector<std::string> candidates = regions;
  for (const auto& r : regions)
    for (char zone : {'a', 'b', 'c', 'f'}) candidates.push_back(r + "-" + zone);
  const std::string near = did_you_mean(location, candidates);
  return {flag_error("--location", std::string(location),
                     "is no GCP region or zone of the catalog (regions " + list +
                         "; a zone is a region and a letter, e.g. " + (regions.empty() ? "us-central1" : regions.front()) +
                         "-a)",
                     near.empty() ? "the catalog's providers.yaml lists gcp's regions" : near)};
}

}  // namespace capsim::scenarios
