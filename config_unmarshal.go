// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloprocessor

import (
	"go.opentelemetry.io/collector/confmap"

	"github.com/llmslo/llmslo/internal/confcheck"
)

var _ confmap.Unmarshaler = (*Config)(nil)

// Unmarshal decodes the configuration after refusing what would decode
// silently into something else: a duration written without a unit
// (`ttft: 500` would be 500ns, `ttft: 0.5` would be 0s). The error names the
// field, repeats what was written and suggests the fix ("did you mean
// 500ms?"). Every time.Duration field of Config is checked, present and
// future, through its mapstructure tags.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	return confcheck.Unmarshal(conf, c)
}
