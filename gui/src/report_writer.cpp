#include "capsim/render/report.hpp"

#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>
#include <QUrl>
#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "capsim/core/files.hpp"
#include "capsim/core/text.hpp"
#include "capsim/scenarios/report.hpp"
#include "chart_builders.hpp"

namespace capsim::render {
namespace {

using scenarios::ChartKind;
using scenarios::ReportDocument;

// Chart sizes in pixels: HTML at screen width, PDF to fit an A4 page at the writer's 110 dpi
// (180 mm of text width is 780 px).
constexpr int kChartWidth = 900, kChartHeight = 480;
constexpr int kPdfChartWidth = 760, kPdfChartHeight = 400;


QImage chart_for(ChartKind kind, const scenarios::RunResult& run, int w, int h) {
  switch (kind) {
    case ChartKind::frontier: return chart_image(frontier_chart(*run.sizing), w, h);
    case ChartKind::memory_breakdown: return chart_image(memory_chart(scenarios::memory_bars(run)), w, h);
    case ChartKind::station_utilization:
      return chart_image(utilization_chart(scenarios::utilization_bars(run)), w, h);
    case ChartKind::cost_over_horizon: return chart_image(cost_chart(scenarios::cost_lines(run)), w, h);
    case ChartKind::latency_cdf: return chart_image(latency_cdf_chart(scenarios::latency_cdf(run)), w, h);
    case ChartKind::cluster_packing:
    case ChartKind::cluster_timeline: return {};  // a scenario's report has none (write_cluster_report)
  }
  return {};
}

QImage chart_for(ChartKind kind, const scenarios::ClusterPlan& plan, int w, int h) {
  if (kind == ChartKind::cluster_packing) return packing_image(plan);
  if (kind == ChartKind::cluster_timeline) return chart_image(cluster_timeline_chart(plan), w, h);
  return {};
}

QByteArray png_bytes(const QImage& image) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return bytes;
}

// The body's layout: a readable column in a browser; in a PDF the page's margins.
constexpr std::string_view kHtmlBodyLayout = "max-width:1000px;margin:2em auto;";
constexpr std::string_view kPdfBodyLayout = "margin:0;";

// Text as the HTML report carries it: escaped, nothing added.
std::string html_text(const std::string& text) { return xml_escape(text); }

// The longest token kept whole in a PDF: identifiers (p5.48xlarge, nvidia.com/mig-1g.5gb,
// h100-sxm-80gb, gcp-a2-highgpu-1g) are shorter; URLs and file paths that are longer keep
// the break opportunities Qt finds in them (after '/', '-'), so a long source still wraps.
constexpr std::size_t kLongestWholeToken = 40;
// U+2060 WORD JOINER: no line break on either side of it, and no glyph (the PDF's text, as
// pdftotext or a copy reads it, does not contain it).
constexpr const char* kWordJoiner = "\u2060";

// Text for the PDF: escaped, and each identifier-like token (letters or digits with
// punctuation, no space, at most kLongestWholeToken bytes) with a word joiner after each of
// its punctuation characters, because Qt's line breaker (Unicode UAX #14) breaks after '/'
// and '-' and between '.' and a digit: it would print `nvidia.com/` on one line and
// `mig-1g.5gb` on the next. Lines then break at spaces, or inside a long token only.
std::string pdf_text(const std::string& text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \t\n", i), text.size());
    const std::string_view token(text.data() + i, end - i);
    const bool has_alnum =
        std::any_of(token.begin(), token.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
    const bool whole = has_alnum && token.size() <= kLongestWholeToken;
    std::string kept;
    for (std::size_t k = 0; k < token.size(); ++k) {
      kept += token[k];
      if (whole && k + 1 < token.size() && std::ispunct(static_cast<unsigned char>(token[k]))) kept += kWordJoiner;
    }
    out += xml_escape(kept);
    if (end < text.size()) out += text[end];
    i = end + 1;
  }
  return out;
}

template <class Text>
std::string table_html(const scenarios::Table& t, Text text) {
  std::string out = "<table><thead><tr>";
  for (std::size_t c = 0; c < t.columns.size(); ++c) out += "<th>" + text(t.columns[c]) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool right = c < t.right_align.size() && t.right_align[c];
      out += std::string(right ? "<td class=\"num\">" : "<td>") + text(row[c].text) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>\n";
}

// `image_src(i)` gives the src of the i-th chart: a data URI for HTML, a resource name for PDF;
// `text(s)` the markup of a text: html_text or pdf_text; `body_layout` the body's width and
// margins (CSS).
template <class ImageSource, class Text>
std::string document_html(const ReportDocument& doc, ImageSource image_src, Text text, std::string_view body_layout) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + xml_escape(doc.title) +
      "</title>\n<style>body{font-family:sans-serif;" + std::string(body_layout) + "color:#222}"
      "h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:1.6em}"
      "table{border-collapse:collapse;margin:0.6em 0;font-size:0.9em}"
      "th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}"
      "td.num{text-align:right}th{background:#f0f0f0}pre{background:#f7f7f7;padding:0.8em;font-size:0.85em}"
      "img{max-width:100%}.footer{color:#777;font-size:0.8em;margin-top:2em}</style></head><body>\n";
  out += "<h1>" + text(doc.title) + "</h1>\n<p>" + text(doc.subtitle) + "</p>\n";
  int chart = 0;
  for (const auto& s : doc.sections) {
    out += "<h2 id=\"" + s.id + "\">" + text(s.title) + "</h2>\n";
    for (const auto& p : s.paragraphs) out += "<p>" + text(p) + "</p>\n";
    for (std::size_t i = 0; i < s.charts.size(); ++i)
      out += "<p><img alt=\"" + xml_escape(s.title) + " chart\" src=\"" + image_src(chart++) + "\"></p>\n";
    for (const auto& t : s.tables) out += table_html(t, text);
    if (!s.preformatted.empty()) out += "<pre>" + xml_escape(s.preformatted) + "</pre>\n";
  }
  return out + "<p class=\"footer\">" + text(doc.footer) + "</p>\n</body></html>\n";
}

