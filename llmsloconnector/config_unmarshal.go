// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"go.opentelemetry.io/collector/confmap"

	"github.com/llmslo/llmslo/internal/confcheck"
)

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal decodes the configuration after refusing a duration written
// without a unit (`metrics_flush_interval: 5` would be 5ns, `window: 0.5`
// would be 0s), with the processor's message: the field, what was written
// and the likely fix.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	return confcheck.Unmarshal(conf, c)
}
