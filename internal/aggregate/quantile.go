// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// ExponentialQuantile estimates the q-quantile of an OTLP exponential
// histogram point the way Prometheus' histogram_quantile reads a native
// histogram (promql.HistogramQuantile, Prometheus 2.51 and later): find the
// bucket that holds rank q·count, then interpolate exponentially inside it,
// that is linearly on the log2 of its bounds; a rank in the zero bucket
// gives 0. The estimate lies in the bucket that holds the rank, so its
// relative error is at most one bucket width, 2^(2^-scale) - 1. Only the
// positive buckets are read (the connector records no negative value). It
// returns NaN for an empty point or a q outside [0, 1].
func ExponentialQuantile(dp pmetric.ExponentialHistogramDataPoint, q float64) float64 {
	return exponentialQuantile(dp, q, false)
}

// ExponentialQuantileLinear is ExponentialQuantile with the linear
// interpolation inside the bucket of Prometheus before 2.51 (the Debian
// 2.42 package, for one).
func ExponentialQuantileLinear(dp pmetric.ExponentialHistogramDataPoint, q float64) float64 {
	return exponentialQuantile(dp, q, true)
}

func exponentialQuantile(dp pmetric.ExponentialHistogramDataPoint, q float64, linear bool) float64 {
	if dp.Count() == 0 || !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	rank := q * float64(dp.Count())
	seen := float64(dp.ZeroCount())
	if rank <= seen {
		return 0
	}
	width := math.Exp2(-float64(dp.Scale())) // of one bucket, in log2 units
	offset := dp.Positive().Offset()
	counts := dp.Positive().BucketCounts()
	for j := 0; j < counts.Len(); j++ {
		c := float64(counts.At(j))
		if c == 0 {
			continue
		}
		if rank <= seen+c {
			fraction := (rank - seen) / c
			lowerLog := float64(offset+int32(j)) * width
			if linear {
				lower, upper := math.Exp2(lowerLog), math.Exp2(lowerLog+width)
				return lower + (upper-lower)*fraction
			}
			return math.Exp2(lowerLog + width*fraction)
		}
		seen += c
	}
	// Only when the buckets hold fewer values than Count says.
	return math.Exp2(float64(offset+int32(counts.Len())) * width)
}

// BucketWidth is the relative width of an exponential histogram bucket at
// scale, 2^(2^-scale) - 1: the bound on the relative error of a quantile
// read from it.
func BucketWidth(scale int32) float64 {
	return math.Exp2(math.Exp2(-float64(scale))) - 1
}
