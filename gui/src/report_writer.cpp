#include "capsim/render/report.hpp"

#include <QBuffer>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QTextDocument>
#include <QUrl>
#include <map>

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

std::string table_html(const scenarios::Table& t) {
  std::string out = "<table><thead><tr>";
  for (std::size_t c = 0; c < t.columns.size(); ++c) out += "<th>" + xml_escape(t.columns[c]) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool right = c < t.right_align.size() && t.right_align[c];
      out += std::string(right ? "<td class=\"num\">" : "<td>") + xml_escape(row[c].text) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>\n";
}

// `image_src(i)` gives the src of the i-th chart: a data URI for HTML, a resource name for PDF.
template <class ImageSource>
std::string document_html(const ReportDocument& doc, ImageSource image_src) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + xml_escape(doc.title) +
      "</title>\n<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
      "h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:1.6em}"
      "table{border-collapse:collapse;margin:0.6em 0;font-size:0.9em}"
      "th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}"
      "td.num{text-align:right}th{background:#f0f0f0}pre{background:#f7f7f7;padding:0.8em;font-size:0.85em}"
      "img{max-width:100%}.footer{color:#777;font-size:0.8em;margin-top:2em}</style></head><body>\n";
  out += "<h1>" + xml_escape(doc.title) + "</h1>\n<p>" + xml_escape(doc.subtitle) + "</p>\n";
  int chart = 0;
  for (const auto& s : doc.sections) {
    out += "<h2 id=\"" + s.id + "\">" + xml_escape(s.title) + "</h2>\n";
    for (const auto& p : s.paragraphs) out += "<p>" + xml_escape(p) + "</p>\n";
    for (std::size_t i = 0; i < s.charts.size(); ++i)
      out += "<p><img alt=\"" + xml_escape(s.title) + " chart\" src=\"" + image_src(chart++) + "\"></p>\n";
    for (const auto& t : s.tables) out += table_html(t);
    if (!s.preformatted.empty()) out += "<pre>" + xml_escape(s.preformatted) + "</pre>\n";
  }
  return out + "<p class=\"footer\">" + xml_escape(doc.footer) + "</p>\n</body></html>\n";
}

template <class Source>
std::vector<QImage> charts_of(const ReportDocument& doc, const Source& run, int w, int h) {
  std::vector<QImage> images;
  for (const auto& s : doc.sections)
    for (auto kind : s.charts) images.push_back(chart_for(kind, run, w, h));
  return images;
}

Status write_pdf(const ReportDocument& doc, const std::vector<QImage>& images, const std::filesystem::path& file) {
  QTextDocument text;
  for (std::size_t i = 0; i < images.size(); ++i)
    text.addResource(QTextDocument::ImageResource, QUrl("chart:" + QString::number(i)), images[i]);
  text.setHtml(QString::fromStdString(document_html(doc, [](int i) { return "chart:" + std::to_string(i); })));
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
  return write_file_atomically(file, document_html(doc, [&](int i) { return uris[static_cast<std::size_t>(i)]; }));
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
