// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package slothcompat checks that `llmslo rules` says what Sloth says: it
// runs Sloth's own generator (github.com/slok/sloth) on the spec of
// `llmslo rules --format sloth` and compares the rule files. It is a module
// of its own so that Sloth's dependencies (Kubernetes client, Prometheus)
// stay out of the components' go.mod.
package slothcompat
