// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package render

import (
	"encoding/json"
	"io"

	"github.com/llmslo/llmslo/tools/internal/report/schema"
)

// WriteJSON writes the report as indented JSON (the schema package's layout).
func WriteJSON(w io.Writer, r *schema.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
