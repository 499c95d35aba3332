//go:build !race

package llmsloprocessor

const raceEnabled = false
