#include <doctest/doctest.h>

#include "capsim/scenarios/table.hpp"

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
