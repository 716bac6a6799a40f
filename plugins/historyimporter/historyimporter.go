// Package historyimporter owns the history-importer plugin type: what
// `harvestctl history import` and the placer read tenant history through
// (CPU utilisation series and reimage events over a time range, streamed),
// its go-plugin gRPC client and server, and its wire form
// (proto/historyimporter.proto).
//
// A plugin binary serves an implementation with
//
//	plugin.Serve(&plugin.ServeConfig{
//		HandshakeConfig: base.Handshake,
//		Plugins:         historyimporter.PluginSet(impl),
//		GRPCServer:      plugin.DefaultGRPCServer,
//	})
package historyimporter

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/harvest-platform/harvest/plugins/base"
)

// Importer is a history importer.
type Importer interface {
	base.Base
	// Import calls emit for every record of [r.Start, r.End) for the tenants
	// named ("environment/function"; every tenant the importer knows when
	// tenants is empty), in the importer's order, and returns nil only when
	// the whole range was sent. An error from emit stops the import and is
	// returned. Across go-plugin, a plugin that dies or hangs mid-stream makes
	// Import return an error after the records that did arrive: never a
	// silently short history.
	Import(ctx context.Context, r Range, tenants []string, emit func(Record) error) error
}

// Range is a half-open time range [Start, End).
type Range struct {
	Start, End time.Time
}

// Record is one streamed record: exactly one of Series and Reimage is set.
type Record struct {
	Series  *SeriesChunk
	Reimage *Reimage
}

// SeriesChunk is part of one tenant's CPU utilisation on one node: Values[i]
// is the percent (0-100) at Start + i*StepSeconds; NaN is a gap. History is
// kept in 2-minute slots, so importers should step by 120 s.
type SeriesChunk struct {
	Tenant      string
	Node        string
	Start       time.Time
	StepSeconds int64
	Values      []float64
}

// Reimage is one disk reimage of one node of a tenant.
type Reimage struct {
	Tenant string
	Node   string
	Time   time.Time
}

// ErrTruncated is returned by the gRPC client when a stream ended without its
// End record: the plugin stopped sending before it had finished.
var ErrTruncated = errors.New("history importer: the stream ended before the importer said it was complete")

// Validate checks the record has exactly one part and its fields make sense.
func (r Record) Validate() error {
	switch {
	case (r.Series == nil) == (r.Reimage == nil):
		return errors.New("record: want exactly one of series and reimage")
	case r.Series != nil && (r.Series.Tenant == "" || r.Series.StepSeconds <= 0 || r.Series.Start.IsZero()):
		return errors.New("series chunk: want a tenant, a start and a positive step")
	case r.Reimage != nil && (r.Reimage.Tenant == "" || r.Reimage.Node == "" || r.Reimage.Time.IsZero()):
		return errors.New("reimage: want a tenant, a node and a time")
	}
	return nil
}

// PluginSet is the plugin map a binary serving impl passes to plugin.Serve.
func PluginSet(impl Importer) plugin.PluginSet {
	return plugin.PluginSet{base.PluginTypeHistoryImporter: &Plugin{Impl: impl}}
}
