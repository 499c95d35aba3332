// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

// Package collectorconfig reads the processors of one type out of a
// collector configuration file, the same YAML the collector runs, so that
// the llmslo command works from one configuration with the collector. The
// caller hands it the processor's factory, so it reads the llm_slo
// processor's configuration without importing the processor.
package collectorconfig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/processor"
)

// Config is a processor configuration that validates itself, as the
// collector's do.
type Config interface {
	Validate() error
}

// Processor is one processor of the file, with its configuration decoded
// over the factory's defaults and validated, as the collector would.
type Processor[C Config] struct {
	// ID is the component ID as written: "llm_slo" or "llm_slo/<name>".
	ID     component.ID
	Config C
}

// Load resolves path as the collector does (file, ${env:VAR} references)
// and returns every processor of factory's type under `processors:`,
// sorted by ID. factory's default configuration must be a C. A file with
// none is an error: the commands have nothing to work from.
func Load[C Config](ctx context.Context, path string, factory processor.Factory) ([]Processor[C], error) {
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
	return fromConf[C](conf, path, factory)
}

func fromConf[C Config](conf *confmap.Conf, path string, factory processor.Factory) ([]Processor[C], error) {
	procs, err := conf.Sub("processors")
	if err != nil {
		return nil, fmt.Errorf("%s: processors: %w", path, err)
	}
	var out []Processor[C]
	var errs []error
	// In key order, so that several errors read the same on every run.
	for _, key := range slices.Sorted(maps.Keys(procs.ToStringMap())) {
		var id component.ID
		if err := id.UnmarshalText([]byte(key)); err != nil {
			errs = append(errs, fmt.Errorf("%s: processors::%s: %w", path, key, err))
			continue
		}
		if id.Type() != factory.Type() {
			continue
		}
		p, err := decode[C](procs, key, id, factory)
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
		return nil, fmt.Errorf("%s: no %s processor in the processors section", path, factory.Type())
	}
	slices.SortFunc(out, func(a, b Processor[C]) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	return out, nil
}

func decode[C Config](procs *confmap.Conf, key string, id component.ID, factory processor.Factory) (Processor[C], error) {
	cfg, ok := factory.CreateDefaultConfig().(C)
	if !ok {
		return Processor[C]{}, fmt.Errorf("the %s factory's configuration is a %T, not a %T", factory.Type(), factory.CreateDefaultConfig(), cfg)
	}
	sub, err := procs.Sub(key)
	if err != nil {
		return Processor[C]{}, err
	}
	if err := sub.Unmarshal(cfg); err != nil {
		return Processor[C]{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Processor[C]{}, err
	}
	return Processor[C]{ID: id, Config: cfg}, nil
}
