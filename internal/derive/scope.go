// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package derive

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llmslo/llmslo/internal/preset"
)

// Scope is what a span's instrumentation scope and resource say about its
// producer: the scope name (a preset may match on it) and the version of
// the semantic conventions the producer follows (the streaming rule depends
// on it). Build it once per ScopeSpans with ScopeOf.
type Scope struct {
	// Name is the instrumentation scope name.
	Name string
	// Semconv is the OpenTelemetry semantic-convention version named by the
	// scope's schema_url, else by the resource's; zero when neither is an
	// https://opentelemetry.io/schemas/<version> URL.
	Semconv SemconvVersion
	// level is preset.LevelOfScope(Name), looked up once for every span of
	// the ScopeSpans (ScopeOf); leveled says it was.
	level   string
	leveled bool
}

// newScope is the Scope of a scope name and convention version.
func newScope(name string, v SemconvVersion) Scope {
	return Scope{Name: name, Semconv: v, level: preset.LevelOfScope(name), leveled: true}
}

// Level is the instrumentation level the scope states (preset.LevelOfScope).
func (s *Scope) Level() string {
	if s.leveled {
		return s.level
	}
	return preset.LevelOfScope(s.Name)
}

// SemconvVersion is a semantic-convention release, e.g. 1.41.0.
type SemconvVersion struct{ Major, Minor, Patch uint32 }

// AtLeast reports whether v is o or later. The zero version (unknown) is
// never at least a real one.
func (v SemconvVersion) AtLeast(o SemconvVersion) bool {
	if v.Major != o.Major {
		return v.Major > o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor > o.Minor
	}
	return v.Patch >= o.Patch
}

// StreamFlagRequired is the first convention release in which a client
// span without gen_ai.request.stream is a non-streaming request
// (semantic-conventions 4168cb0f8, #3607, released in v1.41.0). Emitters
// following an older release never set the flag, even when streaming.
var StreamFlagRequired = SemconvVersion{1, 41, 0}

// ScopeOf returns the Scope of the spans of ss, which belongs to rs.
func ScopeOf(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans) Scope {
	v, ok := ParseSchemaURL(ss.SchemaUrl())
	if !ok {
		v, _ = ParseSchemaURL(rs.SchemaUrl())
	}
	return newScope(ss.Scope().Name(), v)
}

// ParseSchemaURL reads the version of an OpenTelemetry schema URL such as
// https://opentelemetry.io/schemas/1.41.0. It reports false for any other
// URL: another organisation's schema says nothing about these conventions.
func ParseSchemaURL(url string) (SemconvVersion, bool) {
	rest, ok := strings.CutPrefix(url, "https://opentelemetry.io/schemas/")
	if !ok {
		if rest, ok = strings.CutPrefix(url, "http://opentelemetry.io/schemas/"); !ok {
			return SemconvVersion{}, false
		}
	}
	parts := strings.Split(strings.TrimSuffix(rest, "/"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return SemconvVersion{}, false
	}
	var n [3]uint32
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return SemconvVersion{}, false
		}
		n[i] = uint32(x)
	}
	v := SemconvVersion{n[0], n[1], n[2]}
	return v, v != SemconvVersion{}
}
