// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

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

// The keys after the prefix. A reader that has matched the prefix can
// switch on the rest with these constants.
const (
	SuffixTTFT            = "ttft"
	SuffixTPOT            = "tpot"
	SuffixE2E             = "e2e"
	SuffixITLMean         = "itl.mean"
	SuffixITLMax          = "itl.max"
	SuffixITLGaps         = "itl.gaps"
	SuffixITLGapWeights   = "itl.gap_weights"
	SuffixQueueTime       = "queue_time"
	SuffixPrefillTime     = "prefill_time"
	SuffixKVTransferTime  = "kv_transfer_time"
	SuffixDecodeTime      = "decode_time"
	SuffixNetworkTime     = "network_time"
	SuffixOutputTokens    = "output_tokens"
	SuffixInputTokens     = "input_tokens"
	SuffixModel           = "model"
	SuffixLayer           = "layer"
	SuffixStream          = "stream"
	SuffixSource          = "metrics.source"
	SuffixServerTTFT      = "server.ttft"
	SuffixServerQueueTime = "server.queue_time"
	SuffixError           = "metrics.error"
	// A request the trace assembly let go before its steps were complete
	// (assembly:incomplete): the steps seen and expected (int).
	SuffixAssemblyStepsSeen     = "assembly.steps_seen"
	SuffixAssemblyStepsExpected = "assembly.steps_expected"
	SuffixSLO                   = "slo."
)

// The token details mirror the conventions' gen_ai.usage.* names under the
// prefix, as input_tokens and output_tokens do (gen_ai.usage.cache_read.
// input_tokens -> llm.cache_read.input_tokens); cache_write is the name
// after semantic-conventions-genai #440 (cache_creation before it).
const (
	SuffixCacheReadInputTokens  = "cache_read.input_tokens"
	SuffixCacheWriteInputTokens = "cache_write.input_tokens"
	SuffixReasoningOutputTokens = "reasoning.output_tokens"
)

// Keys are the attribute keys under one prefix. Build them once with NewKeys
// and share them: the hot path must not concatenate strings.
type Keys struct {
	Prefix  string
	TTFT    string // seconds, double
	TPOT    string // seconds, double
	E2E     string // seconds, double
	ITLMean string // seconds, double
	ITLMax  string // seconds, double
	// ITLGaps holds every inter-token gap the processor measured (chunk
	// events or step spans), seconds, in order, packed as AppendGaps
	// writes them (readers also accept a double slice). With
	// token_aware_itl a chunk of k tokens is one entry, its gap divided by
	// k, whose weight k is the same index of ITLGapWeights.
	ITLGaps string
	// ITLGapWeights is packed as AppendGapWeights writes it (or an int
	// slice) beside ITLGaps, present only when some
	// weight differs from 1 (token-aware ITL over multi-token chunks).
	ITLGapWeights string
	QueueTime     string // seconds, double
	// The parts of TTFT and E2E the engine reports (seconds, double), and
	// on a client span joined to its engine span (trace assembly) the path
	// outside the engine: client TTFT - engine TTFT.
	PrefillTime    string
	KVTransferTime string
	DecodeTime     string
	NetworkTime    string
	OutputTokens   string // int
	InputTokens    string // int
	Model          string // string: the resolved model name
	Layer          string // "client" or "server"
	Stream         string // bool
	Source         string // string: "<preset>:<origin>[,<qualifier>...]"
	// The engine's view written on the client span of the same request
	// (trace assembly only).
	ServerTTFT      string // seconds, double
	ServerQueueTime string // seconds, double
	Error           string // string: "<field>:<reason>[,<field>:<reason>...]"
	// Beside assembly:incomplete, the steps (TGI: tokens) seen and
	// expected, int; expected absent when nothing said how many.
	AssemblyStepsSeen     string
	AssemblyStepsExpected string
	sloPrefix             string

	// Token details, int, only as the producer gives them (never derived):
	// input tokens served from the provider's prompt cache and written to
	// it (both among InputTokens), reasoning tokens among OutputTokens.
	CacheReadInputTokens  string
	CacheWriteInputTokens string
	ReasoningOutputTokens string
}

