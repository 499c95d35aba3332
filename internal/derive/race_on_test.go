// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package derive

// raceEnabled: the race detector makes sync.Pool drop items at random.
const raceEnabled = true
