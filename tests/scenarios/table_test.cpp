#include <doctest/doctest.h>

#include "capsim/scenarios/table.hpp"

#include <limits>

using namespace capsim::scenarios;

// Issue 21: CSV carries numbers only, units in the headers, so a spreadsheet can sum a column.
TEST_CASE("CSV: a column of one dimension is numbers in the first cell's unit, named in the header") {
  Table t;
  t.columns = {"node type", "time", "cost", "memory/GPU", "MFU", "tokens/s", "GPUs"};
  t.rows = {{"1 x p5.48xlarge (aws)", "0.2 h", "41.05 M USD", "54.31 GB", "46 %", "118.6 k", "8"},
            {"2 x p4d.24xlarge (aws)", "14.06 min", "5.53 USD", "512 MB", "7.5 %", "99", "16"}};
  CHECK(render_csv(t) ==
        "node type,time (h),cost (USD),memory/GPU (GB),MFU (%),tokens/s,GPUs\r\n"
        "1 x p5.48xlarge (aws),0.2,41050000,54.31,46,118600,8\r\n"
        "2 x p4d.24xlarge (aws),0.234333,5.53,0.512,7.5,99,16\r\n");
}

TEST_CASE("CSV: figure/value tables in several units get a unit column, and text stays text") {
  Table t;
  t.columns = {"figure", "value"};
  t.rows = {{"time to train", "14.06 min"}, {"cost per run", "5.53 USD"}, {"GPUs", "8 GPUs on 1 node"}, {"GPU-hours", "1.874"}};
  CHECK(render_csv(t) ==
        "figure,value,unit\r\n"
        "time to train,14.06,min\r\n"
        "cost per run,5.53,USD\r\n"
        "GPUs,8 GPUs on 1 node,\r\n"
        "GPU-hours,1.874,\r\n");
}

TEST_CASE("CSV: a header that already names the unit is kept, and dates and layouts are not numbers") {
  Table t;
  t.columns = {"cost per run (USD)", "as of", "layout"};
  t.rows = {{"5.53 USD", "2023-09", "t=1 p=1 d=8"}, {"0 USD", "2026-11", "t=8 p=2 d=4"}};
  CHECK(render_csv(t) ==
        "cost per run (USD),as of,layout\r\n"
        "5.53,2023-09,t=1 p=1 d=8\r\n"
        "0,2026-11,t=8 p=2 d=4\r\n");
}

// Issue 53: a cell that carries its number is written whole, the digits the JSON has, in the
// unit the producer gave (named in the header); the display text stays for people.
TEST_CASE("CSV: typed cells are written at full precision in their own unit, text formats show the display text") {
  Table t;
  t.columns = {"option", "total", "time", "GPUs"};
  t.rows = {{"aws", Cell("32.57 M", 32571871.4, "USD"), Cell("9.4 d", 812345.678901, "s"), Cell("8", 8)},
            {"owned", Cell("-", 0.0, "USD"), Cell("14.06 min", 843.6, "s"), Cell("16", 16)}};
  CHECK(render_csv(t) ==
        "option,total (USD),time (s),GPUs\r\n"
        "aws,32571871.4,812345.678901,8\r\n"
        "owned,0,843.6,16\r\n");
  CHECK(render_text(t).find("32.57 M") != std::string::npos);
  CHECK(render_markdown(t).find("| aws | 32.57 M | 9.4 d | 8 |") != std::string::npos);
}

TEST_CASE("CSV: a typed value that is not finite is an empty cell, and no number has an exponent") {
  Table t;
  t.columns = {"figure", "cost"};
  t.rows = {{"unpriced", Cell("-", std::numeric_limits<double>::quiet_NaN(), "USD")},
            {"infinite", Cell("inf", std::numeric_limits<double>::infinity(), "USD")},
            {"a rate", Cell("3.4e-06", 3.4e-06, "USD")},
            {"large", Cell("1.5e+20", 1.5e20, "USD")},
            {"negative zero", Cell("-0", -0.0, "USD")}};
  CHECK(render_csv(t) ==
        "figure,cost (USD)\r\n"
        "unpriced,\r\n"
        "infinite,\r\n"
        "a rate,0.0000034\r\n"
        "large,150000000000000000000\r\n"
        "negative zero,0\r\n");
}

TEST_CASE("CSV: figure/value tables of typed cells keep each number whole beside its unit") {
  Table t;
  t.columns = {"figure", "value", "basis"};
  t.rows = {{"GPUs", Cell("8", 8), ""},
            {"time per run", Cell("14.06 min", 843.60123456789, "s"), "analytic"},
            {"cost per run", Cell("5.53 USD", 5.5312345678, "USD"), "on demand"},
            {"throughput", "not measured (no request completed)", ""}};
  CHECK(render_csv(t) ==
        "figure,value,unit,basis\r\n"
        "GPUs,8,,\r\n"
        "time per run,843.60123456789,s,analytic\r\n"
        "cost per run,5.5312345678,USD,on demand\r\n"
        "throughput,not measured (no request completed),,\r\n");
}

TEST_CASE("CSV: a header that names the typed unit gets no second one, and a column mixing units converts read-back text") {
  Table t;
  t.columns = {"on demand USD", "tokens/s", "time"};
  t.rows = {{Cell("41.05 k", 41051.25, "USD"), Cell("118.6 k", 118612.5, "tokens/s"), Cell("2 h", 7200.5, "s")},
            {Cell("12", 12.0, "USD"), Cell("99", 99.25, "tokens/s"), "1 min"}};
  CHECK(render_csv(t) ==
        "on demand USD,tokens/s,time (s)\r\n"
        "41051.25,118612.5,7200.5\r\n"
        "12,99.25,60\r\n");
}
