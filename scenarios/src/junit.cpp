// JUnit XML through pugixml: the library escapes every attribute and text node, so nothing
// here builds markup by hand. What it cannot do is make a control character legal: XML 1.0
// allows no C0 character but tab, newline and carriage return, not even as &#N; (which
// pugixml would write), so those are shown first as \xHH, as xml_escape() shows them, and
// the bidirectional overrides as \uHHHH (a CI page must not show a name backwards).
#include "capsim/scenarios/junit.hpp"

#include <pugixml.hpp>

#include <sstream>

#include "capsim/core/text.hpp"

namespace capsim::scenarios {
namespace {

// `text` with each control character of first_control_character() (newline and tab kept)
// shown as printable() shows it, except the carriage return, which XML carries.
std::string visible(const std::string& text) {
  std::string out;
  std::string_view rest = text;
  while (const auto c = first_control_character(rest, true)) {
    const std::size_t length = c->code < 0x80 ? 1 : c->code < 0x800 ? 2 : 3;
    out.append(rest.substr(0, c->offset));
    const std::string character(rest.substr(c->offset, length));
    out += c->code == '\r' ? character : printable(character);
    rest.remove_prefix(c->offset + length);
  }
  out.append(rest);
  return out;
}

void set(pugi::xml_node node, const char* attribute, const std::string& value) {
  node.append_attribute(attribute).set_value(visible(value).c_str());
}
void set(pugi::xml_node node, const char* attribute, std::size_t value) {
  node.append_attribute(attribute).set_value(static_cast<unsigned long long>(value));
}

// Seconds with three decimals, as JUnit consumers read them; never negative.
std::string seconds_text(double seconds) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(3);
  out << (seconds > 0 ? seconds : 0.0);
  return out.str();
}

// "file:line:column: " for an expectation's text in the JUnit report. The Jenkins xUnit
// schema allows no file or line attribute on <testcase>: the suite carries the scenario
// file, and each test case's output and failure text start with where the expectation is.
std::string location_prefix(const SourceLocation& where) {
  return where.file.empty() ? std::string() : format_location(where) + ": ";
}

struct Counts {
  std::size_t tests = 0, failures = 0, errors = 0;
};

// <testsuites> with one <testsuite>; `file` goes on the suite (the schema allows it there)
// when known, and `timestamp` when given.
pugi::xml_node open_suite(pugi::xml_document& doc, const std::string& name, const Counts& n, const std::string& time,
                          const std::string& timestamp, const std::string& file) {
  pugi::xml_node declaration = doc.append_child(pugi::node_declaration);
  declaration.append_attribute("version").set_value("1.0");
  declaration.append_attribute("encoding").set_value("UTF-8");
  pugi::xml_node suites = doc.append_child("testsuites");
  set(suites, "name", std::string("capsim"));
  pugi::xml_node suite = suites.append_child("testsuite");
  set(suite, "name", name);
  for (pugi::xml_node node : {suites, suite}) {
    set(node, "tests", n.tests);
    set(node, "failures", n.failures);
    set(node, "errors", n.errors);
    set(node, "time", time);
  }
  if (!timestamp.empty()) set(suite, "timestamp", timestamp);
  if (!file.empty()) set(suite, "file", file);
  return suite;
}

pugi::xml_node add_case(pugi::xml_node suite, const std::string& classname, const std::string& name,
                        const std::string& time) {
  pugi::xml_node test = suite.append_child("testcase");
  set(test, "classname", classname);
  set(test, "name", name);
  set(test, "time", time);
  return test;
}

void add_text(pugi::xml_node parent, const char* element, const std::string& text) {
  parent.append_child(element).text().set(visible(text).c_str());
}

// Two-space indentation, UTF-8, ending with a newline.
std::string serialize(const pugi::xml_document& doc) {
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_indent, pugi::encoding_utf8);
  return out.str();
}

}  // namespace

std::string junit_xml(const RunResult& r) { return junit_xml(r, 0.0); }

std::string junit_xml(const RunResult& r, double seconds) {
  Counts n;
  n.tests = r.expectations.size();
  for (const auto& e : r.expectations) n.failures += e.passed ? 0 : 1;
  const std::string time = seconds_text(seconds);
  pugi::xml_document doc;
  pugi::xml_node suite = open_suite(doc, r.scenario.name, n, time, r.started_at, r.scenario.file);
  for (const auto& e : r.expectations) {
    pugi::xml_node test = add_case(suite, r.scenario.name, e.expectation.text, seconds_text(0));
    const std::string text = location_prefix(e.expectation.where) + e.message;
    if (e.passed) {
      add_text(test, "system-out", text);
    } else {
      pugi::xml_node failure = test.append_child("failure");
      set(failure, "message", e.message);
      set(failure, "type", std::string("expectation"));
      failure.text().set(visible(text).c_str());
    }
  }
  return serialize(doc);
}

std::string junit_error_xml(const std::string& scenario_file, const std::vector<Diagnostic>& errors, double seconds) {
  const std::string time = seconds_text(seconds);
  pugi::xml_document doc;
  pugi::xml_node suite = open_suite(doc, scenario_file, Counts{1, 0, 1}, time, "", scenario_file);
  pugi::xml_node test = add_case(suite, scenario_file, "load and run the scenario", time);
  pugi::xml_node error = test.append_child("error");
  set(error, "message", errors.empty() ? std::string("bad input") : format_diagnostic(errors.front()));
  set(error, "type", std::string("bad input"));
  error.text().set(visible(format_diagnostics(errors)).c_str());
  return serialize(doc);
}

}  // namespace capsim::scenarios