// NewKeys returns the keys under prefix, which should end with a dot.
func NewKeys(prefix string) Keys {
	return Keys{
		Prefix:          prefix,
		TTFT:            prefix + SuffixTTFT,
		TPOT:            prefix + SuffixTPOT,
		E2E:             prefix + SuffixE2E,
		ITLMean:         prefix + SuffixITLMean,
		ITLMax:          prefix + SuffixITLMax,
		ITLGaps:         prefix + SuffixITLGaps,
		ITLGapWeights:   prefix + SuffixITLGapWeights,
		QueueTime:       prefix + SuffixQueueTime,
		PrefillTime:     prefix + SuffixPrefillTime,
		KVTransferTime:  prefix + SuffixKVTransferTime,
		DecodeTime:      prefix + SuffixDecodeTime,
		NetworkTime:     prefix + SuffixNetworkTime,
		OutputTokens:    prefix + SuffixOutputTokens,
		InputTokens:     prefix + SuffixInputTokens,
		Model:           prefix + SuffixModel,
		Layer:           prefix + SuffixLayer,
		Stream:          prefix + SuffixStream,
		Source:          prefix + SuffixSource,
		ServerTTFT:      prefix + SuffixServerTTFT,
		ServerQueueTime: prefix + SuffixServerQueueTime,
		Error:           prefix + SuffixError,

		AssemblyStepsSeen:     prefix + SuffixAssemblyStepsSeen,
		AssemblyStepsExpected: prefix + SuffixAssemblyStepsExpected,
		sloPrefix:             prefix + SuffixSLO,

		CacheReadInputTokens:  prefix + SuffixCacheReadInputTokens,
		CacheWriteInputTokens: prefix + SuffixCacheWriteInputTokens,
		ReasoningOutputTokens: prefix + SuffixReasoningOutputTokens,
	}
}

// Owns reports whether key belongs to the processor's namespace: one of the
// keys above, or any key under the SLO subtree (<prefix>slo.). Producers'
// own keys under the same prefix (OpenInference's llm.token_count.*,
// llm.model_name, ...) are not owned. By default the processor removes
// every owned key that it did not write itself from the spans it passes.
func (k *Keys) Owns(key string) bool {
	rest, ok := strings.CutPrefix(key, k.Prefix)
	if !ok {
		return false
	}
	return fixedSet[rest] || strings.HasPrefix(rest, SuffixSLO)
}

// fixed lists every key above after the prefix (not the SLO subtree).
var fixed = [...]string{SuffixTTFT, SuffixTPOT, SuffixE2E, SuffixITLMean, SuffixITLMax, SuffixITLGaps,
	SuffixITLGapWeights, SuffixQueueTime, SuffixPrefillTime, SuffixKVTransferTime, SuffixDecodeTime, SuffixNetworkTime,
	SuffixOutputTokens, SuffixInputTokens, SuffixModel, SuffixLayer,
	SuffixStream, SuffixSource, SuffixServerTTFT, SuffixServerQueueTime, SuffixError,
	SuffixAssemblyStepsSeen, SuffixAssemblyStepsExpected,
	SuffixCacheReadInputTokens, SuffixCacheWriteInputTokens, SuffixReasoningOutputTokens}

// FixedSuffixes lists the keys the processor owns outside the SLO subtree,
// after the prefix (the README's attribute table lists the same).
func FixedSuffixes() []string { return fixed[:] }

var fixedSet = func() map[string]bool {
	m := make(map[string]bool, len(fixed))
	for _, s := range fixed {
		m[s] = true
	}
	return m
}()

// SLOMet is the bool attribute telling whether the request met SLO name.
// It is absent when the verdict is unknown.
func (k *Keys) SLOMet(name string) string { return k.sloPrefix + name + ".met" }

// SLOViolations is the string-slice attribute listing the constraints of SLO
// name that failed ("ttft", "e2e", "error") or could not be decided
// ("ttft:unknown").
func (k *Keys) SLOViolations(name string) string { return k.sloPrefix + name + ".violations" }

// SLOCauses is the string-slice attribute giving, for each constraint of
// SLO name that failed, its cause as "<constraint>:<cause>" (CauseEntry).
// ParseSLOKey does not match it: a reader of verdicts that does not know
// causes skips it.
func (k *Keys) SLOCauses(name string) string { return k.sloPrefix + name + ".causes" }

// ParseSLOCausesKey reports whether key is an SLO's causes key under k
// (SLOCauses), and if so the SLO name.
func (k *Keys) ParseSLOCausesKey(key string) (name string, ok bool) {
	rest, found := strings.CutPrefix(key, k.sloPrefix)
	if !found {
		return "", false
	}
	if n, found := strings.CutSuffix(rest, ".causes"); found && n != "" {
		return n, true
	}
	return "", false
}

// ParseSLOKey reports whether key is an SLO verdict key under k, and if so the
// SLO name and whether it is the ".met" (true) or ".violations" (false) key.
func (k *Keys) ParseSLOKey(key string) (name string, met bool, ok bool) {
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
