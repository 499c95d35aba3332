// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package confcheck finds configuration values that would decode without an
// error into something the user did not mean.
//
// The collector decodes a time.Duration from a string ("500ms") or from a
// bare number, which it takes as nanoseconds: `ttft: 500` is 500ns, so every
// request violates, and `ttft: 0.5` is truncated to 0s, which a later
// validation then misreports. Durations checks the raw configuration before
// it is decoded and refuses both, naming the field, what was written and the
// likely fix.
package confcheck

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/llmslo/llmslo/internal/contract"
)

var durationType = reflect.TypeFor[time.Duration]()

// Durations walks raw (a configuration as confmap.Conf.ToStringMap returns
// it) along the mapstructure fields of cfg, a pointer to a struct, and
// returns one error per time.Duration field whose value is not a duration
// with a unit: a bare number (500, 0.5, "500") or a string that
// time.ParseDuration refuses. Each error starts with the field's path as the
// configuration spells it (slos[0].ttft, trace_assembly.wait). A bare 0 is
// accepted: it needs no unit. Unknown keys are left to the decoder.
func Durations(raw map[string]any, cfg any) error {
	t := reflect.TypeOf(cfg)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var errs []error
	walk(t, raw, "", &errs)
	return errors.Join(errs...)
}

func walk(t reflect.Type, raw any, path string, errs *[]error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if raw == nil {
		return
	}
	switch {
	case t == durationType:
		if err := checkDuration(raw, latencyField(path)); err != nil {
			*errs = append(*errs, fmt.Errorf("%s: %w", path, err))
		}
	case t.Kind() == reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name, squash := tagName(f)
			switch {
			case squash:
				walk(f.Type, m, path, errs)
			case name != "":
				if v, ok := m[name]; ok {
					walk(f.Type, v, join(path, name), errs)
				}
			}
		}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		list, ok := raw.([]any)
		if !ok {
			return
		}
		for i, v := range list {
			walk(t.Elem(), v, fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		m, ok := raw.(map[string]any)
		if !ok {
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(t.Elem(), m[k], join(path, k), errs)
		}
	}
}

// tagName returns the field's mapstructure key, or squash for an embedded
// struct whose fields sit at this level. A field without a tag is keyed by
// its lower-cased name, as mapstructure does.
func tagName(f reflect.StructField) (name string, squash bool) {
	tag, ok := f.Tag.Lookup("mapstructure")
	if !ok {
		return strings.ToLower(f.Name), false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" {
		return "", false
	}
	if strings.Contains(","+opts+",", ",squash,") {
		return "", true
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// latencyFields are the durations that bound one request's latency: a
// bare number there is most likely milliseconds (`ttft: 500`). Every other
// duration (a window, an interval, an expiration, a wait) is most likely
// seconds (`window: 60`).
// They are the SLO constraints (a per-request threshold's max too), so a
// constraint added to the contract gets the hint.
var latencyFields = func() map[string]bool {
	m := map[string]bool{"max": true}
	for _, c := range contract.Constraints {
		m[c] = true
	}
	return m
}()

// latencyField says whether the field at path bounds a latency.
func latencyField(path string) bool {
	name := path[strings.LastIndexByte(path, '.')+1:]
	return latencyFields[name]
}

// checkDuration reports why v is not a duration with a unit, or nil;
// latency says which unit a bare number most likely meant (bareNumber).
func checkDuration(v any, latency bool) error {
	switch n := v.(type) {
	case int:
		return bareNumber(float64(n), strconv.Itoa(n), latency)
	case int64:
		return bareNumber(float64(n), strconv.FormatInt(n, 10), latency)
	case uint64:
		return bareNumber(float64(n), strconv.FormatUint(n, 10), latency)
	case float64:
		return bareNumber(n, strconv.FormatFloat(n, 'g', -1, 64), latency)
	case string:
		s := strings.TrimSpace(n)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return bareNumber(f, s, latency)
		}
		if _, err := time.ParseDuration(n); err != nil {
			return fmt.Errorf("%q is not a duration: write a number and a unit without a space, such as 500ms, 1.5s or 2m (units: ns, us, ms, s, m, h)", n)
		}
		return nil
	case bool:
		return fmt.Errorf("%v is not a duration: write a number and a unit, such as 500ms", n)
	default:
		return nil // a map or list: left to the decoder, which names the type
	}
}

// bareNumber refuses a number without a unit, except 0, and suggests the
// unit the number most likely meant: for a latency bound, milliseconds for
// whole numbers from 10 up (`ttft: 500`) and seconds for fractions and small
// numbers (`ttft: 0.5`); for any other duration, seconds (`window: 60`,
// `series_expiration: 300`, `wait: 6`).
func bareNumber(f float64, written string, latency bool) error {
	if f == 0 {
		return nil
	}
	unit := "s"
	if latency && f == math.Trunc(f) && math.Abs(f) >= 10 {
		unit = "ms"
	}
	return fmt.Errorf("%s has no unit: did you mean %s%s? (a bare number would be read as nanoseconds; units: ns, us, ms, s, m, h)", written, written, unit)
}

// Unmarshal decodes conf into cfg after Shape has found no unknown key and
// no fractional whole number, and Durations no duration written without a
// unit: the body of a component Config's Unmarshal. cfg
// must not call Unmarshal on itself again through conf (confmap decodes a
// type's own Unmarshaler only below the top level).
func Unmarshal(conf *confmap.Conf, cfg any) error {
	if conf == nil {
		return nil
	}
	raw := conf.ToStringMap()
	if err := errors.Join(Shape(raw, cfg), Durations(raw, cfg)); err != nil {
		return err
	}
	return conf.Unmarshal(cfg)
}
