// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNetworkTime(t *testing.T) {
	for _, tc := range []struct {
		name           string
		client, engine Value
		want           Value
		reason         Reason
	}{
		{"client above engine", known(0.5), known(0.375), known(0.125), NoReason},
		{"equal", known(0.3), known(0.3), known(0), NoReason},
		{"clock skew", known(0.29), known(0.3), Value{}, ClockSkew},
		{"no client TTFT", Value{}, known(0.3), Value{}, NoReason},
		{"client not streamed", notApplicable, known(0.3), Value{}, NoReason},
		{"no engine TTFT", known(0.3), Value{}, Value{}, NoReason},
		{"a week apart", known(MaxSeconds), known(0), known(MaxSeconds), NoReason},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, r := NetworkTime(tc.client, tc.engine)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.reason, r)
		})
	}
}

func TestJoinEngine(t *testing.T) {
	res := Result{TTFT: known(0.2)}
	res.JoinEngine(known(0.25))
	require.Equal(t, Value{}, res.NetworkTime)
	require.Equal(t, "network_time:clock_skew", res.Errors.String())

	res = Result{TTFT: known(0.5)}
	res.JoinEngine(known(0.125))
	require.Equal(t, known(0.375), res.NetworkTime)
	require.True(t, res.Errors.Empty())
	require.False(t, math.Signbit(res.NetworkTime.V))
}
