// The Serving view's charts, drawn from the plan of the current what-if (recomputed on every
// change, so never stale): the simulated latency percentiles against the SLO (LLM: TTFT and
// TPOT as a share of their SLO; violations in red), throughput against the offered request
// rate with the SLO knee and this plan's rate marked, and the deployment's load, KV cache use
// and running sequences.
#pragma once

#include <QtCharts/QChart>

#include "whatif.hpp"

namespace capsim::gui {

// LLM serving: p50 / p95 / p99 of TTFT and TPOT as % of their SLO, one bar set per metric,
// bars over 100 % selected in red; a dashed "SLO" line at 100 %. nullptr when the plan has
// no simulated LLM latencies.
QChart* llm_latency_chart(const Analysis& a);

// Throughput against the offered rate (the curve), the points that meet the SLO and those
// that miss it (red), the knee (dashed), and this plan's rate (large marker, red when the
// plan fails an expectation). nullptr without a curve.
QChart* throughput_curve_chart(const Analysis& a);

// LLM serving: load (rate over capacity), KV cache used, running sequences over the most the
// KV cache admits; red where the plan breaks its SLO. nullptr when not LLM serving.
QChart* llm_load_chart(const Analysis& a);

// LLM serving, simulated: the running sequences (left axis) and the KV cache in use (right
// axis, %) over the run, one engine, from the plan's simulation. nullptr without one.
QChart* llm_timeline_chart(const Analysis& a);

}  // namespace capsim::gui
