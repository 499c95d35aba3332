// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package confcheck

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

var unmarshalerType = reflect.TypeFor[confmap.Unmarshaler]()

// Shape walks raw along the mapstructure fields of cfg, a pointer to a
// struct, and returns one error per key that no field has and per whole
// number written with a fraction. The decoder would refuse the first with
// the Go type's name and its own words ("” has invalid keys: dimensions")
// and truncate the second without a word (`input_token_classes: [1.5]`
// would be [1]). Each error starts with the key's path as the
// configuration spells it (slos[0].tffT) and, for an unknown key, names the
// nearest key of that place ("did you mean ttft?") or lists them all.
func Shape(raw map[string]any, cfg any) error {
	t := reflect.TypeOf(cfg)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var errs []error
	shape(t, raw, "", true, &errs)
	return errors.Join(errs...)
}

// shape checks raw against t at path; top says t is the configuration
// itself, whose own Unmarshal is the caller.
func shape(t reflect.Type, raw any, path string, top bool, errs *[]error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if raw == nil || t == durationType {
		return
	}
	// A type that decodes itself may accept other shapes.
	if !top && reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return // a TextUnmarshaler's string, or a type the decoder refuses
		}
		structKeys(t, m, path, errs)
	case reflect.Slice, reflect.Array:
		if list, ok := raw.([]any); ok {
			for i, v := range list {
				shape(t.Elem(), v, fmt.Sprintf("%s[%d]", path, i), false, errs)
			}
		}
	case reflect.Map:
		if m, ok := raw.(map[string]any); ok && t.Key().Kind() == reflect.String {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				shape(t.Elem(), m[k], join(path, k), false, errs)
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if f, ok := raw.(float64); ok && f != math.Trunc(f) {
			*errs = append(*errs, fmt.Errorf("%s: %v is not a whole number", path, f))
		}
	}
}

// structKeys checks the keys of m against t's fields, then each value.
func structKeys(t reflect.Type, m map[string]any, path string, errs *[]error) {
	fields := map[string]reflect.Type{}
	remain := collectFields(t, fields)
	known := slices.Sorted(maps.Keys(fields))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		ft, ok := fields[k]
		switch {
		case ok:
			shape(ft, m[k], join(path, k), false, errs)
		case !remain:
			*errs = append(*errs, unknownKey(join(path, k), k, known))
		}
	}
}

// collectFields adds t's mapstructure keys (squashed structs' too) to
// fields, and reports whether a ",remain" field takes any other key.
func collectFields(t reflect.Type, fields map[string]reflect.Type) (remain bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		if strings.Contains(f.Tag.Get("mapstructure"), ",remain") {
			remain = true
			continue
		}
		name, squash := tagName(f)
		switch {
		case squash:
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && collectFields(ft, fields) {
				remain = true
			}
		case name != "":
			fields[name] = f.Type
		}
	}
	return remain
}

// unknownKey says that key (at path) is none of known, naming the nearest.
func unknownKey(path, key string, known []string) error {
	if near, ok := Closest(key, known); ok {
		return fmt.Errorf("%s: unknown key: did you mean %s?", path, near)
	}
	return fmt.Errorf("%s: unknown key: the keys here are %s", path, strings.Join(known, ", "))
}

// Closest returns the candidate nearest to word, when it is near enough to
// be a slip: at most one edit (a letter added, dropped, changed, or two
// swapped) for words of up to four letters, two for longer ones, case
// ignored (tffT: ttft; slo: slos). Ties go to the first in candidates.
func Closest(word string, candidates []string) (string, bool) {
	w := strings.ToLower(word)
	limit := 1
	if len([]rune(w)) > 4 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := editDistance(w, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best, bestD <= limit
}

// editDistance is the optimal string alignment distance of a and b (the
// Levenshtein distance with adjacent transpositions), over runes. The
// configuration's keys are short, so the quadratic table is small.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
