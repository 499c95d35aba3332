//go:build !race

package llmsloconnector

const raceEnabled = false