template <class Source>
std::vector<QImage> charts_of(const ReportDocument& doc, const Source& run, int w, int h) {
  std::vector<QImage> images;
  for (const auto& s : doc.sections)
    for (auto kind : s.charts) images.push_back(chart_for(kind, run, w, h));
  return images;
}

// The smallest font a table is shrunk to, in points, and how many times it is tried.
constexpr double kSmallestTableFont = 5.0;
constexpr int kShrinkSteps = 12;

// Each table wider than the text (its columns cannot be narrower than their longest
// unbreakable token) gets a smaller font until it fits, down to kSmallestTableFont: a
// wide table prints smaller, never past the page margin or split inside a word. Qt gives
// a table at most the text width less the document margin on each side; a table that
// needs more is laid out wider than that.
void fit_tables_to_width(QTextDocument& text) {
  const qreal available = text.textWidth() - 2 * text.documentMargin() + 0.5;
  for (QTextFrame* frame : text.rootFrame()->childFrames()) {
    auto* table = qobject_cast<QTextTable*>(frame);
    if (!table) continue;
    QTextCursor cells(&text);
    cells.setPosition(table->firstPosition());
    cells.setPosition(table->lastPosition(), QTextCursor::KeepAnchor);
    qreal size = cells.charFormat().font().pointSizeF();
    if (size <= 0) size = text.defaultFont().pointSizeF();
    for (int step = 0; step < kShrinkSteps && size > kSmallestTableFont; ++step) {
      const qreal width = text.documentLayout()->frameBoundingRect(table).width();
      if (width <= available) break;
      size = std::max(kSmallestTableFont, size * std::min(0.95, available / width));
      QTextCharFormat smaller;
      smaller.setFontPointSize(size);
      cells.mergeCharFormat(smaller);
    }
  }
}

Status write_pdf(const ReportDocument& doc, const std::vector<QImage>& images, const std::filesystem::path& file) {
  QTextDocument text;
  for (std::size_t i = 0; i < images.size(); ++i)
    text.addResource(QTextDocument::ImageResource, QUrl("chart:" + QString::number(i)), images[i]);
  // Lines break at word boundaries only: Qt's default also breaks anywhere inside a word that
  // does not fit (p5.48xlar|ge).
  QTextOption wrap = text.defaultTextOption();
  wrap.setWrapMode(QTextOption::WordWrap);
  text.setDefaultTextOption(wrap);
  // No body margin: the page has its margins, and Qt would indent the text by the body's
  // but still give a table the whole text width, past the right margin.
  text.setHtml(QString::fromStdString(
      document_html(doc, [](int i) { return "chart:" + std::to_string(i); }, pdf_text, kPdfBodyLayout)));
  // Into memory first: QPdfWriter does not report a failed write to a file, so the bytes
  // go through the one atomic writer, which does.
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  {
    QPdfWriter pdf(&buffer);
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    pdf.setTitle(QString::fromStdString(doc.title));
    pdf.setCreator("capsim");
    pdf.setResolution(110);
    text.setPageSize(QSizeF(pdf.width(), pdf.height()));
    fit_tables_to_width(text);
    text.print(&pdf);
  }
  buffer.close();
  if (bytes.isEmpty())
    return {environment_failure(Diagnostic{{file.string()}, "", "cannot render the PDF report", ""})};
  return write_file_atomically(file, std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}

// A document in the format of the file's extension (.md, .csv: one file per table, .html, .pdf); `source` draws
// its charts (a run or a cluster plan).
template <class Source>
Status write_document(const ReportDocument& doc, const Source& source, const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".md") return write_file_atomically(file, scenarios::report_markdown(doc));
  if (ext == ".csv") {  // one file per table, FILE's stem + "-NAME.csv"
    auto written = scenarios::write_csv_report(doc, file);
    return written ? Status{} : written.errors();
  }
  if (ext != ".html" && ext != ".pdf")
    return {Diagnostic{{file.string()}, "", "unknown report format '" + ext + "'", "use .html, .pdf, .md, .csv or .json"}};
  ensure_application();
  if (ext == ".pdf") return write_pdf(doc, charts_of(doc, source, kPdfChartWidth, kPdfChartHeight), file);
  const std::vector<QImage> images = charts_of(doc, source, kChartWidth, kChartHeight);
  std::vector<std::string> uris;
  for (const auto& image : images)
    uris.push_back("data:image/png;base64," + png_bytes(image).toBase64().toStdString());
  return write_file_atomically(
      file, document_html(doc, [&](int i) { return uris[static_cast<std::size_t>(i)]; }, html_text, kHtmlBodyLayout));
}

}  // namespace

Status write_report(const scenarios::RunResult& run, const hardware::Catalog& catalog,
                    const std::filesystem::path& file) {
  if (file.extension() == ".json") return write_file_atomically(file, scenarios::run_json(run));
  return write_document(scenarios::build_report(run, catalog), run, file);
}

Status write_cluster_report(const scenarios::ClusterPlan& plan, const std::filesystem::path& file) {
  if (file.extension() == ".json") return write_file_atomically(file, scenarios::cluster_plan_json(plan));
  return write_document(scenarios::cluster_report(plan), plan, file);
}

}  // namespace capsim::render
