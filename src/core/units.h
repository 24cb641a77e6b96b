// Strong types for the physical quantities headroom handles: Watts, Joules, Megahertz, Celsius.
// Each wraps a double in its SI (or conventional) unit; vendor units (mW, mJ) never enter them.
// Value types, thread-compatible.
#ifndef HEADROOM_CORE_UNITS_H_
#define HEADROOM_CORE_UNITS_H_

#include <compare>
#include <ostream>

namespace headroom::core {

inline constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double value) : value_(value) {}
  constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity operator-() const { return Quantity(-value_); }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  constexpr double operator/(Quantity o) const { return value_ / o.value_; }  // a ratio
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double value_ = 0.0;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) {
  return q * k;
}

// Prints the bare value (gtest failure messages, logs).
template <class Tag>
std::ostream& operator<<(std::ostream& os, Quantity<Tag> q) {
  return os << q.value();
}

struct WattsTag {};
struct JoulesTag {};
struct MegahertzTag {};
struct CelsiusTag {};

using Watts = Quantity<WattsTag>;
using Joules = Quantity<JoulesTag>;
using Megahertz = Quantity<MegahertzTag>;
using Celsius = Quantity<CelsiusTag>;

constexpr Joules EnergyOver(Watts power, double seconds) { return Joules(power.value() * seconds); }
constexpr Watts AveragePower(Joules energy, double seconds) {
  return Watts(energy.value() / seconds);
}

}  // namespace headroom::core

#endif  // HEADROOM_CORE_UNITS_H_
