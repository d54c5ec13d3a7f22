// Rng: the random number generator of one simulation (xoshiro256**, seeded by splitmix64).
//
// Every variate is computed here from the raw 64-bit stream, not with <random>'s
// distributions (whose algorithms differ between standard libraries), so a seed gives the
// same numbers on every platform and compiler. The ziggurat's tables are constants computed
// once in 60-digit arithmetic (tools/ziggurat/exponential_tables.py), not at start-up with the
// platform's exp and log.
//
// Ownership and thread-safety: a plain value; one Rng per Simulator, never shared between
// threads. Reference for the generator: Blackman & Vigna, "Scrambled linear pseudorandom
// number generators", ACM TOMS 47(4), 2021.
#pragma once

#include <cmath>
#include <cstdint>

namespace capsim::des {

namespace detail {
// The 256 regions of the exponential ziggurat (exponential_ziggurat_tables.cpp; the script that
// writes it documents each table).
struct ExponentialZiggurat {
  double r;                // where the tail starts
  std::uint64_t k[256];    // u < k[i]: the point lies wholly under the curve, accept at once
  double w[256];           // region i's width / 2^53
  double f[256];           // exp(-x_i), the density at region i's right edge
};
extern const ExponentialZiggurat kExponentialZiggurat;
}  // namespace detail

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& word : state_) word = splitmix64(seed);
  }

  [[gnu::always_inline]] std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform on [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Exponential with mean 1 by inversion on (0, 1], so never infinite: one draw and a log.
  // The LLM serving simulation's arrivals use it (their stream is pinned by its tests);
  // the DES kernel uses exponential_ziggurat().
  double exponential() { return -std::log(static_cast<double>((next() >> 11) + 1) * 0x1.0p-53); }

  // Exponential with mean 1 by the ziggurat method (Marsaglia & Tsang, "The Ziggurat Method
  // for Generating Random Variables", J. Stat. Software 5(8), 2000), with 256 regions of equal
  // area under exp(-x). One 64-bit draw gives the region (its low 8 bits) and a uniform
  // position in it (its high 53 bits, independent of the region); 98.9 % of draws land wholly
  // under the curve and cost a compare and a multiply. The rest take the wedge test (one exp)
  // or, in the base region past r = 7.697, the tail r + Exp(1) (one log): the result is exact
  // in distribution, not an approximation. About 2.5 times faster than exponential() in a loop.
  // Always inlined: it is on the simulator's hot path, where GCC at -O2 leaves it a call.
  [[gnu::always_inline]] double exponential_ziggurat() {
    const detail::ExponentialZiggurat& z = detail::kExponentialZiggurat;
    const std::uint64_t bits = next();
    const unsigned region = static_cast<unsigned>(bits & 0xff);
    const std::uint64_t u = bits >> 11;
    const double x = static_cast<double>(u) * z.w[region];
    if (u < z.k[region]) return x;
    return exponential_ziggurat_edge(region, x);
  }

  // Standard normal (Marsaglia's polar method; the second value of a pair is kept).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0.0, v = 0.0, s = 0.0;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

 private:
  // The 1.1 % of ziggurat draws that are not accepted at once (random.cpp).
  double exponential_ziggurat_edge(unsigned region, double x);

  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::uint64_t state_[4] = {};
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace capsim::des
