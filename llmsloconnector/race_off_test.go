// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

package llmsloconnector

const raceEnabled = false
