#ifndef KSCORE_SCORER_FRAMEWORK_GO_MATH_H_
#define KSCORE_SCORER_FRAMEWORK_GO_MATH_H_

// Go's float64 math where the C++ library rounds differently. Scores that
// kube-scheduler computes in float64 must come out bit for bit the same, or a
// rounding or truncation step downstream can move a score by one.

namespace kscore::framework {

// Go's math.Log (the amd64 kernel and the portable one agree): FreeBSD's
// e_log.c reduction and polynomial, evaluated in plain double operations.
// glibc's log is correctly rounded and differs in the last bit for some
// inputs, log(3) among them. Defined for finite x > 0; NaN for x < 0, -Inf
// for 0, x itself for +Inf and NaN, as Go.
double GoLog(double x);

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_FRAMEWORK_GO_MATH_H_
