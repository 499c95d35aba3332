//go:build race

package derive

// raceEnabled: the race detector makes sync.Pool drop items at random.
const raceEnabled = true
