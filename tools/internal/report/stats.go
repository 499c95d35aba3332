// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"math"
	"slices"
	"sort"

	"github.com/llmslo/llmslo/internal/aggregate"
)

// The statistics below reproduce numpy bit for bit (numpy 1.24, checked
// against it by TestNumpyFixture): what vLLM, SGLang, GenAI-Perf/AIPerf and
// LLMPerf (pandas defers to numpy) report is what this package reports.

// npBlock is numpy's reduction buffer: np.add.reduce sums a contiguous array
// in blocks of 8192 elements, each block pairwise, the blocks in sequence.
const npBlock = 8192

// npSum is np.sum (np.add.reduce) of a float64 array.
func npSum(x []float64) float64 {
	var res float64
	for i := 0; i < len(x); i += npBlock {
		res += pairwiseSum(x[i:min(i+npBlock, len(x))])
	}
	return res
}

// pairwiseSum is numpy's DOUBLE_pairwise_sum (numpy/_core/src/umath/
// loops_utils.h.src): sequential below 8 elements, eight accumulators up to
// 128, and above that a split at n/2 rounded down to a multiple of 8.
func pairwiseSum(x []float64) float64 {
	n := len(x)
	switch {
	case n < 8:
		var res float64
		for _, v := range x {
			res += v
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], x[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += x[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += x[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(x[:n2]) + pairwiseSum(x[n2:])
	}
}

// npMean is np.mean: np.add.reduce(x) / n; NaN for an empty array.
func npMean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return npSum(x) / float64(len(x))
}

// npPercentile is np.percentile(x, p) with the default "linear" method, x
// sorted ascending; NaN for an empty array.
func npPercentile(sorted []float64, p float64) float64 {
	return aggregate.Percentile(sorted, p)
}

// npMedian is np.median, which is not np.percentile(x, 50) bit for bit: for
// an even count it is np.mean of the two middle values, (a+b)/2.
func npMedian(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return sorted[n/2]
	default:
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
}

// weightedPercentile is np.percentile over the multiset in which value
// vals[i] appears w[i] times (vals sorted ascending, every weight >= 1),
// without expanding it: numpy's linear method needs only the order
// statistics at ranks floor(v) and floor(v)+1. cum[i] is w[0]+...+w[i].
func weightedPercentile(vals []float64, cum []uint64, p float64) float64 {
	if len(vals) == 0 {
		return math.NaN()
	}
	n := cum[len(cum)-1]
	v := float64(n-1) * (p / 100)
	if v >= float64(n-1) {
		return vals[len(vals)-1]
	}
	i := math.Floor(v)
	rank := func(k uint64) float64 { // the k-th smallest, from 0
		return vals[sort.Search(len(cum), func(j int) bool { return cum[j] > k })]
	}
	return aggregate.Lerp(rank(uint64(i)), rank(uint64(i)+1), v-i)
}

// nearestRank is GuideLLM's percentile (guidellm/schemas/statistics.py,
// DistributionSummary.from_values then Percentiles.from_pdf): values sorted,
// duplicates merged by summing their weights, zero weights dropped (all
// zero: uniform), probabilities w/total, cdf = cumsum, and the percentile
// of probability q is the value at np.searchsorted(cdf, q, side="left").
// The weighted mean is np.sum(values*probabilities).
type nearestRank struct {
	vals, cdf []float64
	mean      float64
}

func newNearestRank(vals, weights []float64) nearestRank {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	// np.argsort's default is quicksort (not stable), but duplicates are
	// merged next, so the order among equal values cannot matter.
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(vals[a], vals[b]) })
	var uv, uw []float64
	for _, i := range idx {
		if len(uv) > 0 && uv[len(uv)-1] == vals[i] {
			uw[len(uw)-1] += weights[i]
			continue
		}
		uv, uw = append(uv, vals[i]), append(uw, weights[i])
	}
	var fv, fw []float64
	for i := range uv {
		if uw[i] > 0 {
			fv, fw = append(fv, uv[i]), append(fw, uw[i])
		}
	}
	if len(fv) == 0 {
		return nearestRank{mean: math.NaN()}
	}
	total := npSum(fw)
	if total <= 1e-6 {
		for i := range fw {
			fw[i] = 1
		}
		total = npSum(fw)
	}
	nr := nearestRank{vals: fv, cdf: make([]float64, len(fv))}
	prod := make([]float64, len(fv))
	var c float64
	for i := range fw {
		prob := fw[i] / total
		c += prob
		nr.cdf[i] = c
		prod[i] = fv[i] * prob
	}
	nr.mean = npSum(prod)
	return nr
}

// percentile returns the value for probability q (0.5 for the median).
func (nr nearestRank) percentile(q float64) float64 {
	if len(nr.vals) == 0 {
		return math.NaN()
	}
	i := sort.SearchFloat64s(nr.cdf, q) // first index with cdf >= q: side="left"
	if i >= len(nr.vals) {
		// numpy would index past the end (an IndexError in GuideLLM) when
		// rounding leaves cdf[-1] just below q; the last value is meant.
		i = len(nr.vals) - 1
	}
	return nr.vals[i]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// wilson is the Wilson score interval at 95% for k successes in n trials.
func wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	const z = 1.959963984540054 // the 0.975 quantile of the standard normal
	p := float64(k) / float64(n)
	nf := float64(n)
	den := 1 + z*z/nf
	center := (p + z*z/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return max(0, center-half), min(1, center+half)
}
