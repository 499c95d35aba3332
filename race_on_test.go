// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package llmsloprocessor

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts are only meaningful without it.
const raceEnabled = true
