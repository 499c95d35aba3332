// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package collectorconfig reads the llm_slo processors out of a collector
// configuration file, the same YAML the collector runs, so that the llmslo
// command works from one configuration with the collector.
package collectorconfig

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"

	llmsloprocessor "github.com/llmslo/llmslo"
	"github.com/llmslo/llmslo/internal/metadata"
)

// Processor is one llm_slo processor of the file, with its configuration
// decoded over the defaults and validated, as the collector would.
type Processor struct {
	// ID is the component ID as written: "llm_slo" or "llm_slo/<name>".
	ID     component.ID
	Config *llmsloprocessor.Config
}

// Load resolves path as the collector does (file, ${env:VAR} references)
// and returns every llm_slo processor under `processors:`, sorted by ID.
// A file with none is an error: the commands have nothing to work from.
func Load(ctx context.Context, path string) ([]Processor, error) {
	resolver, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + path},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		DefaultScheme:     "env",
	})
	if err != nil {
		return nil, err
	}
	conf, err := resolver.Resolve(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return fromConf(conf, path)
}

func fromConf(conf *confmap.Conf, path string) ([]Processor, error) {
	procs, err := conf.Sub("processors")
	if err != nil {
		return nil, fmt.Errorf("%s: processors: %w", path, err)
	}
	var out []Processor
	var errs []error
	for key := range procs.ToStringMap() {
		var id component.ID
		if err := id.UnmarshalText([]byte(key)); err != nil {
			errs = append(errs, fmt.Errorf("%s: processors::%s: %w", path, key, err))
			continue
		}
		if id.Type() != metadata.Type {
			continue
		}
		p, err := decode(procs, key, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: processors::%s: %w", path, key, err))
			continue
		}
		out = append(out, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no %s processor in the processors section", path, metadata.Type)
	}
	slices.SortFunc(out, func(a, b Processor) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	return out, nil
}

func decode(procs *confmap.Conf, key string, id component.ID) (Processor, error) {
	cfg := llmsloprocessor.NewFactory().CreateDefaultConfig().(*llmsloprocessor.Config)
	sub, err := procs.Sub(key)
	if err != nil {
		return Processor{}, err
	}
	if err := sub.Unmarshal(cfg); err != nil {
		return Processor{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Processor{}, err
	}
	return Processor{ID: id, Config: cfg}, nil
}
