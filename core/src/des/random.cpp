#include "capsim/core/des/random.hpp"

#include <cmath>

namespace capsim::des {

// The ziggurat draws that did not land wholly under the curve (Marsaglia & Tsang 2000, the
// function efix of their paper). Region 0 is the base: past r the point is in the tail,
// whose conditional distribution is r + Exp(1) (memorylessness), sampled by inversion.
// Regions 1..255: the point (x, y) with y uniform over the region's height is under
// exp(-x) with probability (exp(-x) - f[i]) / (f[i-1] - f[i]); otherwise the whole draw
// starts again (a fresh region and position).
double Rng::exponential_ziggurat_edge(unsigned region, double x) {
  const detail::ExponentialZiggurat& z = detail::kExponentialZiggurat;
  for (;;) {
    if (region == 0) return z.r - std::log1p(-uniform());  // uniform() < 1: finite
    if (z.f[region] + uniform() * (z.f[region - 1] - z.f[region]) < std::exp(-x)) return x;
    const std::uint64_t bits = next();
    region = static_cast<unsigned>(bits & 0xff);
    const std::uint64_t u = bits >> 11;
    x = static_cast<double>(u) * z.w[region];
    if (u < z.k[region]) return x;
  }
}

}  // namespace capsim::des
