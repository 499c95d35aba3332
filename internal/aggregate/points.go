// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package aggregate

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Point gives access to the parts of a histogram data point that do not
// depend on its shape.
type Point interface {
	Attributes() pcommon.Map
	SetStartTimestamp(pcommon.Timestamp)
	SetTimestamp(pcommon.Timestamp)
	Exemplars() pmetric.ExemplarSlice
}

type expoPoint struct {
	pmetric.ExponentialHistogramDataPoint
}
type explicitPoint struct{ pmetric.HistogramDataPoint }
