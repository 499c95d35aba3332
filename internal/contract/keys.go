// Package contract holds the names of the span attributes that the llm_slo
// processor writes and the llm_slo connector reads. They are the public,
// documented contract of the project: change them here and nowhere else.
package contract

import "strings"

// DefaultPrefix is the namespace of every attribute the processor writes.
// OpenInference and OpenLLMetry also write some "llm.*" keys
// (llm.token_count.*, llm.model_name, llm.is_streaming, ...); none of the
// keys below equals one of theirs.
const DefaultPrefix = "llm."

// Keys are the attribute keys under one prefix. Build them once with NewKeys
// and share them: the hot path must not concatenate strings.
type Keys struct {
	Prefix       string
	TTFT         string // seconds, double
	TPOT         string // seconds, double
	E2E          string // seconds, double
	ITLMean      string // seconds, double
	ITLMax       string // seconds, double
	ITLGaps      string // seconds, double slice: only from step spans
	QueueTime    string // seconds, double
	OutputTokens string // int
	InputTokens  string // int
	Model        string // string: the resolved model name
	Layer        string // "client" or "server"
	Stream       string // bool
	Source       string // string: "<preset>:<origin>[,<qualifier>...]"
	// The engine's view written on the client span of the same request
	// (trace assembly only).
	ServerTTFT      string // seconds, double
	ServerQueueTime string // seconds, double
	Error           string // string: "<field>:<reason>[,<field>:<reason>...]"
	sloPrefix       string
}

// NewKeys returns the keys under prefix, which should end with a dot.
func NewKeys(prefix string) Keys {
	return Keys{
		Prefix:          prefix,
		TTFT:            prefix + "ttft",
		TPOT:            prefix + "tpot",
		E2E:             prefix + "e2e",
		ITLMean:         prefix + "itl.mean",
		ITLMax:          prefix + "itl.max",
		ITLGaps:         prefix + "itl.gaps",
		QueueTime:       prefix + "queue_time",
		OutputTokens:    prefix + "output_tokens",
		InputTokens:     prefix + "input_tokens",
		Model:           prefix + "model",
		Layer:           prefix + "layer",
		Stream:          prefix + "stream",
		Source:          prefix + "metrics.source",
		ServerTTFT:      prefix + "server.ttft",
		ServerQueueTime: prefix + "server.queue_time",
		Error:           prefix + "metrics.error",
		sloPrefix:       prefix + "slo.",
	}
}

// SLOMet is the bool attribute telling whether the request met SLO name.
// It is absent when the verdict is unknown.
func (k Keys) SLOMet(name string) string { return k.sloPrefix + name + ".met" }

// SLOViolations is the string-slice attribute listing the constraints of SLO
// name that failed ("ttft", "e2e", "error") or could not be decided
// ("ttft:unknown").
func (k Keys) SLOViolations(name string) string { return k.sloPrefix + name + ".violations" }

// ParseSLOKey reports whether key is an SLO verdict key under k, and if so the
// SLO name and whether it is the ".met" (true) or ".violations" (false) key.
func (k Keys) ParseSLOKey(key string) (name string, met bool, ok bool) {
	rest, found := strings.CutPrefix(key, k.sloPrefix)
	if !found {
		return "", false, false
	}
	if n, found := strings.CutSuffix(rest, ".met"); found && n != "" {
		return n, true, true
	}
	if n, found := strings.CutSuffix(rest, ".violations"); found && n != "" {
		return n, false, true
	}
	return "", false, false
}

// Layer values.
const (
	LayerClient = "client"
	LayerServer = "server"
)

// Violation values that are not a constraint name.
const (
	ViolationError = "error"
	UnknownSuffix  = ":unknown"
)
