// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// configKey is one configuration key of Config, as the configuration spells
// it: path is dotted (pressure.quantile); a key inside a list's entries
// (pressure.slos[].ttft) has its list as row and its own key as leaf.
type configKey struct {
	path, row, leaf string
}

// configOptions walks t's mapstructure fields, recursively: a struct (or
// pointer to one) contributes its fields, a list of structs its entries'
// keys, any other field one option.
func configOptions(t reflect.Type, prefix, listRow string) []configKey {
	var out []configKey
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case listRow != "":
			out = append(out, configKey{path: path, row: listRow, leaf: name})
		case ft.Kind() == reflect.Struct && ft.PkgPath() == reflect.TypeFor[Config]().PkgPath():
			out = append(out, configOptions(ft, path, "")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, configKey{path: path, row: path})
			out = append(out, configOptions(ft.Elem(), path, path)...)
		default:
			out = append(out, configKey{path: path, row: path})
		}
	}
	return out
}

// TestReadmeDocumentsEveryOption: every key of Config has its row in the
// README's configuration table (| `pressure.min_requests` | ...), and every
// key of a list's entries is named in its list's row ({name, default}).
func TestReadmeDocumentsEveryOption(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	section := string(readme)
	begin := strings.Index(section, "\n## Configuration\n")
	require.GreaterOrEqual(t, begin, 0)
	section = section[begin:]
	section = section[:strings.Index(section[1:], "\n## ")+1]
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if m := regexp.MustCompile("^\\| `([a-z_.]+)` \\|").FindStringSubmatch(line); m != nil {
			rows[m[1]] = line
		}
	}
	opts := configOptions(reflect.TypeFor[Config](), "", "")
	require.Greater(t, len(opts), 20)
	for _, o := range opts {
		row, ok := rows[o.row]
		if !assert.True(t, ok, "README's configuration table has no row for %s", o.row) || o.leaf == "" {
			continue
		}
		assert.Regexp(t, `\b`+regexp.QuoteMeta(o.leaf)+`\b`, row, "the row of %s does not name its entries' key %s", o.row, o.leaf)
	}
}
