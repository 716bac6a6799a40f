package historyimporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/harvest-platform/harvest/plugins/base"
	pb "github.com/harvest-platform/harvest/plugins/historyimporter/proto"
)

// Client is the host side of a history-importer plugin.
type Client struct {
	base.Client
	rpc  pb.HistoryImporterClient
	idle time.Duration // longest wait for the next record
}

var _ Importer = (*Client)(nil)

// errIdle is the cause a stream is cancelled with when no record came in time.
var errIdle = errors.New("no record arrived within the call timeout")

// Import streams the plugin's records to emit. A whole import may take as
// long as ctx allows, but each record must arrive within the call timeout:
// a plugin that stops sending fails with an error matching
// context.DeadlineExceeded. A plugin that dies mid-stream fails with gRPC's
// Unavailable, and a stream that ends without its End record with
// ErrTruncated; in every case after the records that did arrive.
func (c *Client) Import(ctx context.Context, r Range, tenants []string, emit func(Record) error) error {
	idle := c.idle
	if idle <= 0 {
		idle = base.DefaultCallTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timedOut atomic.Bool
	timer := time.AfterFunc(idle, func() { timedOut.Store(true); cancel(errIdle) })
	defer timer.Stop()

	stream, err := c.rpc.Import(ctx, &pb.ImportRequest{
		Start: timestamppb.New(r.Start), End: timestamppb.New(r.End), Tenants: tenants,
	})
	if err != nil {
		return c.streamErr(err, &timedOut, idle, 0)
	}
	var n uint64
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w (after %d records)", ErrTruncated, n)
		}
		if err != nil {
			return c.streamErr(err, &timedOut, idle, n)
		}
		if !timer.Stop() { // fired while this record came in
			return c.streamErr(context.DeadlineExceeded, &timedOut, idle, n)
		}
		if end := msg.GetEnd(); end != nil {
			if end.GetRecords() != n {
				return fmt.Errorf("history importer: the plugin says it sent %d records, %d arrived", end.GetRecords(), n)
			}
			return nil
		}
		rec, err := FromProto(msg)
		if err != nil {
			return fmt.Errorf("history importer: record %d: %w", n+1, err)
		}
		n++
		if err := emit(rec); err != nil {
			return err
		}
		timer.Reset(idle)
	}
}

func (c *Client) streamErr(err error, timedOut *atomic.Bool, idle time.Duration, n uint64) error {
	if timedOut.Load() {
		return fmt.Errorf("history importer: %w: no record for %s (after %d records)", context.DeadlineExceeded, idle, n)
	}
	return fmt.Errorf("history importer: stream broken after %d records: %w", n, base.FromStatus(err))
}

// FromProto converts a wire record (not End) and validates it.
func FromProto(m *pb.ImportRecord) (Record, error) {
	var rec Record
	switch {
	case m.GetSeries() != nil:
		s := m.GetSeries()
		rec.Series = &SeriesChunk{Tenant: s.GetTenant(), Node: s.GetNode(), StepSeconds: s.GetStepSeconds(), Values: s.GetValuesPercent()}
		if s.GetStart() != nil {
			rec.Series.Start = s.GetStart().AsTime()
		}
	case m.GetReimage() != nil:
		e := m.GetReimage()
		rec.Reimage = &Reimage{Tenant: e.GetTenant(), Node: e.GetNode()}
		if e.GetTime() != nil {
			rec.Reimage.Time = e.GetTime().AsTime()
		}
	}
	return rec, rec.Validate()
}

// ToProto converts a record to the wire form.
func ToProto(r Record) *pb.ImportRecord {
	switch {
	case r.Series != nil:
		s := r.Series
		return &pb.ImportRecord{Record: &pb.ImportRecord_Series{Series: &pb.SeriesChunk{
			Tenant: s.Tenant, Node: s.Node, Start: timestamppb.New(s.Start), StepSeconds: s.StepSeconds, ValuesPercent: s.Values}}}
	case r.Reimage != nil:
		e := r.Reimage
		return &pb.ImportRecord{Record: &pb.ImportRecord_Reimage{Reimage: &pb.Reimage{
			Tenant: e.Tenant, Node: e.Node, Time: timestamppb.New(e.Time)}}}
	}
	return &pb.ImportRecord{}
}
