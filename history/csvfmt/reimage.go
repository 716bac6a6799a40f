package csvfmt

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
)

// ParseReimages reads tenant,node,timestamp rows.
func ParseReimages(r io.Reader) (map[history.TenantID][]history.Reimage, error) {
	cr, err := newReader(r)
	if err != nil {
		return nil, err
	}
	if err := expectHeader(cr, "tenant", "node", "timestamp"); err != nil {
		return nil, err
	}
	out := map[history.TenantID][]history.Reimage{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &LineError{line, err}
		}
		if len(rec) != 3 {
			return nil, &LineError{line, fmt.Errorf("%d fields, want 3 (tenant,node,timestamp)", len(rec))}
		}
		id, err := history.ParseTenantID(rec[0])
		if err != nil {
			return nil, &LineError{line, err}
		}
		node := strings.TrimSpace(rec[1])
		if node == "" {
			return nil, &LineError{line, errors.New("empty node")}
		}
		ts, err := ParseTime(rec[2])
		if err != nil {
			return nil, &LineError{line, err}
		}
		out[id] = append(out[id], history.Reimage{Node: node, Time: ts})
	}
}

// WriteReimages writes events in the reimage format, by tenant then time.
func WriteReimages(w io.Writer, events map[history.TenantID][]history.Reimage) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"tenant", "node", "timestamp"}); err != nil {
		return err
	}
	ids := make([]history.TenantID, 0, len(events))
	for id := range events {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		for _, r := range events[id] {
			if err := cw.Write([]string{id.String(), r.Node, r.Time.UTC().Format(time.RFC3339)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
